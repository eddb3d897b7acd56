#!/usr/bin/env bash
# Fails when go.mod/go.sum, deps.bzl or a BUILD file is stale, naming the
# fix. (Deepcopy and CRD freshness is the Go test //tools/codegen.)
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bazel/bazel.sh

fix="run tools/update-generated.sh and commit the result"
ok=true

if ! go mod tidy -diff >/dev/null; then
  echo "go.mod/go.sum are not tidy: ${fix}" >&2
  ok=false
fi

# update-repos has no diff mode: run it on the real files and put them back.
backup=$(mktemp -d)
cp deps.bzl WORKSPACE "$backup/"
trap 'cp "$backup/deps.bzl" "$backup/WORKSPACE" . && rm -rf "$backup"' EXIT
bazel_cmd run //:gazelle -- update-repos -from_file=go.mod -to_macro=deps.bzl%go_dependencies \
  -prune -build_file_proto_mode=disable_global
if ! diff -u "$backup/deps.bzl" deps.bzl >&2; then
  echo "deps.bzl does not match go.mod: ${fix}" >&2
  ok=false
fi

if ! bazel_cmd run //:gazelle -- -mode=diff >&2; then
  echo "BUILD files are stale: ${fix}" >&2
  ok=false
fi

$ok
