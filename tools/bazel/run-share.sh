#!/usr/bin/env bash
# Runs one share of a Ginkgo suite (ginkgo_shares in ginkgo.bzl) on a
# cluster of its own:
#
#   run-share.sh BINARY INDEX FILTER [ARG...]
#
# The suite's binary runs with the ARGs, its label filter the share's
# FILTER joined to the one the ARGs give (the run's: what it leaves out),
# against the INDEX-th local cluster of JOBSET_CLUSTER_DIRS (directories,
# colon-separated; tools/e2e.sh brings them up and sets it), whose
# kubeconfig and directory it gets as KUBECONFIG and JOBSET_CLUSTER_DIR.
set -euo pipefail
binary=$1 index=$2 filter=$3
shift 3

if [ -z "${JOBSET_CLUSTER_DIRS:-}" ]; then
  echo "run-share.sh: a share runs on a local cluster of its own, and JOBSET_CLUSTER_DIRS names none: run it through tools/e2e.sh" >&2
  exit 1
fi
IFS=: read -ra dirs <<<"$JOBSET_CLUSTER_DIRS"
if [ "$index" -gt ${#dirs[@]} ]; then
  echo "run-share.sh: share ${index}, but JOBSET_CLUSTER_DIRS names ${#dirs[@]} clusters" >&2
  exit 1
fi
export JOBSET_CLUSTER_DIR=${dirs[index - 1]}
KUBECONFIG=$("${JOBSET_CLUSTER_SH:?set by tools/e2e.sh}" kubeconfig)
export KUBECONFIG

args=() joined=false
for arg in "$@"; do
  case "$arg" in
    -ginkgo.label-filter=* | --ginkgo.label-filter=*)
      arg="-ginkgo.label-filter=(${arg#*=}) && (${filter})"
      joined=true ;;
  esac
  args+=("$arg")
done
$joined || args+=("-ginkgo.label-filter=${filter}")
exec "$binary" "${args[@]}"
