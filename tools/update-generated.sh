#!/usr/bin/env bash
# Regenerates every generated file: deepcopy functions and the CRD
# (controller-gen), go.mod/go.sum, deps.bzl (the Go repositories of the
# Bazel 4 path) and the BUILD files (Gazelle). //tools/codegen:codegen_test
# and tools/verify-generated.sh fail when any of them is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bazel/bazel.sh

tools/codegen/generate.sh .
go mod tidy
gazelle_update_repos "$PWD"
gazelle_cmd
