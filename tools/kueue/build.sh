#!/usr/bin/env bash
# Builds Kueue for the local cluster from the Go module proxy, as
# tools/peers/jobset.sh builds community JobSet: nothing comes from a
# registry, nothing of Kueue's code enters our tree or our go.mod.
#
#   tools/kueue/build.sh [build]  prints the cache directory, which holds
#     kueue            the manager binary (sigs.k8s.io/kueue/cmd/kueue)
#     kueue.tar        its image ($IMAGE), written by images/cmd/build-image
#     kueue.yaml       its manifests, rendered by kustomize from the
#                      module's own config/default: the JobSet integration
#                      enabled (the default there; checked), the image
#                      ours with imagePullPolicy IfNotPresent, the webhook's
#                      certificate from Kueue's internal cert rotator (the
#                      default: internalCertManagement, no cert-manager);
#                      without the visibility API's APIServices (see below)
#   tools/kueue/build.sh install  builds, imports the image into the local
#                      cluster's containerd ($KUBECONFIG's nodes must hold
#                      it otherwise), applies kueue.yaml and waits until the
#                      manager is available and its webhook admits
#   tools/kueue/build.sh configure FILE  adds FILE's top-level fields to
#                      the running Kueue's Configuration (the ConfigMap
#                      kueue-manager-config; fields the module's default
#                      sets already are refused), restarts the manager
#                      and waits as install does: what a user does to turn
#                      on waitForPodsReady; uninstall drops it with the rest
#   tools/kueue/build.sh uninstall  removes all of it but the CRDs (and so
#                      Kueue's objects; its webhooks are gone, so nothing
#                      of Kueue stands in the way of creating a JobSet)
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
# JOBSET_KUEUE_DIR: a cache directory built before.
OUT="${JOBSET_KUEUE_DIR:-$(peers_cache_root)/kueue/kueue-${KUEUE_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)}"

log() { echo "kueue: $*" >&2; }

build() {
  if [ -s "$OUT/kueue.tar" ] && [ -s "$OUT/kueue.yaml" ]; then
    echo "$OUT"
    return
  fi
  mkdir -p "$OUT"
  local kustomize src
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  kustomize=$(peers_kustomize)
  # Kueue's go.sum is the starting point (peers_go_build): Kueue v0.19.2
  # requires sigs.k8s.io/scheduler-library v0.1.0-alpha1, which the proxy
  # serves but the checksum database does not know (404).
  [ -x "$OUT/kueue" ] || peers_go_build "$work/kueue" "$MODULE" "$KUEUE_VERSION" "$MODULE/cmd/kueue" "$OUT/kueue"
  src=$(peers_module_dir "$MODULE" "$KUEUE_VERSION")
  [ -d "$src/config/default" ] || { log "no config/default in $MODULE $KUEUE_VERSION"; exit 1; }

  # The image as ours are built: FROM scratch, one static binary, nonroot;
  # /manager is the command of the module's Deployment.
  go build -o "$work/build-image" ./images/cmd/build-image
  "$work/build-image" -binary "$OUT/kueue" -path /manager -reference "$IMAGE" \
    -label "org.opencontainers.image.version=$KUEUE_VERSION" -out "$OUT/kueue.tar.tmp"

  # Manifests from a writable copy of the module's config/.
  cp -r "$src/config" "$work/config"
  chmod -R u+w "$work/config"
  local cfg="$work/config/components/manager/controller_manager_config.yaml"
  grep -q '^  - "jobset.x-k8s.io/jobset"' "$cfg" ||
    { log "the JobSet integration is not enabled in Kueue ${KUEUE_VERSION}'s $cfg"; exit 1; }
  if ! { grep -q '^#internalCertManagement:' "$cfg" && ! grep -q '^internalCertManagement:' "$cfg"; }; then
    log "$cfg no longer leaves internalCertManagement at its default (enabled)"
    exit 1
  fi
  (cd "$work/config/components/manager" && "$kustomize" edit set image "controller=$IMAGE")
  sed -i 's/imagePullPolicy: Always/imagePullPolicy: IfNotPresent/' "$work/config/components/manager/manager.yaml"
  # Without Kueue's visibility APIServices: the local cluster's API server
  # has no aggregation layer (no front-proxy client certificate), so the
  # visibility server answers it 403, the APIServices stay unavailable, and
  # an unavailable APIService stops every namespace's deletion. The
  # visibility API (pending workloads on demand) is not what we test.
  "$kustomize" build "$work/config/default" | peers_without_kind APIService >"$work/kueue.yaml"
  ! grep -q '^kind: APIService' "$work/kueue.yaml" || { log "an APIService is left"; exit 1; }
  if ! { grep -q "image: $IMAGE" "$work/kueue.yaml" && grep -q 'imagePullPolicy: IfNotPresent' "$work/kueue.yaml" &&
    ! grep -q 'imagePullPolicy: Always' "$work/kueue.yaml"; }; then
    log "rendering did not take the image or its pull policy"
    exit 1
  fi
  mv "$work/kueue.yaml" "$OUT/kueue.yaml"
  mv "$OUT/kueue.tar.tmp" "$OUT/kueue.tar"
  echo "$OUT"
}

