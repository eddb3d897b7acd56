# shellcheck shell=bash
# Sourced by tools/demo.sh and tools/e2e.sh (from the root of the tree).
#
# cluster_with_images [COUNT] checks that the local cluster can run here
# when KUBECONFIG is unset (tools/cluster/preflight.sh), builds the images
# and install.yaml with Bazel, then sets $kubeconfig: $KUBECONFIG when set
# (that cluster must already hold the images), otherwise the local
# cluster's. Local clusters (COUNT of them, default 1) are brought up with
# the images imported and torn down when the calling script exits (unless
# KEEP_CLUSTER=1); $cluster_dirs holds their directories (see
# local_cluster_dirs), and $cluster_env the test environment of the
# suite's fault specs (cluster.sh's path and the first cluster's
# directory), which stop and start a cluster's processes.
source tools/bazel/bazel.sh

# local_cluster_dirs COUNT prints the directories of COUNT local clusters,
# one per line: JOBSET_CLUSTER_DIR's (default /tmp/jobset-cluster), then
# the same with -2, -3 ... appended.
local_cluster_dirs() {
  local first="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}" k
  echo "$first"
  for ((k = 2; k <= $1; k++)); do echo "${first}-${k}"; done
}

# on_local_clusters CMD... runs CMD once per directory of $cluster_dirs,
# with JOBSET_CLUSTER_DIR set to it and the k-th one's API server on the
# host at port JOBSET_CLUSTER_API_PORT (default 16443) + k - 1.
on_local_clusters() {
  local k
  for k in "${!cluster_dirs[@]}"; do
    JOBSET_CLUSTER_DIR="${cluster_dirs[$k]}" JOBSET_CLUSTER_API_PORT=$((${JOBSET_CLUSTER_API_PORT:-16443} + k)) "$@"
  done
}

# shellcheck disable=SC2034 # kubeconfig, cluster_dirs and cluster_env: what the caller reads
cluster_with_images() {
  local count=${1:-1}
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

  cluster_env=() cluster_dirs=()
  if [ -z "$kubeconfig" ]; then
    mapfile -t cluster_dirs < <(local_cluster_dirs "$count")
    [ "${KEEP_CLUSTER:-}" = 1 ] || trap 'on_local_clusters tools/cluster/cluster.sh down' EXIT
    on_local_clusters tools/cluster/cluster.sh up "${tars[@]}"
    kubeconfig=$(JOBSET_CLUSTER_DIR="${cluster_dirs[0]}" tools/cluster/cluster.sh kubeconfig)
    cluster_env=(--test_env=JOBSET_CLUSTER_SH="$PWD/tools/cluster/cluster.sh"
      --test_env=JOBSET_CLUSTER_DIR="${cluster_dirs[0]}")
  fi
}
