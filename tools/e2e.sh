#!/usr/bin/env bash
# Runs the end-to-end suite on a real kubelet: builds the images and
# install.yaml with Bazel, brings up the local cluster (tools/cluster) with
# the images imported, runs //e2e:e2e_test against it, and tears the cluster
# down (KEEP_CLUSTER=1 keeps it). With KUBECONFIG set, uses that cluster
# instead, which must already hold the images (e2e/kind does that for kind).
#
#   tools/e2e.sh [target]     default //e2e:e2e_test (all scenarios); one
#                             scenario: //e2e:kill_worker_group_restart_test, ...
#   tools/e2e.sh --prepare [target]
#                             builds only what the run needs from outside
#                             Bazel (the local cluster's Kubernetes binaries,
#                             the peers below), cached under
#                             ~/.cache/jobset-tools, so that the run finds
#                             them: tools/test.sh does this while
#                             `bazel test //...` runs
#
# The local cluster has JOBSET_CLUSTER_NODES nodes (default 3 here: the
# node-fault specs need a node for our controller and webhook and two for
# the workers; docs/local-cluster.md). The whole suite on the local
# cluster runs in two shares side by side, each on a cluster of its own
# (//e2e:e2e_share_1_test and _2_, e2e/BUILD.bazel), as its specs mostly
# wait; JOBSET_E2E_CLUSTERS=1 runs it on one cluster, spec after spec.
#
# Specs that need what this run cannot give (e2e/suite_test.go lists their
# labels: the local cluster, community JobSet, Kueue, Trainer) are left out
# with --ginkgo.label-filter and named as skipped. A spec that skips on its
# own counts as failed. Ends with the line "N passed, N failed, N skipped"
# for the suite's specs, read from Ginkgo's JSON report (tools/testreport).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/cluster/lib.sh

# The soak's seed in the full suite: one whose short run passed there
# again and again (docs/benchmarks.md, "Soak").
pinned_soak_seed=1795958593191488961
case "${JOBSET_E2E_CLUSTERS:-2}" in
  1 | 2) ;;
  *)
    echo "JOBSET_E2E_CLUSTERS=${JOBSET_E2E_CLUSTERS}: must be 1 (the suite spec after spec on one cluster) or 2 (two shares side by side, the default)" >&2
    exit 2
    ;;
esac
prepare_only=false
if [ "${1:-}" = --prepare ]; then
  prepare_only=true
  shift
fi
export JOBSET_CLUSTER_NODES="${JOBSET_CLUSTER_NODES:-3}"
target="${1:-//e2e:e2e_test}"
local_cluster=true
[ -z "${KUBECONFIG:-}" ] || local_cluster=false
if $prepare_only && $local_cluster; then
  tools/cluster/cluster.sh build >/dev/null
fi
# The labels of the specs this run leaves out (e2e/suite_test.go).
not_asked=()
$local_cluster || not_asked+=(local-cluster)
# The node-fault specs: three nodes of the local cluster at least.
if ! $local_cluster || [ "$JOBSET_CLUSTER_NODES" -lt 3 ]; then
  not_asked+=(nodes)
