#!/usr/bin/env bash
# Records the protocol checker's searches that pass with the tree's inputs
# in tools/checker/passed.txt, running each whose inputs changed:
#
#   tools/checker/record.sh
#
# tools/test.sh runs a search only when passed.txt and this machine's cache
# have no record of it with the same inputs, and caches it when it passes:
# after such a run this takes seconds. Run it after changing what a search
# compiles (the protocol, the agent, the checker) and commit passed.txt
# with the change, or every fresh CI machine runs the searches again (more
# than two hours of CPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bazel/bazel.sh
source tools/checker/lib.sh

mapfile -t targets < <(checker_targets)
[ ${#targets[@]} -gt 0 ] || { echo "$0: no target is tagged checker (bazel query)" >&2; exit 1; }
lines=()
# shellcheck disable=SC2154 # checker_passed_file: lib.sh
[ -f "$checker_passed_file" ] || { echo "$0: ${checker_passed_file} is missing: its comment heads the record" >&2; exit 1; }
for target in "${targets[@]}"; do
  key=$(tools/checker/inputs.sh "$target")
  if ! states=$(checker_recorded "$target" "$key"); then
    echo "${target}: its inputs changed; running it (tens of CPU-minutes)" >&2
    script=$(mktemp) log=$(mktemp)
    bazel_cmd run --script_path="$script" "$target" >&2
    if ! bash "$script" -test.v -test.timeout=180m 2>&1 | tee "$log" >&2 || ! grep -q '^--- PASS' "$log" || grep -q '^--- SKIP' "$log"; then
      echo "${target}: failed; nothing recorded" >&2
      exit 1
    fi
    mkdir -p "$checker_cache"
    cp "$log" "${checker_cache}/${key}"
    states=$(checker_explored <"$log")
    rm -f "$script" "$log"
  fi
  lines+=("${target} ${key} ${states}")
done
header=$(grep '^#' "$checker_passed_file")
printf '%s\n' "$header" "${lines[@]}" >"$checker_passed_file"
echo "recorded ${#lines[@]} searches in ${checker_passed_file}"
