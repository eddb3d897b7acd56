#!/usr/bin/env bash
# Runs the end-to-end suite on kind, for machines with Docker (it cannot run
# on our CI machine, which has no Docker and no registry): creates a kind
# cluster of Kubernetes >= 1.36, loads the images Bazel built, and runs
# tools/e2e.sh against it. KIND_NODE_IMAGE picks the node image.
#
#   e2e/kind/run.sh            create, test, delete
#   KEEP_CLUSTER=1 e2e/kind/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bazel/bazel.sh

cluster="${KIND_CLUSTER_NAME:-jobset-e2e}"
node_image="${KIND_NODE_IMAGE:-kindest/node:v1.36.0}"
images=(jobset-controller jobset-webhook jobset-agent e2e-worker)

bazel_cmd build "${images[@]/#///images:}" //images:install
kind create cluster --name "$cluster" --image "$node_image" --wait 120s
[ "${KEEP_CLUSTER:-}" = 1 ] || trap 'kind delete cluster --name "$cluster"' EXIT
for i in "${images[@]}"; do
  kind load image-archive --name "$cluster" "bazel-bin/images/$i.tar"
done
kubeconfig=$(mktemp)
kind get kubeconfig --name "$cluster" >"$kubeconfig"
KUBECONFIG="$kubeconfig" tools/e2e.sh
