#!/usr/bin/env bash
# Community JobSet as a peer of ours on the local cluster (tools/cluster):
# built from the Go module proxy (sigs.k8s.io/jobset, the manager at the
# module's root and cmd/in-place-restart-agent), its images written by our
# images/cmd/build-image, its manifests rendered by kustomize from the
# module's own config/default with the InPlaceRestart feature gate on.
# Nothing of its code enters our tree or our go.mod.
#
#   tools/peers/jobset.sh build              prints the cache directory, which holds
#     manager, in-place-restart-agent        the binaries
#     jobset.tar, in-place-restart-agent.tar their images ($IMAGE_REPO/...:$VERSION)
#     jobset.yaml                            its manifests
#   tools/peers/jobset.sh install-community  replaces ours on the cluster with it
#   tools/peers/jobset.sh install-ours [install.yaml]
#                                            and back (default bazel-bin/images/install.yaml)
#   tools/peers/jobset.sh agent-image        prints its agent's image reference
#
# Both define jobsets.jobset.x-k8s.io, so one runs at a time. A switch
# removes the other's controller, webhook, RBAC, webhook configurations and
# certificate Secret, keeps the namespace jobset-system and the CRD (and so
# every JobSet, Job and Pod), and replaces the CRD with the new side's. The cluster is
# $KUBECONFIG, else the local one (tools/cluster/cluster.sh kubeconfig),
# whose containerd the images are imported into.
#
# The version is pinned here, in one place; a second build of the same
# version builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/peers/lib.sh

JOBSET_COMMUNITY_VERSION="${JOBSET_COMMUNITY_VERSION:-v0.12.0}"
IMAGE_REPO=localhost/jobset-community
MODULE=sigs.k8s.io/jobset
GATE=InPlaceRestart # pkg/features of the module: Alpha, off by default
# JOBSET_COMMUNITY_DIR: a cache directory built before (the e2e suite's
# specs run where Go and $HOME may not be).
OUT="${JOBSET_COMMUNITY_DIR:-$(peers_cache_root)/jobset-community/jobset-${JOBSET_COMMUNITY_VERSION}_kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)}"
MANAGER_IMAGE="${IMAGE_REPO}/jobset:${JOBSET_COMMUNITY_VERSION}"
AGENT_IMAGE="${IMAGE_REPO}/in-place-restart-agent:${JOBSET_COMMUNITY_VERSION}"
FIELD_MANAGER=jobset-peers
CRD=jobsets.jobset.x-k8s.io

build() {
  if [ -s "$OUT/jobset.yaml" ] && [ -s "$OUT/jobset.tar" ] && [ -s "$OUT/in-place-restart-agent.tar" ]; then
    echo "$OUT"
    return
  fi
  mkdir -p "$OUT"
  local work kustomize
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  kustomize=$(peers_kustomize)
  [ -x "$OUT/manager" ] || peers_go_build "$work/jobset" "$MODULE" "$JOBSET_COMMUNITY_VERSION" "$MODULE" "$OUT/manager"
  local src
  src=$(peers_module_dir "$MODULE" "$JOBSET_COMMUNITY_VERSION")
  [ -d "$src/cmd/in-place-restart-agent" ] || { peers_log "$MODULE $JOBSET_COMMUNITY_VERSION has no cmd/in-place-restart-agent"; exit 1; }
  grep -q "^[[:space:]]*${GATE} featuregate.Feature = \"${GATE}\"" "$src/pkg/features/features.go" ||
    { peers_log "$MODULE $JOBSET_COMMUNITY_VERSION has no feature gate $GATE"; exit 1; }
  [ -x "$OUT/in-place-restart-agent" ] || (cd "$work/jobset" && CGO_ENABLED=0 GOFLAGS=-mod=mod \
    go build -trimpath -ldflags="-s -w" -o "$OUT/in-place-restart-agent" "$MODULE/cmd/in-place-restart-agent")

  # Images as ours are built: FROM scratch, one static binary, nonroot
  # (the module's Dockerfiles use distroless/static:nonroot and the same paths).
  go build -o "$work/build-image" ./images/cmd/build-image
  "$work/build-image" -binary "$OUT/manager" -path /manager -reference "$MANAGER_IMAGE" \
    -label "org.opencontainers.image.version=$JOBSET_COMMUNITY_VERSION" -out "$OUT/jobset.tar"
  "$work/build-image" -binary "$OUT/in-place-restart-agent" -path /in-place-restart-agent -reference "$AGENT_IMAGE" \
    -label "org.opencontainers.image.version=$JOBSET_COMMUNITY_VERSION" -out "$OUT/in-place-restart-agent.tar"

  # Manifests from a writable copy of the module's config/: the feature
  # gate in its Configuration file, the image ours.
  cp -r "$src/config" "$work/config"
  chmod -R u+w "$work/config"
  local cfg="$work/config/components/manager/controller_manager_config.yaml"
  ! grep -q '^featureGates:' "$cfg" || { peers_log "$cfg already sets featureGates"; exit 1; }
  printf 'featureGates:\n  %s: true\n' "$GATE" >>"$cfg"
  (cd "$work/config/components/manager" && "$kustomize" edit set image "controller=$MANAGER_IMAGE")
  "$kustomize" build "$work/config/default" >"$work/jobset.yaml"
  if ! { grep -q "image: $MANAGER_IMAGE" "$work/jobset.yaml" && grep -q "  ${GATE}: true" "$work/jobset.yaml"; }; then
    peers_log "rendering did not take the image or the gate"
    exit 1
  fi
  mv "$work/jobset.yaml" "$OUT/jobset.yaml"
  echo "$OUT"
}

