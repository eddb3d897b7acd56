#!/usr/bin/env bash
# Builds Kueue from the Go module proxy, for the e2e specs that install it
# (tools/testing/peers).
#
#   tools/peers/kueue.sh [build]  prints the build directory, which holds
#     kueue                 the manager binary (sigs.k8s.io/kueue/cmd/kueue)
#     kueue.tar             its image ($IMAGE)
#     kueue.kustomize.yaml  its manifests, rendered by kustomize from the
#                           module's own config/default with that image
#
# The version is pinned here, in one place (KUEUE_VERSION is the latest
# release the proxy serves; its listing is refused, a version is not).
# A second build with the same versions builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/peers/lib.sh

KUEUE_VERSION="${KUEUE_VERSION:-v0.19.2}"
MODULE=sigs.k8s.io/kueue
IMAGE="localhost/kueue/kueue:${KUEUE_VERSION}"
OUT="$(peers_cache_root)/kueue/kueue-${KUEUE_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)"

[ "${1:-build}" = build ] || { echo "usage: $0 [build]" >&2; exit 2; }
if [ -s "$OUT/kueue.tar" ] && [ -s "$OUT/kueue.kustomize.yaml" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kustomize=$(peers_kustomize)
# Kueue's go.sum is the starting point (peers_go_build): Kueue v0.19.2
# requires sigs.k8s.io/scheduler-library v0.1.0-alpha1, which the proxy
# serves but the checksum database does not know (404).
[ -x "$OUT/kueue" ] || peers_go_build "$work/kueue" "$MODULE" "$KUEUE_VERSION" "$MODULE/cmd/kueue" "$OUT/kueue"
# /manager is the command of the module's Deployment.
peers_image "$OUT/kueue" /manager "$IMAGE" "$KUEUE_VERSION" "$OUT/kueue.tar"
config=$(peers_config "$MODULE" "$KUEUE_VERSION" config "$work")
(cd "$config/components/manager" && "$kustomize" edit set image "controller=$IMAGE")
"$kustomize" build "$config/default" >"$work/kueue.kustomize.yaml"
mv "$work/kueue.kustomize.yaml" "$OUT/kueue.kustomize.yaml"
echo "$OUT"
