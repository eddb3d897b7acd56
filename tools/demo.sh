#!/usr/bin/env bash
# The README's main command: a real in-place group restart, with its
# timeline. Builds the images and install.yaml (Bazel), brings up the local
# cluster built from source with the images imported (or uses $KUBECONFIG
# when set, which must already hold the images), deploys install.yaml,
# runs docs/examples/story1-inplace.yaml, makes one worker fail and prints
# how the group restarts in place. The local cluster is torn down at the
# end unless KEEP_CLUSTER=1.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bazel/bazel.sh

images=(jobset-controller jobset-webhook jobset-agent e2e-worker)
targets=() tars=()
for i in "${images[@]}"; do
  targets+=("//images:$i")
  tars+=("$PWD/bazel-bin/images/$i.tar")
done
echo "building the images and install.yaml (bazel build)" >&2
bazel_cmd build "${targets[@]}" //images:install 2>/dev/null

kubeconfig="${KUBECONFIG:-}"
if [ -z "$kubeconfig" ]; then
  [ "${KEEP_CLUSTER:-}" = 1 ] || trap 'tools/cluster/cluster.sh down' EXIT
  tools/cluster/cluster.sh up "${tars[@]}"
  kubeconfig=$(tools/cluster/cluster.sh kubeconfig)
fi
go run ./tools/demo -kubeconfig "$kubeconfig" -install bazel-bin/images/install.yaml
