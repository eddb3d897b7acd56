#!/usr/bin/env bash
# Runs the pinned controller-gen from the Go module proxy, from the root of
# the source tree.
#
#   tools/codegen/controller-gen.sh <deepcopy out> <crd out> <rbac out> <webhook out>
#
# Both tools/update-generated.sh (writes into the tree) and the staleness
# test (writes into a temporary directory and compares) call this script,
# so the two can never disagree on flags.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.23.0

object_out=$1 crd_out=$2 rbac_out=$3 webhook_out=$4

# generateEmbeddedObjectMeta keeps labels and annotations of the Job and Pod
# templates in the schema; without it the apiserver prunes them.
go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}" \
  object \
  crd:generateEmbeddedObjectMeta=true \
  rbac:roleName=jobset-controller \
  webhook \
  paths="./api/...;./controllers/...;./webhooks/..." \
  output:object:dir="${object_out}" \
  output:crd:dir="${crd_out}" \
  output:rbac:dir="${rbac_out}" \
  output:webhook:dir="${webhook_out}"
