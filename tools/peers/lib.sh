# shellcheck shell=bash
# Sourced by the scripts that build peers of ours from the Go module proxy
# (tools/peers/{kueue,trainer,jobset}.sh): nothing comes from a registry,
# nothing of a peer's code enters our tree or our go.mod. A build leaves
# binaries, image tars and NAME.kustomize.yaml (kustomize's rendering of
# the module's own configuration with our image) in a directory of its
# own under the cache; tools/testing/peers reads that rendering, fits it to
# the cluster and installs it.
#
#   peers_cache_root            ~/.cache/jobset-tools (JOBSET_TOOLS_CACHE)
#   peers_go_build DIR MODULE VERSION PACKAGE OUT
#                               builds PACKAGE of MODULE@VERSION, a static,
#                               stripped binary, in a throwaway main module DIR
#   peers_module_dir MODULE VERSION
#                               the module's directory in the module cache,
#                               downloaded if need be (no built module needed)
#   peers_config MODULE VERSION DIR WORK
#                               a writable copy of the module's DIR (its
#                               kustomize configuration) under WORK, printed
#   peers_kustomize             prints the path of kustomize, built once per
#                               (KUSTOMIZE_VERSION, Go version)
#   peers_image BINARY PATH REFERENCE VERSION OUT
#                               the image tar OUT as ours are built: FROM
#                               scratch, BINARY at PATH, nonroot
#                               (images/cmd/build-image)

KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.2}" # v5.8.3 needs Go 1.27

peers_cache_root() {
  echo "${JOBSET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobset-tools}"
}

peers_log() { echo "peers: $*" >&2; }

# A throwaway main module that requires only MODULE, so the peer builds with
# its own requirements (its go.sum is the starting point: the module zip it
# comes in is verified, and it vouches for modules the checksum database may
# not know).
peers_go_build() { # dir module version package out
  local dir=$1 module=$2 version=$3 pkg=$4 out=$5
  mkdir -p "$dir"
  printf 'module tools.local/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$(basename "$dir")" "$module" "$version" >"$dir/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >"$dir/tools.go"
  (
    cd "$dir" || exit
    export GOFLAGS=-mod=mod CGO_ENABLED=0
    cp "$(peers_module_dir "$module" "$version")/go.sum" go.sum
    chmod u+w go.sum
    local start=$SECONDS
    go mod tidy >/dev/null
    go build -trimpath -ldflags="-s -w" -o "$out.tmp" "$pkg"
    mv "$out.tmp" "$out"
    peers_log "built $pkg $version in $((SECONDS - start))s"
  )
}

peers_module_dir() { # module version
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1@$2" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  rm -rf "$tmp"
}

peers_config() { # module version dir work
  local src
  src="$(peers_module_dir "$1" "$2")/$3"
  [ -d "$src" ] || { peers_log "no $3 in $1 $2"; return 1; }
  cp -r "$src" "$4/$3"
  chmod -R u+w "$4/$3"
  echo "$4/$3"
}

peers_kustomize() {
  local out
  out="$(peers_cache_root)/kustomize/kustomize-${KUSTOMIZE_VERSION}_$(go env GOVERSION)"
  if [ ! -x "$out/kustomize" ]; then
    local work
    work=$(mktemp -d)
    mkdir -p "$out"
    peers_go_build "$work/kustomize" sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" \
      sigs.k8s.io/kustomize/kustomize/v5 "$out/kustomize"
    rm -rf "$work"
  fi
  echo "$out/kustomize"
}

peers_image() { # binary path reference version out
  local work
  work=$(mktemp -d)
  go build -o "$work/build-image" ./images/cmd/build-image
  "$work/build-image" -binary "$1" -path "$2" -repository "${3%:*}" -tag "${3##*:}" \
    -label "org.opencontainers.image.version=$4" -out "$5.tmp"
  mv "$5.tmp" "$5"
  rm -rf "$work"
}