kubeconfig() {
  if [ -n "${KUBECONFIG:-}" ]; then echo "$KUBECONFIG"; else tools/cluster/cluster.sh kubeconfig; fi
}
kc() { kubectl --kubeconfig "$(kubeconfig)" "$@"; }

# The documents of a manifest that are (only_shared) or are not
# (without_shared) the CRD and the Namespace: a switch removes the latter
# of the side it leaves.
split_docs() { # want(0: not shared, 1: shared) manifest
  awk -v want="$1" 'function flush() { if (doc != "\n" && (doc ~ /\nkind: (CustomResourceDefinition|Namespace)\n/) == want) printf "---%s", doc; doc = "\n" }
       BEGIN { doc = "\n" }
       /^---/ { flush(); next }
       { doc = doc $0 "\n" }
       END { flush() }' "$2"
}
without_shared() { split_docs 0 "$1"; }

# The CRD is replaced whole, not applied: server-side apply keeps the fields
# another field manager set (the other side's status fields, its
# conversion webhook), so the CRD would be a union of both.
replace_crd() { # manifest
  local crd rv
  crd=$(mktemp)
  awk 'function flush() { if (doc ~ /\nkind: CustomResourceDefinition\n/) printf "%s", doc; doc = "\n" }
       BEGIN { doc = "\n" }
       /^---/ { flush(); next }
       { doc = doc $0 "\n" }
       END { flush() }' "$1" | sed '1{/^$/d}' >"$crd"
  grep -q "name: $CRD" "$crd" || { peers_log "no CRD $CRD in $1"; exit 1; }
  if rv=$(kc get crd "$CRD" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null); then
    sed -i "0,/^metadata:/s//metadata:\n  resourceVersion: \"$rv\"/" "$crd"
    kc replace -f "$crd" >/dev/null
  else
    kc create -f "$crd" >/dev/null
  fi
  rm -f "$crd"
}

import_images() { # tar...
  [ "$(kubeconfig)" = "$(tools/cluster/cluster.sh kubeconfig)" ] ||
    { peers_log "not the local cluster: its nodes must already hold $*"; return; }
  local dir="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}" tar
  for tar in "$@"; do
    tools/cluster/cluster.sh exec ctr --address "$dir/run/containerd.sock" -n k8s.io images import "$(realpath "$tar")" >/dev/null
    peers_log "imported $(basename "$tar")"
  done
}

switch_to() { # leaving-manifest leaving-deployment new-manifest deployment...
  local leaving=$1 leaving_deployment=$2 new=$3; shift 3
  local leave_file new_file
  leave_file=$(mktemp)
  new_file=$(mktemp)
  # Only when the other side runs: installing the side that is already
  # there re-applies it and keeps its certificate (deleting the Secret
  # under a running webhook left it serving a certificate of the old CA
  # until the kubelet refreshed the mounted Secret, minutes later).
  if kc -n jobset-system get deployment "$leaving_deployment" >/dev/null 2>&1; then
    without_shared "$leaving" >"$leave_file"
    kc delete --ignore-not-found --wait=true -f "$leave_file" >/dev/null
    # Both webhooks keep their certificate in this Secret, each in its own way.
    kc -n jobset-system delete secret jobset-webhook-server-cert --ignore-not-found >/dev/null
  fi
  replace_crd "$new"
  without_shared "$new" >"$new_file"
  kc apply --server-side --force-conflicts --field-manager="$FIELD_MANAGER" -f "$new_file" >/dev/null
  rm -f "$leave_file" "$new_file"
  local d
  for d in "$@"; do
    kc -n jobset-system rollout status "deployment/$d" --timeout=180s >/dev/null
  done
  # The webhook serves once a JobSet is admitted (dry run). A fresh
  # certificate reaches the webhook's Pods when the kubelet refreshes the
  # mounted Secret: up to about two minutes.
  local deadline=$((SECONDS + 300))
  local probe_err
  probe_err=$(mktemp)
  until kc create --dry-run=server -f - >/dev/null 2>"$probe_err" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: webhook-probe, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: x, imagePullPolicy: Never}]
YAML
  do
    [ $SECONDS -lt $deadline ] || { peers_log "the webhook does not admit JobSets after 300 s: $(cat "$probe_err")"; exit 1; }
    sleep 0.5
  done
}

ours_manifest() { realpath "${1:-bazel-bin/images/install.yaml}"; }

case "${1:-}" in
  build) build ;;
  agent-image) echo "$AGENT_IMAGE" ;;
  install-community)
    out=$(build)
    ours=$(ours_manifest "${2:-}")
    import_images "$out/jobset.tar" "$out/in-place-restart-agent.tar"
    kc create namespace jobset-system --dry-run=client -o yaml | kc apply -f - >/dev/null
    # Its manager injects the CA bundle of its conversion webhook once running.
    switch_to "$ours" jobset-webhook "$out/jobset.yaml" jobset-controller-manager
    peers_log "community JobSet ${JOBSET_COMMUNITY_VERSION} installed (feature gate ${GATE})" ;;
  install-ours)
    out=$(build)
    ours=$(ours_manifest "${2:-}")
    switch_to "$out/jobset.yaml" jobset-controller-manager "$ours" jobset-controller jobset-webhook
    peers_log "ours installed from $ours" ;;
  *) echo "usage: $0 build | install-community [install.yaml] | install-ours [install.yaml] | agent-image" >&2; exit 2 ;;
esac
