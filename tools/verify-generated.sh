#!/usr/bin/env bash
# Fails when go.mod/go.sum, deps.bzl or a BUILD file is stale, or Go source
# is not gofmt-formatted, and says how to fix it. Changes nothing in the
# tree. (Deepcopy and CRD freshness is the Go test
# //tools/codegen:codegen_test.)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
source tools/bazel/bazel.sh

fix="run tools/update-generated.sh and commit the result"
ok=true

if ! go mod tidy -diff >&2; then
  echo "go.mod/go.sum are not tidy: ${fix}" >&2
  ok=false
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp go.mod go.sum WORKSPACE deps.bzl "$scratch/"
if ! gazelle_update_repos "$scratch" || ! diff -u deps.bzl "$scratch/deps.bzl" >&2; then
  echo "deps.bzl does not match go.mod: ${fix}" >&2
  ok=false
fi

if ! gazelle_cmd -mode=diff >&2; then
  echo "BUILD files are stale: ${fix}" >&2
  ok=false
fi

unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them): ${unformatted}" >&2
  ok=false
fi

$ok
