# shellcheck shell=bash
# Sourced by tools/demo.sh and tools/e2e.sh (from the root of the tree).
#
# cluster_with_images checks that the local cluster can run here when
# KUBECONFIG is unset (tools/cluster/preflight.sh), builds the images and
# install.yaml with Bazel, then
# sets $kubeconfig: $KUBECONFIG when set (that cluster must already hold
# the images), otherwise the local cluster, brought up with the images
# imported and torn down when the calling script exits (unless
# KEEP_CLUSTER=1); then $cluster_env also holds the test environment of
# the suite's control-plane fault specs (cluster.sh's path and directory),
# which stop and start that cluster's processes.
source tools/bazel/bazel.sh

# shellcheck disable=SC2034 # kubeconfig and cluster_env: what the caller reads
cluster_with_images() {
  local images=(jobset-controller jobset-webhook jobset-agent e2e-worker) targets=() tars=() i
  for i in "${images[@]}"; do
    targets+=("//images:$i")
    tars+=("$PWD/bazel-bin/images/$i.tar")
  done
  kubeconfig="${KUBECONFIG:-}"
  # The local cluster's requirements are checked before the build, so that
  # a machine that cannot run it says so at once.
  if [ -z "$kubeconfig" ]; then
    tools/cluster/preflight.sh || exit 1
  fi
  echo "building the images and install.yaml (bazel build)" >&2
  bazel_cmd build "${targets[@]}" //images:install >&2

  cluster_env=()
  if [ -z "$kubeconfig" ]; then
    [ "${KEEP_CLUSTER:-}" = 1 ] || trap 'tools/cluster/cluster.sh down' EXIT
    tools/cluster/cluster.sh up "${tars[@]}"
    kubeconfig=$(tools/cluster/cluster.sh kubeconfig)
    cluster_env=(--test_env=JOBSET_CLUSTER_SH="$PWD/tools/cluster/cluster.sh"
      --test_env=JOBSET_CLUSTER_DIR="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}")
  fi
}
