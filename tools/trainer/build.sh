#!/usr/bin/env bash
# Builds Kubeflow Trainer v2 for the local cluster from the Go module proxy,
# as tools/kueue/build.sh builds Kueue: nothing comes from a registry,
# nothing of Trainer's code enters our tree or our go.mod.
#
#   tools/trainer/build.sh [build]  prints the cache directory, which holds
#     trainer-controller-manager  the manager binary
#                      (github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager)
#     trainer.tar      its image ($IMAGE), written by images/cmd/build-image
#     trainer.yaml     its manifests, rendered by kustomize from the module's
#                      own manifests/overlays/manager (its CRDs, manager,
#                      RBAC and webhooks) WITHOUT the community JobSet that
#                      overlay bundles (manifests/third-party/jobset: ours is
#                      installed already); the image ours with
#                      imagePullPolicy IfNotPresent; the webhook's
#                      certificate from Trainer's internal cert rotator (its
#                      configuration's certManagement.enable: checked)
#   tools/trainer/build.sh install  builds, imports the image into the local
#                      cluster's containerd ($KUBECONFIG's nodes must hold it
#                      otherwise), applies trainer.yaml and waits until the
#                      manager is available and its webhook admits
#   tools/trainer/build.sh uninstall  removes all of it but the CRDs (delete
#                      TrainJobs and training runtimes first: Trainer's
#                      finalizers on them need its manager)
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
NAMESPACE=kubeflow-system
DEPLOYMENT=kubeflow-trainer-controller-manager
# JOBSET_TRAINER_DIR: a cache directory built before (the e2e specs run
# where Go and $HOME may not be).
OUT="${JOBSET_TRAINER_DIR:-$(peers_cache_root)/trainer/trainer-${TRAINER_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)}"

log() { echo "trainer: $*" >&2; }

