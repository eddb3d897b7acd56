#!/usr/bin/env bash
# Builds what the local cluster needs beyond Kubernetes' own binaries, and
# prints the directory holding them:
#
#   coredns      CoreDNS from the Go module proxy, with the plugins a cluster
#                DNS uses (cached per CoreDNS and Go version)
#   nsforward    the host-loopback forwarder to the API server (this tree)
#   pause.tar    the Pod sandbox image (this tree; nothing can be pulled)
set -euo pipefail
cd "$(dirname "$0")/../.."

COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}"
OUT="${CACHE_ROOT}/cluster/coredns-${COREDNS_VERSION}_${GO_VERSION}"
mkdir -p "$OUT"
log() { echo "cluster/build: $*" >&2; }

if [ ! -x "$OUT/coredns" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cat >"$work/go.mod" <<MOD
module cluster.local/coredns

go 1.26.0

require github.com/coredns/coredns ${COREDNS_VERSION}
MOD
  # Only the plugins of the Corefile, in CoreDNS's own order; the full
  # set would compile every cloud provider's SDK.
  cat >"$work/main.go" <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
GO
  log "building CoreDNS ${COREDNS_VERSION}"
  start=$(date +%s)
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags=-s -o "$OUT/.coredns.tmp" .)
  mv "$OUT/.coredns.tmp" "$OUT/coredns"
  log "built CoreDNS in $(( $(date +%s) - start ))s"
fi

CGO_ENABLED=0 go build -trimpath -o "$OUT/nsforward" ./tools/cluster/nsforward
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/pause" ./tools/cluster/pause
go run ./images/cmd/build-image -binary "$OUT/pause" -path /pause \
  -repository localhost/jobset-cluster/pause -tag v1 -out "$OUT/pause.tar"
echo "$OUT"
