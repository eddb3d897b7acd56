#!/usr/bin/env bash
# The project's test command (the README's, and the one .ci/run calls):
#   1. builds or reuses the envtest binaries (real etcd + kube-apiserver)
#      and Helm (the chart's tests),
#   2. checks that go.mod, deps.bzl and the BUILD files are fresh; lints
#      the Go code (golangci-lint) and the scripts (shellcheck) and runs
#      two short fuzz runs in the background from the start, collected
#      before the end,
#   3. runs `bazel test //...` on Debian's Bazel 4.2.3, offline, once
#      `bazel build //...` (started beside steps 1 and 2) is done: first
#      every target but the protocol checker's searches (tagged checker)
#      and the chart's tests (tagged helm), then those of the chart once
#      Helm is built; the protocol checker's searches whose inputs
#      changed since tools/checker/passed.txt recorded them start before,
#      at the lowest priority, and run on beside everything after,
#   4. runs the end-to-end suite on the local cluster built from source
#      (tools/e2e.sh; SKIP_E2E=1 leaves it out, for machines without root);
#      what it needs from outside Bazel (the cluster's Kubernetes binaries,
#      the peers of the Kueue and Trainer specs) builds in the background
#      from step 2 on, at a low CPU and I/O priority, so that it takes
#      mostly what the checks and Bazel leave idle (the envtest suites
#      mostly wait), and the suite waits for it; the suite too mostly
#      waits on the cluster, which leaves the searches CPU,
#   5. ends with one line "N passed, N failed, N skipped" over checks, test
#      targets and end-to-end specs. Skipped is what the run left out on
#      purpose, each named above it; a test that skips on its own counts
#      as failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
source tools/bazel/bazel.sh
start=$(date +%s)

passed=0 failed=0 skipped=0
record() { # name, exit status
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS: $1"; else failed=$((failed + 1)); echo "FAIL: $1"; fi
}
counts() { echo "${passed} passed, ${failed} failed, ${skipped} skipped"; }

# What runs in the background at a lower priority than the steps it runs
# beside: their CPU time is what those steps leave idle. The end-to-end
# suite's preparation (below) runs above the protocol checker's searches,
# which start beside it once Bazel is done: the suite waits for the
# preparation, and nothing waits for the searches until the very end.
idle=(nice -n 19)
background=(nice -n 10)
if command -v ionice >/dev/null; then idle+=(ionice -c 3); background+=(ionice -c 2 -n 7); fi
# Helm for the chart's tests, built beside everything up to them; without
# it they fail, naming what to run.
helm_out=$(mktemp)
nice tools/helm/build.sh >"$helm_out" &
helm_pid=$!
# Bazel builds every target beside the envtest binaries' build and the
# checks, which need none of it: each fills what the other leaves idle
# (Bazel's loading and fetching, the Go linker's single thread). `bazel
# test` below then finds it built, and says again what failed to build.
bazel_cmd build //... >/dev/null 2>&1 &
bazel_build_pid=$!

# The checks that need neither the envtest binaries nor Bazel: the linters
# and short fuzz runs of admission and of the epoch decision (on top of the
# corpora kept under testdata/fuzz, which every plain test run replays).
# Cold, their compiles (the linter itself, every package the fuzz targets
# import, instrumented) are the largest after Kubernetes' own, so they run
# in the background, one after another, at a lower priority than the steps
# on the way to the tests; warm, they take seconds. Collected at the end.
static_checks=(
  "golangci-lint (.golangci.yml)|tools/lint/golangci-lint.sh"
  "shellcheck on every script|tools/lint/shellcheck.sh"
  "fuzz FuzzDefaultAndValidate (15s)|go test -run ^\$ -fuzz ^FuzzDefaultAndValidate\$ -fuzztime 15s ./webhooks/jobsetwebhook"
  "fuzz FuzzDecide (15s)|go test -run ^\$ -fuzz ^FuzzDecide\$ -fuzztime 15s ./controllers/inplace"
)
static_dir=$(mktemp -d)
(
  for k in "${!static_checks[@]}"; do
    read -ra command <<<"${static_checks[$k]#*|}"
    "${background[@]}" "${command[@]}" >"${static_dir}/${k}.log" 2>&1
    echo $? >"${static_dir}/${k}.status"
  done
) &
static_pid=$!

