# shellcheck shell=bash
# What tools/test.sh and tools/checker/record.sh share about the protocol
# checker's searches: where a passed search is recorded, by the hash of its
# inputs (tools/checker/inputs.sh).
#
# Two records: tools/checker/passed.txt, committed, which a fresh machine
# reads, and a cache of the logs of the searches this machine ran, which
# record.sh turns into lines of passed.txt without running them again.

checker_passed_file=tools/checker/passed.txt
checker_cache="${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}/checker-passed"

# checker_targets prints the searches' targets, those tagged checker (needs
# tools/bazel/bazel.sh).
checker_targets() {
  bazel_cmd query 'attr(tags, "\bchecker\b", tests(//...))' 2>/dev/null
}

# checker_recorded prints the states a search explored when it passed with
# these inputs, from passed.txt or the cache; fails when neither has it.
checker_recorded() { # target, inputs hash
  local states
  states=$(awk -v t="$1" -v k="$2" '$1 == t && $2 == k { print $3 }' "$checker_passed_file" 2>/dev/null)
  if [ -z "$states" ] && [ -f "${checker_cache}/$2" ]; then
    states=$(checker_explored <"${checker_cache}/$2")
  fi
  [ -n "$states" ] && echo "$states"
}

# checker_explored prints the states a search's log says it explored.
checker_explored() {
  sed -n 's/^ *[a-z_]*_test\.go:[0-9]*: explored \([0-9]*\) states$/\1/p' | tail -1
}
