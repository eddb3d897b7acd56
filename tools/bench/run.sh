#!/usr/bin/env bash
# Benchmarks B1-B4 (docs/benchmark-definitions.md), in one command. Numbers are
# measured, never judged: nothing here passes or fails a test. Progress goes
# to stderr; stdout ends with every summary line ("bench=... key=value ...").
#
#   tools/bench/run.sh             all of them (B2 alone takes over an hour on
#                                  2 cores at its default sizes; see B2_PODS)
#   BENCH=B4,B2 tools/bench/run.sh  a selection
#
# Knobs: B1_WORKERS (4,8,16), B1_RUNS (5), B1_STRATEGIES
# (InPlaceRestart,CommunityInPlaceRestart,Recreate), B1_SINGLE_POD_FLOOR
# (true: ours with one worker too, the floor each W's ratio is given to), B2_PODS (1000,5000,10000),
# B2_RUNS (3: group restarts and I/O floors per size), B2_RECREATE=0 (skips
# B2's Recreate floor), B2_AGENT_FLOWSCHEMA=1 (the agents in a priority level
# of their own, see tools/bench/coordination/flowschema.go), B2_AGENT_START
# (a duration, 500ms say: how long each kubelet stand-in takes to run a
# restarted agent again; by default at once, the kubelet's own work on
# containers being B1's).
# B1 and B3 need root for the local cluster (tools/cluster), or KUBECONFIG
# set to a cluster holding the images with install.yaml deployed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/cluster/lib.sh

selected="${BENCH:-B1,B2,B3,B4}"
want() { [[ ",$selected," == *",$1,"* ]]; }
lines=$(mktemp)
scratch=$(mktemp -d)
trap 'rm -rf "$lines" "$scratch"' EXIT
record() { tee -a "$lines"; }

if want B4; then
  echo "B4: Go benchmarks of the epoch decision and of a reconcile" >&2
  # BenchmarkX/pods=1000-2   1234   56789 ns/op   1024 B/op   12 allocs/op
  go test -run '^$' -bench . -benchmem ./controllers/inplace ./controllers/jobsetcontroller |
    awk '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name);
      printf "bench=go name=%s ms_op=%.4f bytes_op=%s allocs_op=%s\n", name, $3/1e6, $5, $7 }' | record
fi

if want B2; then
  echo "B2: coordination at scale on envtest's apiserver, with the controller binary" >&2
  KUBEBUILDER_ASSETS=$(tools/kubebin/build.sh etcd kube-apiserver kubectl)
  export KUBEBUILDER_ASSETS
  go build -o "$scratch/jobset-controller" ./controllers/cmd/jobset-controller
  args=()
  if [ "${B2_RECREATE:-1}" = 1 ]; then
    kube=$(tools/kubebin/build.sh kube-controller-manager kube-scheduler)
    args=(-kube-controller-manager "$kube/kube-controller-manager" -kube-scheduler "$kube/kube-scheduler")
  fi
  if [ "${B2_AGENT_FLOWSCHEMA:-0}" = 1 ]; then
    args+=(-agent-flow-schema)
  fi
  if [ -n "${B2_AGENT_START:-}" ]; then
    args+=(-agent-start "$B2_AGENT_START")
  fi
  go run ./tools/bench/coordination -pods "${B2_PODS:-1000,5000,10000}" -runs "${B2_RUNS:-3}" -controller "$scratch/jobset-controller" \
    "${args[@]}" | record
fi

if want B1 || want B3; then
  cluster_with_images
  if want B3; then
    echo "B3: agent footprint" >&2
    go run ./tools/bench/footprint -kubeconfig "$kubeconfig" -binary bazel-bin/images/jobset-agent_binary_/jobset-agent_binary \
      -image bazel-bin/images/jobset-agent.tar -install bazel-bin/images/install.yaml | record
  fi
  if want B1; then
    echo "B1: group restart on the real kubelet: ours in place, community JobSet in place, Recreate" >&2
    # Community JobSet (tools/peers/jobset.sh) replaces ours for its part
    # of the run and is replaced by ours again at its end; its images go
    # into the local cluster (another cluster's nodes must hold them).
    community=$(tools/peers/jobset.sh build)
    if [ ${#cluster_env[@]} -gt 0 ]; then tools/cluster/cluster.sh import "$community"/*.tar; fi
    KUBECONFIG="$kubeconfig" go run ./tools/bench/grouprestart -kubeconfig "$kubeconfig" -install bazel-bin/images/install.yaml \
      -workers "${B1_WORKERS:-4,8,16}" -runs "${B1_RUNS:-5}" -single-pod-floor="${B1_SINGLE_POD_FLOOR:-true}" -strategies "${B1_STRATEGIES:-InPlaceRestart,CommunityInPlaceRestart,Recreate}" \
      -community "$community" -community-agent-image "$(tools/peers/jobset.sh agent-image)" | record
  fi
fi

echo >&2
echo "summary:" >&2
grep '^bench=' "$lines" | grep -v '^bench=group-restart-run '
