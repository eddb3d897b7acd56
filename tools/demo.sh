#!/usr/bin/env bash
# The README's main command: a real in-place group restart, with its
# timeline. Builds the images and install.yaml (Bazel), brings up the local
# cluster built from source with the images imported (or uses $KUBECONFIG
# when set, which must already hold the images), deploys install.yaml,
# runs docs/examples/story1-inplace.yaml, makes one worker fail and prints
# how the group restarts in place. The local cluster is torn down at the
# end unless KEEP_CLUSTER=1.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/cluster/lib.sh

cluster_with_images 1
go run ./tools/demo -kubeconfig "$kubeconfig" -install bazel-bin/images/install.yaml
