#!/usr/bin/env bash
# Builds Kueue for the local cluster from the Go module proxy, as
# tools/kubebin/build.sh builds Kubernetes: nothing comes from a registry.
#
#   tools/kueue/build.sh     prints the cache directory, which holds
#     kueue            the manager binary (sigs.k8s.io/kueue/cmd/kueue)
#     kueue.yaml       its manifests, rendered by kustomize from the
#                      module's own config/default (the JobSet integration
#                      is enabled there by default; the script checks it)
#
# The versions are pinned here, in one place (KUEUE_VERSION is the latest
# release the proxy serves; its listing is refused, a version is not).
# A second call with the same versions builds nothing.
set -euo pipefail

KUEUE_VERSION="${KUEUE_VERSION:-v0.19.2}"
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.2}" # v5.8.3 needs Go 1.27
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}"
OUT="${CACHE_ROOT}/kueue/kueue-${KUEUE_VERSION}_kustomize-${KUSTOMIZE_VERSION}_${GO_VERSION}"

log() { echo "kueue: $*" >&2; }

if [ -x "$OUT/kueue" ] && [ -s "$OUT/kueue.yaml" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Throwaway main modules, one per tool so that neither's requirements move
# the other's. Kueue's go.mod has no replace directives, so it builds as a
# dependency with its own requirements.
build() { # dir module version package output
  local dir=$1 module=$2 version=$3 pkg=$4 out=$5
  mkdir -p "$dir"
  printf 'module tools.local/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$(basename "$dir")" "$module" "$version" >"$dir/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >"$dir/tools.go"
  (
    cd "$dir"
    export GOFLAGS=-mod=mod CGO_ENABLED=0
    # Start from the tool's own go.sum: Kueue v0.19.2 requires
    # sigs.k8s.io/scheduler-library v0.1.0-alpha1, which the proxy serves
    # but the checksum database does not know (404); the hash Kueue's
    # go.sum carries (inside its verified module zip) vouches for it.
    cp "$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')/go.sum" go.sum
    chmod u+w go.sum
    local start=$SECONDS
    go mod tidy >/dev/null
    go build -trimpath -ldflags="-s -w" -o "$out" "$pkg"
    log "built $pkg $version in $((SECONDS - start))s"
  )
}
[ -x "$OUT/kueue.tmp" ] || build "$work/kueue" sigs.k8s.io/kueue "$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue "$OUT/kueue.tmp"
[ -x "$OUT/kustomize" ] || build "$work/kustomize" sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5 "$OUT/kustomize"

# Render from a writable copy of the module's config/ (the module cache is
# read-only, and kustomize edits nothing, but keeps paths relative).
src=$(cd "$work/kueue" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
cp -r "$src/config" "$work/config"
chmod -R u+w "$work/config"
grep -q '"jobset.x-k8s.io/jobset"' "$work/config/components/manager/controller_manager_config.yaml" || {
  log "the JobSet integration is not enabled in Kueue ${KUEUE_VERSION}'s config/components/manager/controller_manager_config.yaml"
  exit 1
}
"$OUT/kustomize" build "$work/config/default" >"$OUT/kueue.yaml.tmp"
mv "$OUT/kueue.yaml.tmp" "$OUT/kueue.yaml"
mv "$OUT/kueue.tmp" "$OUT/kueue"
echo "$OUT"
