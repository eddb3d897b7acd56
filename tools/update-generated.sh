#!/usr/bin/env bash
# Regenerates every generated file: deepcopy functions and the CRD
# (controller-gen), go.mod/go.sum tidiness, deps.bzl (Go repositories for
# Bazel 4) and BUILD files (Gazelle). Tests and tools/verify-generated.sh
# fail when any of them is stale.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/codegen/controller-gen.sh ./api/jobset/v1alpha2 ./api/jobset/v1alpha2 ./api/crd
go mod tidy
source tools/bazel/bazel.sh
bazel_cmd run //:gazelle -- update-repos -from_file=go.mod -to_macro=deps.bzl%go_dependencies \
  -prune -build_file_proto_mode=disable_global
bazel_cmd run //:gazelle
