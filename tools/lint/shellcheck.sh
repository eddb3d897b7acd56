#!/usr/bin/env bash
# Runs shellcheck (Debian package shellcheck) on every script of the
# repository: the *.sh files git tracks and the tracked files without an
# extension whose first line is a shell's #!. Sourced files are followed
# (-x), from the root of the tree, as the scripts source them.
#
#   tools/lint/shellcheck.sh          all of them
#   tools/lint/shellcheck.sh FILE...  these
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v shellcheck >/dev/null; then
  echo "shellcheck: not installed (Debian package shellcheck; .ci/run installs it)" >&2
  exit 1
fi

scripts=("$@")
if [ ${#scripts[@]} -eq 0 ]; then
  while IFS= read -r -d '' f; do
    case "${f##*/}" in
      *.sh) scripts+=("$f") ;;
      *.*) ;;
      *) if [ -f "$f" ] && head -n1 "$f" | grep -qE '^#!.*\b(ba)?sh\b'; then scripts+=("$f"); fi ;;
    esac
  done < <(git ls-files -z)
fi
shellcheck --external-sources --source-path=SCRIPTDIR --source-path=. "${scripts[@]}"
