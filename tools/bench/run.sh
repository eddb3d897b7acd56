#!/usr/bin/env bash
# Benchmarks B1-B5 (docs/benchmark-definitions.md), in one command. Numbers are
# measured, never judged: nothing here passes or fails a test. Progress goes
# to stderr; stdout ends with every summary line ("bench=... key=value ...").
#
#   tools/bench/run.sh             all of them (B2 alone takes over an hour on
#                                  2 cores at its default sizes; see B2_PODS)
#   BENCH=B5 tools/bench/run.sh    node loss alone (about 30 minutes)
#   BENCH=B4,B2 tools/bench/run.sh  a selection
#
# Knobs: B1_WORKERS (4,8,16), B1_RUNS (5), B1_STRATEGIES
# (InPlaceRestart/process,InPlaceRestart/pod,CommunityInPlaceRestart,Recreate:
# both restart tiers of ours under agent injection, the process tier
# restarting the worker's process under the worker wrapper and the Pod
# tier every container, beside community JobSet in place and Recreate;
# also InPlaceRestart, ours with the agent by hand and no wrapper; without
# CommunityInPlaceRestart, community JobSet is not built), B1_SINGLE_POD_FLOOR
# (true: each of ours with one worker too, the floor each W's ratio is given to), B2_PODS (1000,5000,10000),
# B2_RUNS (3: group restarts and I/O floors per size and way), B2_STRATEGIES
# (InPlaceRestart/process,InPlaceRestart,Recreate: the process tier, its
# workers under stand-ins of the worker wrapper, the Pod tier with the
# agent by hand and no wrapper, and Recreate), B2_APF (shipped: install.yaml's flow schemas
# and priority level; default: Kubernetes' alone), B2_AGENT_START
# (a duration, 500ms say: how long each kubelet stand-in takes to run a
# restarted agent again; by default at once, the kubelet's own work on
# containers being B1's). B5_WORKERS (4: even, half of them on the faulted
# node), B5_FAULTS (kill,freeze,cut,cut-api,kubelet: the node killed,
# frozen, cut off, cut off from the API server alone, or its kubelet
# stopped alone), B5_RUNS (1: faults per way and kind),
# B5_WAYS (InPlaceRestart/process,InPlaceRestart,CommunityInPlaceRestart,Recreate; also
# RecreateUnattended: Recreate with nobody applying the out-of-service
# taint, which waits B5_UNATTENDED_WAIT, 8m, before the node comes back),
# B5_FENCE_NODE_LEASE (true: injected agents fence on their node's Lease
# too, the webhook's default; false: on their own silence alone).
# B1 and B3 need root for the local cluster (tools/cluster), or KUBECONFIG
# set to a cluster holding the images with install.yaml deployed. B5 needs
# root and the local cluster of three nodes, which it brings up itself (a
# cluster B1 or B3 brought up goes first): it kills, freezes and cuts off
# that cluster's nodes. BENCH_CHARTS=DIR keeps B1's and B2's summary lines
# there (b1.summary, b2.summary: those of the benchmarks that ran) and draws
# their charts (b1.svg, b2.svg) with tools/bench/charts.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/cluster/lib.sh

selected="${BENCH:-B1,B2,B3,B4,B5}"
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
  echo "B2: group restart at scale on envtest's apiserver, in place and by Recreate, with the controller binary, kube-controller-manager and kube-scheduler" >&2
  KUBEBUILDER_ASSETS=$(tools/kubebin/build.sh etcd kube-apiserver kubectl)
  export KUBEBUILDER_ASSETS
  kube=$(tools/kubebin/build.sh kube-controller-manager kube-scheduler)
  go build -o "$scratch/jobset-controller" ./controllers/cmd/jobset-controller
  go run ./images/cmd/render-manifests -install "$scratch/install.yaml"
  args=(-apf "${B2_APF:-shipped}")
  if [ -n "${B2_STRATEGIES:-}" ]; then
    args+=(-strategies "$B2_STRATEGIES")
  fi
  if [ -n "${B2_AGENT_START:-}" ]; then
    args+=(-agent-start "$B2_AGENT_START")
  fi
  go run ./tools/bench/coordination -pods "${B2_PODS:-1000,5000,10000}" -runs "${B2_RUNS:-3}" -controller "$scratch/jobset-controller" \
    -install "$scratch/install.yaml" -kube-controller-manager "$kube/kube-controller-manager" -kube-scheduler "$kube/kube-scheduler" \
    "${args[@]}" | record
