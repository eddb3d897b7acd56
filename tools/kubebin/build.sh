#!/usr/bin/env bash
# Builds Kubernetes and etcd binaries from source through the Go module proxy
# and caches them under a directory keyed by every version that shapes them.
#
#   tools/kubebin/build.sh [component ...]    prints the cache directory
#
# Components: etcd kube-apiserver kubectl (the envtest set, the default),
# kube-controller-manager kube-scheduler kubelet kube-proxy (the local cluster).
# A second call with the same versions builds nothing: each binary is built at
# most once per key, so CI on a warm machine pays only a stat per binary.
#
# Why from source: no container or binary registry is reachable here, and
# k8s.io/kubernetes v1.37.2's source is refused by the proxy, so the
# Kubernetes side is pinned to v1.37.1.
set -euo pipefail

KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.1}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.0}"
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}"
OUT="${CACHE_ROOT}/kubebin/k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_${GO_VERSION}"

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kube-apiserver kubectl)

log() { echo "kubebin: $*" >&2; }

# A throwaway main module that requires the component's module. Building
# k8s.io/kubernetes as a dependency needs its staging modules pinned by
# version, because its own go.mod points them at ./staging, which only
# works inside the kubernetes repository.
prepare_kubernetes_module() {
  local dir=$1
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module kubebin.local/kubernetes

go 1.26.0

require k8s.io/kubernetes ${KUBERNETES_VERSION}
MOD
  local staging_version="v0${KUBERNETES_VERSION#v1}"
  (cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" >"$dir/kubernetes.json")
  local gomod
  gomod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' "$dir/kubernetes.json")
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk '{print $1}' | while read -r mod; do
    echo "replace ${mod} => ${mod} ${staging_version}" >>"$dir/go.mod"
  done
}

prepare_etcd_module() {
  local dir=$1
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module kubebin.local/etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
MOD
}

package_of() {
  case "$1" in
    etcd) echo "go.etcd.io/etcd/server/v3" ;;
    kubectl) echo "k8s.io/kubernetes/cmd/kubectl" ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy) echo "k8s.io/kubernetes/cmd/$1" ;;
    *) echo "kubebin: unknown component '$1' (known: etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy)" >&2; return 1 ;;
  esac
}

# The Kubernetes binaries carry their version, as release builds do: built
# from the module they would report v0.0.0-master+$Format:%H$, which clients
# that parse the server's version (Kueue) refuse. Binaries built before
# this stamp are rebuilt once, in place (the directory stays the same).
STAMP="gitVersion=${KUBERNETES_VERSION}"
version_ldflags() {
  local major minor rest pkg flags=""
  rest=${KUBERNETES_VERSION#v}
  major=${rest%%.*}
  rest=${rest#*.}
  minor=${rest%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${KUBERNETES_VERSION} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

mkdir -p "$OUT"
work=""
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT

for c in "${components[@]}"; do
  pkg=$(package_of "$c")
  if [ -x "$OUT/$c" ] && { [ "$c" = etcd ] || [ "$(cat "$OUT/.$c.stamp" 2>/dev/null)" = "$STAMP" ]; }; then
    continue
  fi
  [ -n "$work" ] || work=$(mktemp -d)
  if [ "$c" = etcd ]; then
    mod="$work/etcd"
    [ -f "$mod/go.mod" ] || prepare_etcd_module "$mod"
  else
    mod="$work/kubernetes"
    [ -f "$mod/go.mod" ] || prepare_kubernetes_module "$mod"
  fi
  log "building $c from $pkg (${KUBERNETES_VERSION}, etcd ${ETCD_VERSION}, ${GO_VERSION})"
  start=$(date +%s)
  # CGO off: static binaries that run anywhere, including inside images.
  ldflags=-s
  [ "$c" = etcd ] || ldflags="-s $(version_ldflags)"
  (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags="$ldflags" -o "$OUT/.$c.tmp" "$pkg")
  mv "$OUT/.$c.tmp" "$OUT/$c"
  [ "$c" = etcd ] || echo "$STAMP" >"$OUT/.$c.stamp"
  log "built $c in $(( $(date +%s) - start ))s"
done

echo "$OUT"