fi
# The soak (a node spec too) runs for JOBSET_SOAK_DURATION (default 150 s)
# with the seed JOBSET_SOAK_SEED. The full suite on the local cluster runs
# it with a pinned seed, so that a failure replays (JOBSET_E2E_SOAK=0 leaves
# it out, =1 asks for it elsewhere); its own target draws a new seed each
# run, and reports it (docs/benchmarks.md, "Soak").
soak_default=0
if $local_cluster && [ "$target" = //e2e:e2e_test ]; then
  soak_default=1
  export JOBSET_SOAK_SEED="${JOBSET_SOAK_SEED:-$pinned_soak_seed}"
fi
if [ "${JOBSET_E2E_SOAK:-$soak_default}" != 1 ] && [[ "$target" != *:soak_* ]]; then
  not_asked+=(soak)
fi
passed_env=()
for v in JOBSET_SOAK_DURATION JOBSET_SOAK_SEED JOBSET_E2E_LONG_OUTAGE; do
  if [ -n "${!v:-}" ]; then passed_env+=(--test_env="$v=${!v}"); fi
done
# Peers of ours, each built from the Go module proxy once per version under
# ~/.cache/jobset-tools (tools/peers/*.sh) and listed in JOBSET_PEERS for
# the specs, which install and remove them (tools/testing/peers); the specs
# of a peer this run does not build are left out. Community JobSet, for the
# drop-in migration specs and the differential ones: on the local cluster,
# when asked for (JOBSET_E2E_MIGRATION=1, a migration or a differential
# target). Kueue and Kubeflow
# Trainer, real clients of ours: the full suite on the local cluster runs
# their specs (JOBSET_E2E_KUEUE=0 or JOBSET_E2E_TRAINER=0 leaves them out,
# =1 asks for them elsewhere), as do their own targets.
peers=()
if $local_cluster && { [ "${JOBSET_E2E_MIGRATION:-}" = 1 ] || [[ "$target" == *migration* ]] || [[ "$target" == *:differential_* ]]; }; then
  peers+=("$(tools/peers/jobset.sh build)")
else
  not_asked+=(migration)
fi
clients_default=0
if $local_cluster && [ "$target" = //e2e:e2e_test ]; then clients_default=1; fi
# Helm, for the chart's spec (install, upgrade, uninstall): the full suite
# on the local cluster runs it (JOBSET_E2E_HELM=0 leaves it out, =1 asks
# for it elsewhere), as does its target. The run builds Helm
# (tools/helm/build.sh, cached; tools/test.sh has built it already for the
# chart's tests, so --prepare, which runs beside that build, leaves it);
# .bazelrc passes HELM to the test.
if [ "${JOBSET_E2E_HELM:-$clients_default}" = 1 ] || [[ "$target" == *:helm_* ]]; then
  if ! $prepare_only; then
    HELM=$(tools/helm/build.sh)
    export HELM
  fi
else
  not_asked+=(helm)
fi
if [ "${JOBSET_E2E_KUEUE:-$clients_default}" = 1 ] || [[ "$target" == *:kueue_* ]]; then
  peers+=("$(tools/peers/kueue.sh build)")
else
  not_asked+=(kueue)
fi
if [ "${JOBSET_E2E_TRAINER:-$clients_default}" = 1 ] || [[ "$target" == *:trainer_* ]]; then
  peers+=("$(tools/peers/trainer.sh build)")
else
  not_asked+=(trainer)
fi
if $prepare_only; then
  echo "prepared for ${target}: the local cluster's binaries${peers[*]:+, and the peers ${peers[*]}}"
  exit 0
fi

clusters=1 targets=("$target")
if $local_cluster && [ "$target" = //e2e:e2e_test ] && [ "${JOBSET_E2E_CLUSTERS:-2}" = 2 ]; then
  clusters=2 targets=(//e2e:e2e_share_1_test //e2e:e2e_share_2_test)
fi
cluster_with_images "$clusters"
cluster_env+=("${passed_env[@]}")
if [ "$clusters" -gt 1 ]; then
  cluster_env+=(--test_env=JOBSET_CLUSTER_DIRS="$(IFS=:; echo "${cluster_dirs[*]}")")
fi
if [ ${#peers[@]} -gt 0 ]; then
  if $local_cluster; then
    for dir in "${peers[@]}"; do on_local_clusters tools/cluster/cluster.sh import "$dir"/*.tar; done
  else
    echo "not the local cluster: its nodes must hold the images of ${peers[*]}" >&2
  fi
  cluster_env+=(--test_env=JOBSET_PEERS="$(IFS=:; echo "${peers[*]}")")
fi
test_args=()
if [ ${#not_asked[@]} -gt 0 ]; then
  # "!a&&!b": no spaces, so that nothing on the way splits it.
  filter=$(printf '&&!%s' "${not_asked[@]}")
  test_args+=(--test_arg=-ginkgo.label-filter="${filter:2}")
fi

# Each target's Ginkgo report: the suite writes it into the test's outputs
# (e2e/suite_test.go), which Bazel may zip into outputs.zip; one from an
# earlier run does not count.
outputs_of() { # target
  local package="${1#//}"
  echo "bazel-testlogs/${package%%:*}/${1##*:}"
}
report_of_this_run() { # target
  local f outputs
  outputs="$(outputs_of "$1")/test.outputs"
  for f in "$outputs/ginkgo-report.json" "$outputs/outputs.zip"; do
    if [ -f "$f" ] && [ "$(stat -c %Y "$f")" -ge "$started" ]; then
      case "$f" in
        *.zip) unzip -p "$f" ginkgo-report.json ;;
        *) cat "$f" ;;
      esac
      return
    fi
  done
  return 1
}

started=$(date +%s)
test_flags=(--test_timeout=3600 --test_arg=-ginkgo.no-color --test_arg=-ginkgo.v
  --test_env=KUBECONFIG="$kubeconfig" --test_env=INSTALL_YAML=images/install.yaml "${cluster_env[@]}" "${test_args[@]}")
status=0
if [ ${#targets[@]} -eq 1 ]; then
  bazel_cmd test "$target" --test_output=streamed "${test_flags[@]}" || status=$?
else
  # Streamed output would run the shares one after the other: each share's
  # log is followed instead, each line marked with its target's name, until
  # Bazel is done.
  for t in "${targets[@]}"; do rm -f "$(outputs_of "$t")/test.log"; done
  bazel_cmd test "${targets[@]}" --test_output=summary --local_test_jobs="${#targets[@]}" "${test_flags[@]}" &
  bazel_pid=$!
  followers=()
  for t in "${targets[@]}"; do
    tail -n +1 -F --pid="$bazel_pid" "$(outputs_of "$t")/test.log" 2>/dev/null | sed -u "s|^|${t##*:}: |" &
    followers+=($!)
  done
  wait "$bazel_pid" || status=$?
  # tail exits 1 for a log that did not exist yet when it started.
  wait "${followers[@]}" || true
fi

# (Not an EXIT trap: tools/cluster/lib.sh's takes the clusters down.)
reports_dir=$(mktemp -d)
reports=()
for t in "${targets[@]}"; do
  report="${reports_dir}/${t##*:}.json"
  if ! report_of_this_run "$t" >"$report"; then
    echo "FAIL: ${t} left no Ginkgo report in this run ($(outputs_of "$t")/test.outputs)"
    echo "0 passed, 1 failed, 0 skipped"
    rm -rf "$reports_dir"
    exit 1
  fi
  reports+=("$report")
done
# A spec one share leaves out and the other runs counts once, as run.
# (go run's own "exit status 1" says nothing the counts do not.)
summary=$(go run ./tools/testreport ginkgo "${reports[@]}" 2> >(grep -v '^exit status ' >&2)) || true
rm -rf "$reports_dir"
counts=$(tail -1 <<<"$summary")
if ! [[ "$counts" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
  echo "FAIL: ${targets[*]}: the Ginkgo reports could not be read"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
sed '$d' <<<"$summary" # the failures and what was left out, by name
passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
  echo "FAIL: ${targets[*]}: bazel test exited ${status}, though no spec failed"
  failed=1
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" = 0 ]
