#!/usr/bin/env bash
# Builds Helm from the Go module proxy and prints the binary's path:
#
#   tools/helm/build.sh
#
# The chart's tests (charts/jobset: lint, template, a server-side dry run,
# the e2e install) run this Helm, found through $HELM (tools/test.sh and
# tools/e2e.sh export it). Helm is a tool of ours, not a dependency: it is
# built in a throwaway main module (tools/peers/lib.sh), so none of its
# modules enters our go.mod or deps.bzl. The version is pinned here, in one
# place; a second call with the same versions builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/peers/lib.sh

HELM_VERSION="${HELM_VERSION:-v4.3.1}"
MODULE=helm.sh/helm/v4
OUT="$(peers_cache_root)/helm/helm-${HELM_VERSION}_$(go env GOVERSION)"

if [ ! -x "$OUT/helm" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$OUT"
  peers_go_build "$work/helm" "$MODULE" "$HELM_VERSION" "$MODULE/cmd/helm" "$OUT/helm"
fi
echo "$OUT/helm"