fi

if want B1 || want B3; then
  cluster_with_images 1
  if want B3; then
    echo "B3: agent footprint" >&2
    go run ./tools/bench/footprint -kubeconfig "$kubeconfig" -binary bazel-bin/images/jobset-agent_binary_/jobset-agent_binary \
      -image bazel-bin/images/jobset-agent.tar -install bazel-bin/images/install.yaml | record
  fi
  if want B1; then
    b1_strategies="${B1_STRATEGIES:-InPlaceRestart/process,InPlaceRestart/pod,CommunityInPlaceRestart,Recreate}"
    echo "B1: group restart on the real kubelet: $b1_strategies" >&2
    b1_args=()
    if [[ ",$b1_strategies," == *",CommunityInPlaceRestart,"* ]]; then
      # Community JobSet (tools/peers/jobset.sh) replaces ours for its part
      # of the run and is replaced by ours again at its end; its images go
      # into the local cluster (another cluster's nodes must hold them).
      community=$(tools/peers/jobset.sh build)
      if [ ${#cluster_env[@]} -gt 0 ]; then tools/cluster/cluster.sh import "$community"/*.tar; fi
      b1_args+=(-community "$community" -community-agent-image "$(tools/peers/jobset.sh agent-image)")
    fi
    KUBECONFIG="$kubeconfig" go run ./tools/bench/grouprestart -kubeconfig "$kubeconfig" -install bazel-bin/images/install.yaml \
      -workers "${B1_WORKERS:-4,8,16}" -runs "${B1_RUNS:-5}" -single-pod-floor="${B1_SINGLE_POD_FLOOR:-true}" -strategies "$b1_strategies" \
      "${b1_args[@]}" | record
  fi
fi

if want B5; then
  if [ -n "${KUBECONFIG:-}" ]; then
    echo "B5 skipped: it brings node faults to the local cluster (tools/cluster) alone; unset KUBECONFIG" >&2
  else
    echo "B5: node loss on three nodes: ours in place (both tiers), community JobSet in place, Recreate" >&2
    # The cluster of one node that B1 and B3 ran on goes; B5 brings up
    # three (the controller on the first, the workers on the others).
    if want B1 || want B3; then tools/cluster/cluster.sh down; fi
    JOBSET_CLUSTER_NODES=3 cluster_with_images 1
    community=$(tools/peers/jobset.sh build)
    tools/cluster/cluster.sh import "$community"/*.tar
    go run ./tools/bench/nodeloss -kubeconfig "$kubeconfig" -install bazel-bin/images/install.yaml \
      -workers "${B5_WORKERS:-4}" -faults "${B5_FAULTS:-kill,freeze,cut,cut-api,kubelet}" -runs "${B5_RUNS:-1}" \
      -ways "${B5_WAYS:-InPlaceRestart/process,InPlaceRestart,CommunityInPlaceRestart,Recreate}" -unattended-wait "${B5_UNATTENDED_WAIT:-8m}" \
      -community "$community" -community-agent-image "$(tools/peers/jobset.sh agent-image)" \
      -agent-fence-node-lease="${B5_FENCE_NODE_LEASE:-true}" | record
  fi
fi

echo >&2
echo "summary:" >&2
grep '^bench=' "$lines" | grep -v '^bench=group-restart-run \|^bench=node-loss-run '

if [ -n "${BENCH_CHARTS:-}" ]; then
  mkdir -p "$BENCH_CHARTS"
  kept=()
  if want B1 && grep -q '^bench=group-restart ' "$lines"; then
    grep '^bench=group-restart ' "$lines" >"$BENCH_CHARTS/b1.summary"
    kept+=("$BENCH_CHARTS/b1.summary")
  fi
  if want B2 && grep -q '^bench=coordination-summary ' "$lines"; then
    grep '^bench=coordination-summary ' "$lines" >"$BENCH_CHARTS/b2.summary"
    kept+=("$BENCH_CHARTS/b2.summary")
  fi
  if [ ${#kept[@]} -gt 0 ]; then
    go run ./tools/bench/charts -out "$BENCH_CHARTS" "${kept[@]}"
  fi
fi
