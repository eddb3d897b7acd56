#!/usr/bin/env bash
# Runs golangci-lint over the module with the repository's .golangci.yml.
# The linter is built from the Go module proxy (`go install`, nothing from
# a release page) once per (version, Go toolchain) and cached beside the
# other tools under ~/.cache/jobset-tools, so a second call builds nothing.
#
#   tools/lint/golangci-lint.sh [ARG ...]   golangci-lint ARG ... (default: run ./...)
#   tools/lint/golangci-lint.sh build       builds or reuses it, prints the binary's path
#
# The version is pinned here, in one place. A newer Go than the one
# golangci-lint was built with makes it refuse the module, so the cache is
# keyed by the toolchain too.
set -euo pipefail
cd "$(dirname "$0")/../.."

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
CACHE_ROOT="${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}"
OUT="${CACHE_ROOT}/golangci-lint/golangci-lint-${GOLANGCI_LINT_VERSION}_$(go env GOVERSION)"

build() {
  if [ -x "$OUT/golangci-lint" ]; then
    echo "$OUT/golangci-lint"
    return
  fi
  local start=$SECONDS gobin
  echo "golangci-lint: building ${GOLANGCI_LINT_VERSION} from the module proxy" >&2
  mkdir -p "$OUT"
  # Installed beside the final name, then renamed: an interrupted build
  # never leaves a binary that looks complete.
  gobin=$(mktemp -d "$OUT/.build.XXXXXX")
  # Outside any module, so that our go.mod plays no part in its build.
  (cd "$gobin" && GOBIN="$gobin" GOFLAGS=-trimpath CGO_ENABLED=0 \
    go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}")
  mv "$gobin/golangci-lint" "$OUT/golangci-lint"
  rm -rf "$gobin"
  echo "golangci-lint: built in $((SECONDS - start))s" >&2
  echo "$OUT/golangci-lint"
}

if [ "${1:-}" = build ]; then
  build
  exit
fi
bin=$(build)
[ $# -gt 0 ] || set -- run ./...
exec "$bin" "$@"
