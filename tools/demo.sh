#!/usr/bin/env bash
# The README's main command. Today it runs the smoke path (real apiserver,
# JobSet CRD, the epoch fields as kubectl shows them); the end-to-end issue
# turns it into a real in-place group restart on a local kubelet.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBEBUILDER_ASSETS=$(tools/kubebin/build.sh etcd kube-apiserver kubectl)
export KUBEBUILDER_ASSETS
go run ./tools/smoke