kubeconfig() {
  if [ -n "${KUBECONFIG:-}" ]; then echo "$KUBECONFIG"; else tools/cluster/cluster.sh kubeconfig; fi
}
kc() { kubectl --kubeconfig "$(kubeconfig)" "$@"; }

install() {
  local dir start=$SECONDS
  dir=$(build)
  if [ "$(kubeconfig)" = "$(tools/cluster/cluster.sh kubeconfig)" ]; then
    tools/cluster/cluster.sh exec ctr --address "${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}/run/containerd.sock" \
      -n k8s.io images import "$(realpath "$dir/kueue.tar")" >/dev/null
    log "imported $IMAGE"
  else
    log "not the local cluster: its nodes must already hold $IMAGE"
  fi
  kc apply --server-side --force-conflicts --field-manager=jobset-e2e -f "$dir/kueue.yaml" >/dev/null
  wait_serving
  log "installed Kueue $KUEUE_VERSION in $((SECONDS - start))s"
}

# wait_serving waits until the manager is available and its webhooks admit.
wait_serving() {
  kc -n kueue-system rollout status deployment/kueue-controller-manager --timeout=300s >/dev/null || {
    diagnose
    exit 1
  }
  # The manager is available once its certificate is in place; its
  # webhooks serve once they admit an object (dry run).
  local rf
  rf=$(mktemp)
  printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: kueue-install-probe\n' >"$rf"
  for _ in $(seq 1 120); do
    if kc create --dry-run=server -f "$rf" >/dev/null 2>&1; then
      rm -f "$rf"
      return
    fi
    sleep 1
  done
  rm -f "$rf"
  log "Kueue's webhook did not admit a ResourceFlavor within 120 s"
  diagnose
  exit 1
}

configure() {
  local file="$1" current merged key start=$SECONDS
  [ -s "$file" ] || { log "configure: $file is empty or missing"; exit 2; }
  current=$(mktemp)
  merged=$(mktemp)
  kc -n kueue-system get configmap kueue-manager-config -o jsonpath='{.data.controller_manager_config\.yaml}' >"$current"
  [ -s "$current" ] || { log "configure: Kueue is not installed (no kueue-manager-config)"; exit 1; }
  while read -r key; do
    if grep -q "^$key" "$current"; then
      log "configure: Kueue's configuration sets ${key%:} already; $file may only add fields"
      exit 2
    fi
  done < <(grep -oE '^[A-Za-z][A-Za-z0-9]*:' "$file")
  { cat "$current"; echo; cat "$file"; } >"$merged"
  kc -n kueue-system create configmap kueue-manager-config --from-file=controller_manager_config.yaml="$merged" \
    --dry-run=client -o yaml | kc apply --server-side --force-conflicts --field-manager=jobset-e2e -f - >/dev/null
  rm -f "$current" "$merged"
  # The manager reads its configuration once, at start.
  kc -n kueue-system rollout restart deployment/kueue-controller-manager >/dev/null
  wait_serving
  log "configured Kueue with $(grep -oE '^[A-Za-z][A-Za-z0-9]*' "$file" | paste -sd, -) in $((SECONDS - start))s"
}

diagnose() {
  kc -n kueue-system get pods -o wide >&2 || true
  kc -n kueue-system describe pods >&2 || true
  kc -n kueue-system logs deployment/kueue-controller-manager --tail=60 >&2 || true
}

uninstall() {
  local dir docs
  dir=$(build)
  docs=$(mktemp)
  # Every document of kueue.yaml but the CustomResourceDefinitions.
  peers_without_kind CustomResourceDefinition <"$dir/kueue.yaml" >"$docs"
  kc delete --ignore-not-found --wait=true -f "$docs" >/dev/null
  rm -f "$docs"
  log "removed Kueue $KUEUE_VERSION (its CRDs stay)"
}

case "${1:-build}" in
  build) build ;;
  install) install ;;
  configure) [ $# -eq 2 ] || { echo "usage: $0 configure FILE" >&2; exit 2; }; configure "$2" ;;
  uninstall) uninstall ;;
  *) echo "usage: $0 [build|install|configure FILE|uninstall]" >&2; exit 2 ;;
esac
