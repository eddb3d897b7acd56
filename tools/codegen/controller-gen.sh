#!/usr/bin/env bash
# Runs the pinned controller-gen from the Go module proxy.
#
#   tools/codegen/controller-gen.sh <api package dir> <deepcopy out dir> <crd out dir>
#
# Both tools/update-generated.sh (writes into the tree) and the staleness
# test (writes into a temporary directory and compares) call this script,
# so the two can never disagree on flags.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.23.0

api_dir=$1 object_out=$2 crd_out=$3

# generateEmbeddedObjectMeta keeps labels and annotations of the Job and Pod
# templates in the schema; without it the apiserver prunes them.
go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}" \
  object \
  crd:generateEmbeddedObjectMeta=true \
  paths="${api_dir}/..." \
  output:object:dir="${object_out}" \
  output:crd:dir="${crd_out}"
