#!/usr/bin/env bash
# Runs the end-to-end suite on a real kubelet: builds the images and
# install.yaml with Bazel, brings up the local cluster (tools/cluster) with
# the images imported, runs //e2e:e2e_test against it, and tears the cluster
# down (KEEP_CLUSTER=1 keeps it). With KUBECONFIG set, uses that cluster
# instead, which must already hold the images (e2e/kind does that for kind).
#
#   tools/e2e.sh [target]     default //e2e:e2e_test (all scenarios); one
#                             scenario: //e2e:kill_worker_group_restart_test, ...
#
# Ends with the line "N passed, N failed" for the suite's specs.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/cluster/lib.sh

cluster_with_images

target="${1:-//e2e:e2e_test}"
# Peers of ours, each built from the Go module proxy once per version under
# ~/.cache/jobset-tools (tools/peers/*.sh) and listed in JOBSET_PEERS for
# the specs, which install and remove them (tools/testing/peers) and skip a
# peer not listed. Community JobSet, for the drop-in migration specs: on the
# local cluster, when asked for (JOBSET_E2E_MIGRATION=1 or a migration
# target). Kueue and Kubeflow Trainer, real clients of ours: the full suite
# on the local cluster runs their specs (JOBSET_E2E_KUEUE=0 or
# JOBSET_E2E_TRAINER=0 leaves them out, =1 asks for them elsewhere), as do
# their own targets.
peers=()
if [ ${#cluster_env[@]} -gt 0 ] && { [ "${JOBSET_E2E_MIGRATION:-}" = 1 ] || [[ "$target" == *migration* ]]; }; then
  peers+=("$(tools/peers/jobset.sh build)")
fi
clients_default=0
if [ ${#cluster_env[@]} -gt 0 ] && [ "$target" = //e2e:e2e_test ]; then clients_default=1; fi
if [ "${JOBSET_E2E_KUEUE:-$clients_default}" = 1 ] || [[ "$target" == *:kueue_* ]]; then
  peers+=("$(tools/peers/kueue.sh build)")
fi
if [ "${JOBSET_E2E_TRAINER:-$clients_default}" = 1 ] || [[ "$target" == *:trainer_* ]]; then
  peers+=("$(tools/peers/trainer.sh build)")
fi
if [ ${#peers[@]} -gt 0 ]; then
  if [ ${#cluster_env[@]} -gt 0 ]; then
    for dir in "${peers[@]}"; do tools/cluster/cluster.sh import "$dir"/*.tar; done
  else
    echo "not the local cluster: its nodes must hold the images of ${peers[*]}" >&2
  fi
  cluster_env+=(--test_env=JOBSET_PEERS="$(IFS=:; echo "${peers[*]}")")
fi
status=0
bazel_cmd test "$target" --test_output=streamed --test_timeout=1800 --test_arg=-ginkgo.no-color --test_arg=-ginkgo.v \
  --test_env=KUBECONFIG="$kubeconfig" --test_env=INSTALL_YAML=images/install.yaml "${cluster_env[@]}" || status=$?

package="${target#//}"; package="${package%%:*}"
log="bazel-testlogs/${package}/${target##*:}/test.log"
# Ginkgo's summary line, without colours (the focused targets keep them).
summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '[0-9]+ Passed \| [0-9]+ Failed' | tail -1)
passed=$(sed -n 's/.* \([0-9]*\) Passed | \([0-9]*\) Failed.*/\1/p' <<<"$summary")
failed=$(sed -n 's/.* \([0-9]*\) Passed | \([0-9]*\) Failed.*/\2/p' <<<"$summary")
if [ -z "$passed" ]; then passed=0; failed=1; fi
[ "$status" = 0 ] || [ "$failed" != 0 ] || failed=1
echo "${passed} passed, ${failed} failed"
exit $status
