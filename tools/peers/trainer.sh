#!/usr/bin/env bash
# Builds Kubeflow Trainer v2 from the Go module proxy, for the e2e specs
# that install it (tools/testing/peers).
#
#   tools/peers/trainer.sh [build]  prints the build directory, which holds
#     trainer-controller-manager  the manager binary
#                           (github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager)
#     trainer.tar           its image ($IMAGE)
#     trainer.kustomize.yaml  its manifests, rendered by kustomize from the
#                           module's own manifests/overlays/manager (its
#                           CRDs, manager, RBAC and webhooks) with that image,
#                           WITHOUT the community JobSet that overlay bundles
#                           (manifests/third-party/jobset, a remote resource
#                           and a second JobSet controller: ours is the
#                           cluster's JobSet)
#
# The version is pinned here, in one place (TRAINER_VERSION is the latest
# release the proxy serves). A second build with the same versions builds
# nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/peers/lib.sh

TRAINER_VERSION="${TRAINER_VERSION:-v2.3.0}"
MODULE=github.com/kubeflow/trainer/v2
PACKAGE="$MODULE/cmd/trainer-controller-manager"
IMAGE="localhost/kubeflow/trainer-controller-manager:${TRAINER_VERSION}"
OUT="$(peers_cache_root)/trainer/trainer-${TRAINER_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)"

[ "${1:-build}" = build ] || { echo "usage: $0 [build]" >&2; exit 2; }
if [ -s "$OUT/trainer.tar" ] && [ -s "$OUT/trainer.kustomize.yaml" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kustomize=$(peers_kustomize)
[ -x "$OUT/trainer-controller-manager" ] ||
  peers_go_build "$work/trainer" "$MODULE" "$TRAINER_VERSION" "$PACKAGE" "$OUT/trainer-controller-manager"
# /manager is the entrypoint of Trainer's own image (its Deployment gives
# only args).
peers_image "$OUT/trainer-controller-manager" /manager "$IMAGE" "$TRAINER_VERSION" "$OUT/trainer.tar"
manifests=$(peers_config "$MODULE" "$TRAINER_VERSION" manifests "$work")
(
  cd "$manifests/overlays/manager"
  "$kustomize" edit remove resource ../../third-party/jobset
  "$kustomize" edit set image "ghcr.io/kubeflow/trainer/trainer-controller-manager=$IMAGE"
)
"$kustomize" build "$manifests/overlays/manager" >"$work/trainer.kustomize.yaml"
mv "$work/trainer.kustomize.yaml" "$OUT/trainer.kustomize.yaml"
echo "$OUT"
