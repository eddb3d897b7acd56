#!/usr/bin/env bash
# Runs a Go test binary (first argument) with the remaining arguments; used
# by ginkgo_focused_tests.
set -euo pipefail
exec "$1" "${@:2}"