build() {
  if [ -s "$OUT/trainer.tar" ] && [ -s "$OUT/trainer.yaml" ]; then
    echo "$OUT"
    return
  fi
  mkdir -p "$OUT"
  local kustomize src
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  kustomize=$(peers_kustomize)
  [ -x "$OUT/trainer-controller-manager" ] ||
    peers_go_build "$work/trainer" "$MODULE" "$TRAINER_VERSION" "$PACKAGE" "$OUT/trainer-controller-manager"
  src=$(peers_module_dir "$MODULE" "$TRAINER_VERSION")
  [ -d "$src/manifests/overlays/manager" ] || { log "no manifests/overlays/manager in $MODULE $TRAINER_VERSION"; exit 1; }

  # The image as ours are built: FROM scratch, one static binary, nonroot;
  # /manager is the entrypoint of Trainer's own image (its Deployment gives
  # only args).
  go build -o "$work/build-image" ./images/cmd/build-image
  "$work/build-image" -binary "$OUT/trainer-controller-manager" -path /manager -reference "$IMAGE" \
    -label "org.opencontainers.image.version=$TRAINER_VERSION" -out "$OUT/trainer.tar.tmp"

  # Manifests from a writable copy of the module's manifests/.
  cp -r "$src/manifests" "$work/manifests"
  chmod -R u+w "$work/manifests"
  local overlay="$work/manifests/overlays/manager"
  local cfg="$work/manifests/base/manager/controller_manager_config.yaml"
  local manager="$work/manifests/base/manager/manager.yaml"
  # The overlay bundles community JobSet (a remote resource, and a second
  # JobSet controller): ours is the JobSet of the cluster.
  grep -q '^  - \.\./\.\./third-party/jobset' "$overlay/kustomization.yaml" ||
    { log "$overlay/kustomization.yaml no longer lists ../../third-party/jobset as expected"; exit 1; }
  sed -i '/^  - \.\.\/\.\.\/third-party\//d' "$overlay/kustomization.yaml"
  ! grep -q 'third-party\|https://' "$overlay/kustomization.yaml" ||
    { log "$overlay/kustomization.yaml still has a remote or third-party resource"; exit 1; }
  # The webhook's certificate: the internal rotator (cert-controller) writes
  # it into the Secret the overlay creates empty, and the CA bundle into
  # Trainer's webhook configurations; no cert-manager.
  grep -A1 '^certManagement:' "$cfg" | grep -q '^  enable: true' ||
    { log "$cfg no longer enables certManagement (Trainer's internal cert rotator)"; exit 1; }
  grep -q 'name: kubeflow-trainer-webhook-cert' "$overlay/kustomization.yaml" ||
    { log "$overlay/kustomization.yaml no longer creates the webhook's certificate Secret"; exit 1; }
  (cd "$overlay" && "$kustomize" edit set image "ghcr.io/kubeflow/trainer/trainer-controller-manager=$IMAGE")
  grep -q '^          image: ghcr.io/kubeflow/trainer/trainer-controller-manager$' "$manager" ||
    { log "$manager: the manager's image line is not where expected"; exit 1; }
  sed -i 's|^          image: ghcr.io/kubeflow/trainer/trainer-controller-manager$|&\n          imagePullPolicy: IfNotPresent|' "$manager"
  "$kustomize" build "$overlay" >"$work/trainer.yaml"
  for kind in Deployment CustomResourceDefinition ValidatingWebhookConfiguration MutatingWebhookConfiguration; do
    grep -q "^kind: $kind$" "$work/trainer.yaml" || { log "rendered manifests have no $kind"; exit 1; }
  done
  ! grep -q 'jobsets.jobset.x-k8s.io\|name: jobset-' "$work/trainer.yaml" ||
    { log "rendered manifests still hold community JobSet"; exit 1; }
  if ! { grep -q "image: $IMAGE$" "$work/trainer.yaml" && grep -q 'imagePullPolicy: IfNotPresent' "$work/trainer.yaml" &&
    [ "$(grep -cE '^ +(- )?image: [^ ]' "$work/trainer.yaml")" = 1 ]; }; then
    log "rendering did not take the image or its pull policy"
    exit 1
  fi
  mv "$work/trainer.yaml" "$OUT/trainer.yaml"
  mv "$OUT/trainer.tar.tmp" "$OUT/trainer.tar"
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
      -n k8s.io images import "$(realpath "$dir/trainer.tar")" >/dev/null
    log "imported $IMAGE"
  else
    log "not the local cluster: its nodes must already hold $IMAGE"
  fi
  kc apply --server-side --force-conflicts --field-manager=jobset-e2e -f "$dir/trainer.yaml" >/dev/null
  kc -n "$NAMESPACE" rollout status "deployment/$DEPLOYMENT" --timeout=300s >/dev/null || {
    diagnose
    exit 1
  }
  # The manager is ready once its certificate is in place and its webhook
  # server started; its webhooks serve once they admit an object (dry run:
  # a ClusterTrainingRuntime goes through its validating webhook).
  local probe
  probe=$(mktemp)
  cat >"$probe" <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: trainer-install-probe
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                restartPolicy: Never
                containers:
                - name: node
                  image: probe
EOF
  for _ in $(seq 1 120); do
    if kc create --dry-run=server -f "$probe" >/dev/null 2>&1; then
      rm -f "$probe"
      log "installed Trainer $TRAINER_VERSION in $((SECONDS - start))s"
      return
    fi
    sleep 1
  done
  kc create --dry-run=server -f "$probe" >&2 || true
  rm -f "$probe"
  log "Trainer's webhook did not admit a ClusterTrainingRuntime within 120 s"
  diagnose
  exit 1
}

diagnose() {
  kc -n "$NAMESPACE" get pods -o wide >&2 || true
  kc -n "$NAMESPACE" describe pods >&2 || true
  kc -n "$NAMESPACE" logs "deployment/$DEPLOYMENT" --tail=60 >&2 || true
}

uninstall() {
  local dir docs
  dir=$(build)
  docs=$(mktemp)
  peers_without_kind CustomResourceDefinition <"$dir/trainer.yaml" >"$docs"
  kc delete --ignore-not-found --wait=true -f "$docs" >/dev/null
  rm -f "$docs"
  log "removed Trainer $TRAINER_VERSION (its CRDs stay)"
}

case "${1:-build}" in
  build) build ;;
  install) install ;;
  uninstall) uninstall ;;
  *) echo "usage: $0 [build|install|uninstall]" >&2; exit 2 ;;
esac
