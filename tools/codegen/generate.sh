#!/usr/bin/env bash
# Writes every file generated from Go source, under <out>, at the paths
# they have in the tree:
#
#   tools/codegen/generate.sh <out>
#
#   api/jobset/v1alpha2/zz_generated.deepcopy.go   deepcopy (controller-gen)
#   api/crd/                                        the JobSet CRD (controller-gen)
#   controllers/rbac/                               controller RBAC (controller-gen)
#   webhooks/rbac/                                  webhook RBAC (controller-gen)
#   webhooks/manifests/                             webhook configurations (controller-gen)
#   agent/rbac/                                     agent RBAC and its admission policy (images/cmd/render-manifests)
#   monitoring/                                     metrics reader ClusterRole, ServiceMonitor, PrometheusRule,
#                                                   Grafana dashboard (images/cmd/render-manifests)
#   charts/jobset/                                  the Helm chart, from install.yaml's objects (images/cmd/render-manifests)
#   images/modinfo.bzl                              the shipped binaries' Go build information (images/cmd/modinfo)
#
# tools/update-generated.sh calls it with the tree's root; the staleness
# test calls it with a temporary directory and compares, so the two can
# never disagree on flags. Run from the root of the source tree.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.23.0
out=$1

controller_gen() {
  go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}" "$@"
}

# generateEmbeddedObjectMeta keeps labels and annotations of the Job and Pod
# templates in the schema; without it the apiserver prunes them.
controller_gen \
  object \
  crd:generateEmbeddedObjectMeta=true \
  webhook \
  paths="./api/...;./controllers/...;./webhooks/..." \
  output:object:dir="${out}/api/jobset/v1alpha2" \
  output:crd:dir="${out}/api/crd" \
  output:webhook:dir="${out}/webhooks/manifests"

# One role per binary: controller-gen merges every marker under its paths.
controller_gen rbac:roleName=jobset-controller paths="./controllers/..." \
  output:rbac:dir="${out}/controllers/rbac"
controller_gen rbac:roleName=jobset-webhook paths="./webhooks/..." \
  output:rbac:dir="${out}/webhooks/rbac"

# The chart is made of what was just generated, as install.yaml is.
go run ./images/cmd/render-manifests -agent-rbac-dir "${out}/agent/rbac" -monitoring-dir "${out}/monitoring" \
  -chart-dir "${out}/charts/jobset" \
  -crd "${out}/api/crd/jobset.x-k8s.io_jobsets.yaml" \
  -controller-rbac "${out}/controllers/rbac/role.yaml" \
  -webhook-rbac "${out}/webhooks/rbac/role.yaml" \
  -webhook-configs "${out}/webhooks/manifests/manifests.yaml"

# The Go build information image.bzl links into each shipped binary.
mkdir -p "${out}/images"
go run ./images/cmd/modinfo -out "${out}/images/modinfo.bzl" \
  ./controllers/cmd/jobset-controller ./webhooks/cmd/jobset-webhook \
  ./agent/cmd/jobset-agent ./agent/cmd/jobset-wrapper ./e2e/worker
