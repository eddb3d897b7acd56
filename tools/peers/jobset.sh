#!/usr/bin/env bash
# Builds community JobSet from the Go module proxy (sigs.k8s.io/jobset, the
# manager at the module's root and cmd/in-place-restart-agent), for the
# migration specs and benchmark B1, which install it in place of ours and
# ours again after (tools/testing/peers).
#
#   tools/peers/jobset.sh [build]  prints the build directory, which holds
#     manager, in-place-restart-agent        the binaries
#     jobset.tar, in-place-restart-agent.tar their images ($IMAGE_REPO/...:$VERSION)
#     jobset.kustomize.yaml                  its manifests, rendered by
#                                            kustomize from the module's own
#                                            config/default with its image
#   tools/peers/jobset.sh agent-image        prints its agent's image reference
#
# The version is pinned here, in one place; a second build of the same
# version builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/peers/lib.sh

JOBSET_COMMUNITY_VERSION="${JOBSET_COMMUNITY_VERSION:-v0.12.0}"
IMAGE_REPO=localhost/jobset-community
MODULE=sigs.k8s.io/jobset
# pkg/features of the module: Alpha, off by default; tools/testing/peers
# turns InPlaceRestart on in the manager's Configuration, and the others
# for the differential specs that ask for them (peers.WithFeatureGates).
GATES="InPlaceRestart RestartJob ElasticJobSet"
OUT="$(peers_cache_root)/jobset-community/jobset-${JOBSET_COMMUNITY_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)"
MANAGER_IMAGE="${IMAGE_REPO}/jobset:${JOBSET_COMMUNITY_VERSION}"
AGENT_IMAGE="${IMAGE_REPO}/in-place-restart-agent:${JOBSET_COMMUNITY_VERSION}"

build() {
  if [ -s "$OUT/jobset.kustomize.yaml" ] && [ -s "$OUT/jobset.tar" ] && [ -s "$OUT/in-place-restart-agent.tar" ]; then
    echo "$OUT"
    return
  fi
  mkdir -p "$OUT"
  local work kustomize src config
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  kustomize=$(peers_kustomize)
  src=$(peers_module_dir "$MODULE" "$JOBSET_COMMUNITY_VERSION")
  [ -d "$src/cmd/in-place-restart-agent" ] || { peers_log "$MODULE $JOBSET_COMMUNITY_VERSION has no cmd/in-place-restart-agent"; exit 1; }
  local gate
  for gate in $GATES; do
    grep -q "^[[:space:]]*${gate} featuregate.Feature = \"${gate}\"" "$src/pkg/features/features.go" ||
      { peers_log "$MODULE $JOBSET_COMMUNITY_VERSION has no feature gate $gate"; exit 1; }
  done
  [ -x "$OUT/manager" ] || peers_go_build "$work/jobset" "$MODULE" "$JOBSET_COMMUNITY_VERSION" "$MODULE" "$OUT/manager"
  [ -x "$OUT/in-place-restart-agent" ] || peers_go_build "$work/agent" "$MODULE" "$JOBSET_COMMUNITY_VERSION" \
    "$MODULE/cmd/in-place-restart-agent" "$OUT/in-place-restart-agent"
  # The module's Dockerfiles use distroless/static:nonroot and the same paths.
  peers_image "$OUT/manager" /manager "$MANAGER_IMAGE" "$JOBSET_COMMUNITY_VERSION" "$OUT/jobset.tar"
  peers_image "$OUT/in-place-restart-agent" /in-place-restart-agent "$AGENT_IMAGE" "$JOBSET_COMMUNITY_VERSION" \
    "$OUT/in-place-restart-agent.tar"
  config=$(peers_config "$MODULE" "$JOBSET_COMMUNITY_VERSION" config "$work")
  (cd "$config/components/manager" && "$kustomize" edit set image "controller=$MANAGER_IMAGE")
  "$kustomize" build "$config/default" >"$work/jobset.kustomize.yaml"
  mv "$work/jobset.kustomize.yaml" "$OUT/jobset.kustomize.yaml"
  echo "$OUT"
}

case "${1:-build}" in
  build) build ;;
  agent-image) echo "$AGENT_IMAGE" ;;
  *) echo "usage: $0 [build] | agent-image" >&2; exit 2 ;;
esac
