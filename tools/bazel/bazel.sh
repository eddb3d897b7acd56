# shellcheck shell=bash
# Sourced by the scripts under tools/: runs the Bazel this repository is
# tested with here (Debian's bazel-bootstrap 4.2.3) whatever .bazelversion
# or bazelisk a developer has, with the offline configuration.
bazel_bin() {
  if command -v bazel-4 >/dev/null 2>&1; then
    bazel-4 "$@"
  else
    USE_BAZEL_VERSION=4 bazel "$@"
  fi
}

# Bazel's output base is per checkout path, so a fresh clone at a new path
# rebuilds everything; a disk cache under $HOME lets any clone on this
# machine reuse what an earlier one built (action outputs and test results,
# keyed by their inputs).
BAZEL_DISK_CACHE="${BAZEL_DISK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools/bazel-disk-cache}"

bazel_cmd() {
  local command=$1
  shift
  case "$command" in
    build|test|run|cquery) bazel_bin "$command" --config=bazel4 --disk_cache="$BAZEL_DISK_CACHE" "$@" ;;
    query) bazel_bin "$command" --config=bazel4 "$@" ;;
    *) bazel_bin "$command" "$@" ;;
  esac
}

# Gazelle, the same release WORKSPACE loads for `bazel run //:gazelle`, built
# by the Go toolchain: no Bazel server needed to check or fix BUILD files.
# Gazelle 0.27's list of standard packages predates Go 1.21, so it asks
# `go list` about maps, slices and the like and complains when that fails;
# the BUILD files come out right, so the complaint is filtered.
gazelle_cmd() {
  go run github.com/bazelbuild/bazel-gazelle/cmd/gazelle@v0.27.0 "$@" \
    2> >(grep -v 'finding module path for import' >&2)
}

# Rewrites deps.bzl (the go_repository rules of the Bazel 4 path) from go.mod.
# Takes the repository root to write into, so that checks can use a copy.
gazelle_update_repos() {
  gazelle_cmd update-repos -repo_root="$1" -from_file="$1/go.mod" \
    -to_macro=deps.bzl%go_dependencies -prune -build_file_proto_mode=disable_global
}