KUBEBUILDER_ASSETS=$(tools/kubebin/build.sh etcd kube-apiserver kubectl)
status=$?
record "envtest binaries (etcd, kube-apiserver, kubectl)" $status
if [ $status -ne 0 ]; then
  wait "$static_pid"
  counts
  exit 1
fi
export KUBEBUILDER_ASSETS
if [ "${SKIP_E2E:-}" != 1 ]; then
  prepare_log=$(mktemp)
  "${background[@]}" tools/e2e.sh --prepare >"$prepare_log" 2>&1 &
  prepare_pid=$!
fi
# Passed into Bazel's test environment (see .bazelrc) for the tests that run Go.
GOPATH=$(go env GOPATH) GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
export GOPATH GOMODCACHE GOCACHE
echo "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS}"

tools/verify-generated.sh
record "go.mod, deps.bzl and BUILD files are fresh, Go source gofmt-formatted" $?

# bazel test with the given arguments: counts its targets, and each Go test
# that skipped inside a passing target as failed.
bazel_tests() {
  local log status targets_passed targets_failed
  log=$(mktemp)
  bazel_cmd test "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  targets_passed=$(grep -cE '^//\S+\s+(\(cached\) )?PASSED' "$log")
  # SKIPPED: a target Bazel did not run (incompatible with the platform);
  # nothing here asks for that.
  targets_failed=$(grep -cE '^//\S+\s+(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY|SKIPPED)' "$log")
  passed=$((passed + targets_passed))
  failed=$((failed + targets_failed))
  if [ "$status" -ne 0 ] && [ "$targets_failed" -eq 0 ]; then
    # A build or analysis error fails before any test runs.
    failed=$((failed + 1))
    echo "FAIL: bazel test $* exited ${status} before reporting tests"
  fi
  # A Go test that skips inside a passing target (t.Skip) is in the
  # target's JUnit file only (.bazelrc asks rules_go to list every test
  # there); it counts as failed, as the run asked no test to skip.
  # (The Ginkgo suites under Bazel cannot skip: .golangci.yml forbids
  # Skip() outside e2e.)
  local junit=() target file go_skips
  while read -r target; do
    file="bazel-testlogs/${target#//}"
    file="${file/://}/test.xml"
    [ -f "$file" ] && junit+=("${target}=${file}")
  done < <(grep -oE '^//\S+(\s+\(cached\))?\s+PASSED' "$log" | awk '{print $1}')
  rm -f "$log"
  [ ${#junit[@]} -gt 0 ] || return 0
  go_skips=$(go run ./tools/testreport junit-skips "${junit[@]}" 2> >(grep -v '^exit status ' >&2))
  status=$?
  [ -z "$go_skips" ] || echo "$go_skips"
  if [ $status -eq 2 ]; then
    failed=$((failed + 1))
    echo "FAIL: reading the test targets' JUnit files"
  elif [ -n "$go_skips" ]; then
    failed=$((failed + $(grep -c '^FAIL:' <<<"$go_skips")))
  fi
}

bazel_build_start=$(date +%s)
wait "$bazel_build_pid"
echo "bazel build //... (beside the steps above): waited $(( $(date +%s) - bazel_build_start ))s for it"
# The protocol checker's searches: built above, each run from the script
# `bazel run` writes for it (its binary, with the arguments its BUILD file
# gives), beside everything that follows, at idle priority. A search is a
# pure function of its inputs (tools/checker/inputs.sh): one that passed
# with the same inputs, recorded in tools/checker/passed.txt or in this
# machine's cache (tools/checker/lib.sh), is not run again, as Bazel does
# not run a cached test again.
source tools/checker/lib.sh
mapfile -t checkers < <(checker_targets)
if [ ${#checkers[@]} -eq 0 ]; then
  failed=$((failed + 1))
  echo "FAIL: no target is tagged checker (bazel query)"
fi
checker_dir=$(mktemp -d) checker_pids=() checker_keys=() checker_states=()
for k in "${!checkers[@]}"; do
  target=${checkers[$k]} script="${checker_dir}/${k}.sh" log="${checker_dir}/${k}.log"
  checker_keys[k]=$(tools/checker/inputs.sh "$target" 2>"$log")
  checker_states[k]=""
  if [ -n "${checker_keys[k]}" ] && checker_states[k]=$(checker_recorded "$target" "${checker_keys[k]}"); then
    true &
  elif ! bazel_cmd run --script_path="$script" "$target" >>"$log" 2>&1; then
    false &
  else
    "${idle[@]}" bash "$script" -test.v -test.timeout=90m >"$log" 2>&1 &
  fi
  checker_pids+=($!)
done

bazel_tests //... --test_tag_filters=-checker,-helm

wait "$helm_pid"
record "helm (built from the module proxy)" $?
HELM=$(cat "$helm_out")
rm -f "$helm_out"
export HELM
bazel_tests //... --test_tag_filters=helm

if [ "${SKIP_E2E:-}" != 1 ]; then
  prepare_start=$(date +%s)
  wait "$prepare_pid"
  status=$?
  echo "end-to-end preparation: waited $(( $(date +%s) - prepare_start ))s for it"
  cat "$prepare_log"
  rm -f "$prepare_log"
  # On failure the suite still runs: tools/e2e.sh builds what is missing
  # first, and a build that fails again fails the suite too.
  record "end-to-end preparation (tools/e2e.sh --prepare: the local cluster's binaries, the peers)" $status
  e2elog=$(mktemp)
  tools/e2e.sh 2>&1 | tee "$e2elog"
  e2e_status=${PIPESTATUS[0]}
  # The cluster's teardown may print after the counts.
  e2e_counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$e2elog" | tail -1)
  if [[ "$e2e_counts" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    skipped=$((skipped + BASH_REMATCH[3]))
  fi
  if [ "$e2e_status" -ne 0 ] && ! [[ "$e2e_counts" =~ \ [1-9][0-9]*\ failed, ]]; then
    failed=$((failed + 1))
    echo "FAIL: end-to-end (tools/e2e.sh exited ${e2e_status})"
  fi
  rm -f "$e2elog"
else
  skipped=$((skipped + 1))
  echo "skipped (not asked for this run): the end-to-end suite (SKIP_E2E=1)"
fi

static_start=$(date +%s)
wait "$static_pid"
echo "the static checks (beside the steps above): waited $(( $(date +%s) - static_start ))s for them"
for k in "${!static_checks[@]}"; do
  status=$(cat "${static_dir}/${k}.status" 2>/dev/null || echo 1)
  # The linter's verdict ("0 issues.") is worth a line; another check's
  # log only when it failed.
  if [ "$status" -ne 0 ] || [[ ${static_checks[$k]} == golangci-lint* ]]; then tail -n 200 "${static_dir}/${k}.log"; fi
  record "${static_checks[$k]%%|*}" "$status"
done
rm -rf "$static_dir"

checkers_start=$(date +%s)
checkers_ran=0
for k in "${!checkers[@]}"; do
  wait "${checker_pids[$k]}"
  status=$?
  if [ -n "${checker_states[k]}" ]; then
    record "${checkers[$k]} (passed before with the same inputs ${checker_keys[k]}: ${checker_states[k]} states)" 0
    continue
  fi
  # A search that skips was not asked to.
  if grep -q -- '^--- SKIP' "${checker_dir}/${k}.log"; then status=1; fi
  if [ $status -ne 0 ]; then
    cat "${checker_dir}/${k}.log"
    record "${checkers[$k]} (at idle priority)" $status
    continue
  fi
  grep -E '^\s+\S+_test\.go:[0-9]+: explored|^--- PASS' "${checker_dir}/${k}.log"
  if [ -n "${checker_keys[k]}" ] && mkdir -p "$checker_cache"; then
    cp "${checker_dir}/${k}.log" "${checker_cache}/${checker_keys[k]}"
    checkers_ran=$((checkers_ran + 1))
  fi
  record "${checkers[$k]} (at idle priority)" 0
done
rm -rf "$checker_dir"
if [ "$checkers_ran" -gt 0 ]; then
  echo "${checkers_ran} of the protocol checker's searches ran: their inputs changed since ${checker_passed_file} recorded them; tools/checker/record.sh records them, for fresh machines"
fi
echo "the protocol checker's searches: waited $(( $(date +%s) - checkers_start ))s for them"

echo "test wall time: $(( $(date +%s) - start ))s"
counts
[ "$failed" -eq 0 ]
