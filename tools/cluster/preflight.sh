#!/usr/bin/env bash
# Says, before anything is built, whether this machine can run the local
# cluster (tools/cluster/cluster.sh), and if not, everything it lacks and
# what to do instead. Exits 0 when it can, 1 otherwise, the list on stderr.
#
#   tools/cluster/preflight.sh        (cluster.sh up and tools/demo.sh run it)
#
# The cluster needs root (namespaces, mounts, cgroups), the cgroup v1
# freezer hierarchy (its node faults freeze a node's processes, and the
# kubelets run with the cgroupfs driver on v1), the Debian packages that
# hold its commands, and Go. JOBSET_PREFLIGHT_FS, empty by default, is the
# root under which /sys and /usr are looked at (tests point it at a fake
# tree); commands are found on PATH, root by `id -u`, free space by `df`
# on the filesystem of JOBSET_CLUSTER_DIR (or its nearest existing parent).
set -uo pipefail

fs="${JOBSET_PREFLIGHT_FS:-}"
missing=()

if [ "$(id -u 2>/dev/null)" != 0 ]; then
  missing+=("root: the cluster makes namespaces, mounts and cgroups; run it as root (sudo -E keeps your PATH and Go caches)")
fi

if [ ! -e "$fs/sys/fs/cgroup/freezer/cgroup.procs" ]; then
  if [ -e "$fs/sys/fs/cgroup/cgroup.controllers" ]; then
    missing+=("cgroup v1 with the freezer hierarchy: this machine runs cgroup v2 alone (the unified hierarchy, the default of current distributions); boot it with the kernel parameter systemd.unified_cgroup_hierarchy=0 where the distribution still supports cgroup v1")
  else
    missing+=("cgroup v1 with the freezer hierarchy: nothing is mounted at /sys/fs/cgroup/freezer")
  fi
fi

# Disk: the kubelets evict every Pod once their root's filesystem has less
# than 1% free (evictionHard in cluster.sh), and the images and Pods of a
# cluster take a few GiB more; below that a run fails at its first Pod,
# with no sign of why. Unknown (no df, or output it cannot read): no
# verdict.
cluster_dir="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}"
probe=$cluster_dir
while [ ! -e "$fs$probe" ] && [ -n "$probe" ] && [ "$probe" != / ]; do probe=${probe%/*}; done
size_k="" free_k=""
if command -v df >/dev/null 2>&1; then
  { read -r _ && read -r _ size_k _ free_k _; } < <(df -P -k "$fs${probe:-/}" 2>/dev/null)
fi
if [[ "$size_k" =~ ^[0-9]+$ ]] && [[ "$free_k" =~ ^[0-9]+$ ]]; then
  working_k=$((4 * 1024 * 1024))
  need_k=$((size_k / 100 + working_k))
  if [ "$free_k" -lt "$need_k" ]; then
    gib() { local tenths=$(($1 * 10 / 1048576)); echo "$((tenths / 10)).$((tenths % 10)) GiB"; }
    missing+=("disk: $(gib "$free_k") free on the filesystem of ${cluster_dir}, $(gib "$need_k") needed (the kubelets evict every Pod below 1% free, $(gib $((size_k / 100))) there, and the cluster's images and Pods take about $(gib "$working_k")); free space, for example old Bazel output bases under ~/.cache/bazel or the Go build cache (go clean -cache), or set JOBSET_CLUSTER_DIR to a larger filesystem")
  fi
fi

# command|package, in the order cluster.sh first needs them.
packages=(
  "go|Go 1.26 (go.dev/dl)"
  "nsenter|util-linux" "unshare|util-linux" "mount|util-linux" "mountpoint|util-linux" "setsid|util-linux"
  "ip|iproute2" "iptables|iptables" "conntrack|conntrack"
  "containerd|containerd" "ctr|containerd" "runc|runc"
  "curl|curl" "openssl|openssl" "sha256sum|coreutils"
  "/usr/lib/cni/bridge|containernetworking-plugins" "/usr/lib/cni/host-local|containernetworking-plugins"
)
absent=() from=()
declare -A named=()
for entry in "${packages[@]}"; do
  cmd=${entry%%|*} pkg=${entry#*|}
  case "$cmd" in
    /*) [ -x "$fs$cmd" ] && continue ;;
    *) command -v "$cmd" >/dev/null 2>&1 && continue ;;
  esac
  absent+=("$cmd")
  [ -n "${named[$pkg]:-}" ] || from+=("$pkg")
  named[$pkg]=1
done
if [ ${#absent[@]} -gt 0 ]; then
  list=$(printf '%s, ' "${from[@]}")
  missing+=("commands: ${absent[*]} (from: ${list%, })")
fi

[ ${#missing[@]} -eq 0 ] && exit 0

{
  echo "The local cluster (tools/cluster) cannot run on this machine. Missing:"
  for m in "${missing[@]}"; do echo "  - $m"; done
  printf '%s' "\
Instead, run against a cluster of your own (Kubernetes 1.36 or later):
  KUBECONFIG=<its kubeconfig> tools/demo.sh
Its nodes must hold the images the demo runs under the names Bazel gives
them (ghcr.io/fastjobset/jobset-controller, jobset-webhook and jobset-agent
at the release's tag, and ghcr.io/fastjobset/e2e-worker:dev), which it
builds as tars under bazel-bin/images/: load them into every node (kind
load image-archive, as e2e/kind/run.sh does, or ctr -n k8s.io images
import on each node), or push them to a registry of yours
(bazel run --config=bazel4 //images:push -- --registry <registry>) that
your nodes' containerd mirrors ghcr.io/fastjobset from.
The local cluster's requirements: docs/local-cluster.md.
"
} >&2
exit 1
