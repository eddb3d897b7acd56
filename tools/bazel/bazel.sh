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

bazel_cmd() {
  local command=$1
  shift
  case "$command" in
    build|test|run|cquery) bazel_bin "$command" --config=bazel4 "$@" ;;
    *) bazel_bin "$command" "$@" ;;
  esac
}
