#!/usr/bin/env bash
# A Kubernetes v1.37.1 cluster of N nodes built from source, running on this
# machine in namespaces of its own: a control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, CoreDNS) in one mount + network
# namespace, and each node (containerd + runc, kubelet, kube-proxy) in
# another, all linked by veth pairs to a bridge in a network namespace that
# is nothing but the wire between them. A forwarder on the host's loopback
# carries the API server to host tools (kubectl, the e2e suite). Nothing is
# pulled: images are imported into each node's containerd from tars.
#
#   tools/cluster/cluster.sh up [image.tar ...]   start (or reuse) the cluster, import images into every node
#   tools/cluster/cluster.sh down                 stop every process it started, by PID and by cgroup
#   tools/cluster/cluster.sh build                build (or reuse) the binaries `up` needs, and nothing else
#   tools/cluster/cluster.sh kubeconfig           print the host kubeconfig's path
#   tools/cluster/cluster.sh import [--node NAME] image.tar...   import images (default: into every node)
#   tools/cluster/cluster.sh exec [--node NAME] CMD...   run CMD in a node's namespaces (default: the control plane's)
#   tools/cluster/cluster.sh nodes                print each node: name, IP, Pod CIDR, state
#   tools/cluster/cluster.sh socket [--node NAME] print a node's containerd socket (default: the first node's)
#   tools/cluster/cluster.sh node kill|freeze|cut|cut-api|back NAME...   a node fault, or its end, on one node or several at once
#   tools/cluster/cluster.sh stop COMPONENT [--node NAME]   stop one process (SIGTERM, SIGKILL after 10 s)
#   tools/cluster/cluster.sh kill COMPONENT [--node NAME]   crash one process (SIGKILL)
#   tools/cluster/cluster.sh start COMPONENT [--node NAME]  start it again, with the flags of `up`
#   tools/cluster/cluster.sh pid COMPONENT [--node NAME]    print its PID
#
# stop and kill return once the process is gone, so that a start after
# them never meets its predecessor (ports, etcd's lock); the fault specs of
# the end-to-end suite use them to take the API server or etcd away.
# COMPONENT: etcd kube-apiserver kube-controller-manager kube-scheduler
# coredns nsforward (the control plane's), containerd kubelet kube-proxy (a
# node's: --node NAME, the first node without it).
#
# Node faults, by the Node's name (jobset-node-1 ... jobset-node-N):
#   kill    SIGKILL to every process of the node (kubelet, containerd, shims,
#           containers) and its link down: a node that lost power. The Node
#           object stays.
#   freeze  every process of the node stopped by the cgroup freezer: a hung
#           machine (its kernel still answers on the network).
#   cut     the node's link down: kubelet and containers run on, unable to
#           reach the API server or any other node. Several nodes go down
#           at once, as a rack whose switch failed.
#   cut-api the node cut off from the control plane's host alone, its DNS
#           excepted: kubelet, kube-proxy and Pods (through the kubernetes
#           Service too) no longer reach the API server, nor it them; Pods
#           keep the Pod network to every other node.
#   back    undoes all of these: thaws, restarts what was killed, links up,
#           lets the API server through.
#
# JOBSET_CLUSTER_NODES (default 1) is how many nodes `up` makes; state lives
# in $JOBSET_CLUSTER_DIR (default /tmp/jobset-cluster) and the API server is
# on the host at 127.0.0.1:$JOBSET_CLUSTER_API_PORT (default 16443): two
# clusters with different ones coexist. JOBSET_CLUSTER_NODE_LEASE_SECONDS
# (default 40, the kubelet's own) is each kubelet's nodeLeaseDurationSeconds:
# it renews its Lease every quarter of that, which sets how soon the JobSet
# controller can tell a node lost. Binaries come from
# tools/kubebin/build.sh and tools/cluster/build.sh.
set -euo pipefail
SELF=$(realpath "$0")
cd "$(dirname "$0")/../.."

C="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}"
C=$(realpath -m "$C")
# 198.18.0.0/15 is reserved for benchmarking: nothing on a real network
# uses it. The control plane and the nodes share 198.18.0.0/24 on the
# bridge; node i has 198.18.0.(10+i) and Pods in 198.18.i.0/24.
CP_IP=198.18.0.1
CLUSTER_CIDR=198.18.0.0/17
SERVICE_CIDR=198.18.128.0/24
MAX_NODES=100
API_PORT=6443
HOST_API="127.0.0.1:${JOBSET_CLUSTER_API_PORT:-16443}"
NODE_LEASE_SECONDS=${JOBSET_CLUSTER_NODE_LEASE_SECONDS:-40}
PAUSE_IMAGE=localhost/jobset-cluster/pause:v1
NODE_COMPONENTS=(containerd kubelet kube-proxy)
CP_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler coredns nsforward)
# Each node's processes live under this cgroup, in every hierarchy (the
# kubelet's cgroupRoot), so that two kubelets never share a kubepods tree
# and a node's processes can all be found, frozen and killed; the path
# names the cluster's directory so that two clusters never share one either.
CGROUP="jobset-cluster/$(basename "$C")-$(printf %s "$C" | sha256sum | cut -c1-8)"
FREEZER=/sys/fs/cgroup/freezer

# Each line names the cluster by its directory: two may run side by side.
log() { printf '%s %s: %s\n' "$(date -u +%T)" "$(basename "$C")" "$*" >&2; }
die() { log "$*"; exit 1; }

node_name() { echo "jobset-node-$1"; }  # index
node_ip() { echo "198.18.0.$((10 + $1))"; }
pod_cidr() { echo "198.18.$1.0/24"; }
node_index() { # name: its index, or fail
  local i=${1#jobset-node-}
  if [[ "$i" =~ ^[1-9][0-9]*$ ]] && [ "$i" -le "$NODES" ] && [ "$1" = "$(node_name "$i")" ]; then
    echo "$i"
  else
    die "no node '$1' (nodes: $(node_names))"
  fi
}
node_names() { local i names=(); for i in $(seq "$NODES"); do names+=("$(node_name "$i")"); done; echo "${names[*]}"; }
node_dir() { echo "$C/nodes/$1"; }  # name

# in_host runs a command in the mount and network namespaces of a host of
# the cluster: control-plane, or a node by name.
in_host() { # host cmd...
  local h=$1; shift
  nsenter --mount="$C/ns/$h.mnt" --net="$C/ns/$h.net" -- "$@"
}
in_cp() { in_host control-plane "$@"; }
in_network() { nsenter --net="$C/ns/network.net" -- "$@"; }

# A unit is a process of the cluster: a control-plane component by its
# name, a node's as NODE/COMPONENT.
pidfile() { echo "$C/pids/$1.pid"; }
running() { # unit
  local f; f=$(pidfile "$1")
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# spawn starts a unit's process on the host, in the freezer cgroup given
# (or where the caller is).
spawn() { # unit cgroup cmd...
  local unit=$1 cg=$2; shift 2
  running "$unit" && return 0
  mkdir -p "$(dirname "$(pidfile "$unit")")" "$(dirname "$C/log/$unit.log")"
  if [ -n "$cg" ]; then
    # shellcheck disable=SC2016 # expanded by that sh
    set -- sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
  fi
  # A session of its own: a process started by a test (`start`) must
  # outlive the test, whose runner kills the test's process group.
  nohup setsid "$@" >>"$C/log/$unit.log" 2>&1 &
  echo $! >"$(pidfile "$unit")"
}

wait_for() { # description seconds cmd...
  local what=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what not ready after ${seconds}s; see $C/log/"
    sleep 0.2
  done
  log "$what ready"
}

binaries() {
  KUBEBIN=$(tools/kubebin/build.sh etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy)
  CLUSTERBIN=$(tools/cluster/build.sh)
}

# load reads what `up` recorded: the binaries (`start` runs with another
# HOME in tests and must not build), the number of nodes and where the
# host reaches the API server.
load() {
  [ -f "$C/cluster.env" ] || die "no cluster in $C"
  # shellcheck source=/dev/null # written by up
  source "$C/cluster.env"
}

# The namespaces are persistent (bind-mounted namespace files in $C/ns).
# The network namespace holds the bridge every host's veth is a port of;
# it has no address of its own, so nothing can reach it.
create_network() {
  mkdir -p "$C/ns"
  if ! mountpoint -q "$C/ns"; then
    mount --bind "$C/ns" "$C/ns"
    mount --make-private "$C/ns"
  fi
  if [ -f "$C/ns/network.net" ] && in_network true 2>/dev/null; then
    return 0
  fi
  touch "$C/ns/network.net"
  unshare --net="$C/ns/network.net" true
  in_network ip link set lo up
  in_network ip link add br0 type bridge
  in_network ip link set br0 up
}

# create_host makes a host's namespaces, its link to the bridge (eth0
# inside, PORT on the bridge) and the routes to every node's Pods: each
# node forwards to its own Pods, as a host-gateway Pod network does.
create_host() { # host ip port [own node index]
  local h=$1 ip=$2 port=$3 own=${4:-0}
  if [ -f "$C/ns/$h.net" ] && in_host "$h" true 2>/dev/null; then
    return 0
  fi
  touch "$C/ns/$h.mnt" "$C/ns/$h.net"
  unshare --mount="$C/ns/$h.mnt" --net="$C/ns/$h.net" --propagation private true
  in_network ip link add "$port" type veth peer name eth0 netns "$C/ns/$h.net"
  in_network ip link set "$port" master br0 up
  in_host "$h" ip link set lo up
  in_host "$h" ip addr add "$ip/24" dev eth0
  in_host "$h" ip link set eth0 up
  # Nothing answers there: traffic to anything outside the cluster fails.
  in_host "$h" ip route add default via 198.18.0.254 dev eth0 onlink
  local j
  for j in $(seq "$NODES"); do
    [ "$j" = "$own" ] || in_host "$h" ip route add "$(pod_cidr "$j")" via "$(node_ip "$j")" dev eth0
  done
}

# create_node adds to a node's namespaces fake copies of the machine-wide
# sysctls the kubelet writes and private copies of the directories kubelet,
# CNI and containerd use whatever their flags say, and makes its cgroups.
create_node() { # index
  local i=$1 n d
  n=$(node_name "$i"); d=$(node_dir "$n")
  make_cgroup "$CGROUP/$n/system"
  if [ -f "$C/ns/$n.net" ] && in_host "$n" true 2>/dev/null; then
    return 0
  fi
  create_host "$n" "$(node_ip "$i")" "n$i" "$i"
  mkdir -p "$d/sysctl"
  echo 1 >"$d/sysctl/overcommit_memory"
  echo 10 >"$d/sysctl/panic"
  echo 1 >"$d/sysctl/panic_on_oops"
  in_host "$n" bash -euc "
    mount --bind $d/sysctl/overcommit_memory /proc/sys/vm/overcommit_memory
    mount --bind $d/sysctl/panic /proc/sys/kernel/panic
    mount --bind $d/sysctl/panic_on_oops /proc/sys/kernel/panic_on_oops
    sysctl -qw net.ipv4.ip_forward=1
    for p in /var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /run/containerd /run/netns /opt/containerd /etc/kubernetes; do
      mkdir -p \$p $d/hostpaths\$p
      mount --bind $d/hostpaths\$p \$p
    done
  "
}

# make_cgroup creates a cgroup in every hierarchy: the kubelet refuses a
# cgroupRoot missing from any. A cpuset takes no process until it has CPUs
# and memory nodes, which a new one inherits from nothing.
make_cgroup() { # path
  local m p d parent
  for m in /sys/fs/cgroup/*; do
    mountpoint -q "$m" || continue
    mkdir -p "$m/$1"
    [ -f "$m/cpuset.cpus" ] || continue
    d=$m
    for p in ${1//\// }; do
      parent=$d; d=$d/$p
      [ -n "$(cat "$d/cpuset.cpus")" ] || cat "$parent/cpuset.cpus" >"$d/cpuset.cpus"
      [ -n "$(cat "$d/cpuset.mems")" ] || cat "$parent/cpuset.mems" >"$d/cpuset.mems"
    done
  done
}

generate_config() {
  mkdir -p "$C/pki" "$C/log" "$C/pids" "$C/run"
  if [ ! -f "$C/pki/sa.key" ]; then
    openssl genrsa -out "$C/pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$C/pki/sa.key" -pubout -out "$C/pki/sa.pub" 2>/dev/null
    head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$C/pki/admin-token"
  fi
  local admin i n; admin=$(cat "$C/pki/admin-token")
  {
    echo "$admin,admin,admin,\"system:masters\""
    echo "kcm-$admin,system:kube-controller-manager,kcm,"
    echo "scheduler-$admin,system:kube-scheduler,scheduler,"
    echo "proxy-$admin,system:kube-proxy,proxy,"
    # The Node authorizer lets each kubelet at its own Node and Pods only.
    for i in $(seq "$NODES"); do
      n=$(node_name "$i")
      echo "kubelet-$i-$admin,system:node:$n,kubelet-$i,\"system:nodes\""
    done
  } >"$C/pki/tokens.csv"
  local who
  for who in admin kcm scheduler proxy; do
    local token="$admin"; [ "$who" = admin ] || token="$who-$admin"
    kubeconfig "https://$CP_IP:$API_PORT" "$token" >"$C/$who.kubeconfig"
  done
  kubeconfig "https://$HOST_API" "$admin" >"$C/host.kubeconfig"
  # No upstream DNS is reachable: Pods resolve cluster names only.
  echo "nameserver $CP_IP" >"$C/resolv.conf"
  cat >"$C/Corefile" <<EOF
.:53 {
    bind $CP_IP
    errors
    health 127.0.0.1:8180
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $C/admin.kubeconfig
        pods insecure
    }
    cache 5
}
EOF
  for i in $(seq "$NODES"); do
    node_config "$i" "kubelet-$i-$admin"
  done
  # Where the first node's containerd was when the cluster had one node.
  ln -sfn "$(node_dir "$(node_name 1)")/run/containerd.sock" "$C/run/containerd.sock"
}

node_config() { # index kubelet-token
  local i=$1 n d ip cidr
  n=$(node_name "$i"); d=$(node_dir "$n"); ip=$(node_ip "$i"); cidr=$(pod_cidr "$i")
  mkdir -p "$d/cni" "$d/run"
  kubeconfig "https://$CP_IP:$API_PORT" "$2" >"$d/kubelet.kubeconfig"
  cat >"$d/containerd.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/run/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_cdi = false
  # No CAP_SYS_RESOURCE on this machine kind: never ask runc to lower
  # oom_score_adj below containerd's own.
  restrict_oom_score_adj = true
  disable_tcp_service = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"
EOF
  cat >"$d/cni/10-jobset-cluster.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "jobset-cluster",
  "plugins": [{
    "type": "bridge", "bridge": "kp0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$d/run/cni-ipam"}
  }]
}
EOF
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine kind: cgroup v1, cgroupfs.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP/$n
containerRuntimeEndpoint: unix://$d/run/containerd.sock
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDNS: [$CP_IP]
clusterDomain: cluster.local
resolvConf: $C/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
failSwapOn: false
protectKernelDefaults: false
syncFrequency: 10s
nodeLeaseDurationSeconds: $NODE_LEASE_SECONDS
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 5s
podCIDR: $cidr
maxPods: 250
EOF
  cat >"$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $C/proxy.kubeconfig}
hostnameOverride: $n
clusterCIDR: $CLUSTER_CIDR
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Pods share one bridge without br_netfilter: masquerade Service traffic so
# that replies come back through the node, where the DNAT is undone.
iptables: {masqueradeAll: true}
# Leave the machine's conntrack sysctls alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

kubeconfig() { # server token
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: jobset-cluster
  cluster: {server: "$1", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$2"}
contexts:
- name: jobset-cluster
  context: {cluster: jobset-cluster, user: admin}
current-context: jobset-cluster
EOF
}

# kc is kubectl inside the control plane's namespace, as the cluster admin.
kc() { in_cp "$KUBEBIN/kubectl" --kubeconfig "$C/admin.kubeconfig" "$@"; }

nodes_ready() {
  local ready
  ready=$(kc get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  [ "$ready" = "$NODES" ]
}

containerd_socket() { echo "$(node_dir "$1")/run/containerd.sock"; }  # node
ctr_on() { local n=$1; shift; in_host "$n" ctr --address "$(containerd_socket "$n")" "$@"; }

import_images() { # node tar...
  local n=$1 tar; shift
  for tar in "$@"; do
    # nsenter --mount starts ctr in /: a relative path would not be found.
    tar=$(realpath "$tar")
    ctr_on "$n" -n k8s.io images import "$tar" >/dev/null
    log "$n: imported $(basename "$tar")"
  done
}

# import_everywhere imports into the nodes side by side: each has its own
# content store, and unpacking is mostly waiting for the disk.
import_everywhere() { # tar...
  local i pids=() pid
  for i in $(seq "$NODES"); do
    import_images "$(node_name "$i")" "$@" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || die "an import failed"; done
}

# start_unit starts one process of the cluster with its flags (binaries,
# the namespaces and the configuration must be there: `up` makes them).
start_unit() { # unit
  local k="$KUBEBIN" unit=$1
  case "$unit" in
    */*) start_node_unit "${unit%%/*}" "${unit#*/}"; return ;;
  esac
  case "$unit" in
    etcd)
      spawn etcd "" nsenter --mount="$C/ns/control-plane.mnt" --net="$C/ns/control-plane.net" -- \
        "$k/etcd" --name jobset-cluster --data-dir "$C/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster jobset-cluster=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn ;;
    kube-apiserver)
      # The API server reaches a kubelet (logs, exec, port-forward) at the
      # Node's InternalIP, which the kubelet's --node-ip sets: by default it
      # prefers the Hostname, jobset-node-1, which no DNS it can ask resolves.
      # Without --kubelet-certificate-authority it does not verify the kubelet's
      # self-signed serving certificate, and the kubelet (anonymous,
      # AlwaysAllow) asks it for no client certificate: both ends are reachable
      # only inside the cluster's namespaces. No kube-proxy runs beside the
      # API server: it dials a webhook's or an aggregated API's Service at
      # one of its endpoints itself (--enable-aggregator-routing), over the
      # Pod network's routes.
      spawn kube-apiserver "" nsenter --mount="$C/ns/control-plane.mnt" --net="$C/ns/control-plane.net" -- \
        "$k/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
        --bind-address=0.0.0.0 --advertise-address="$CP_IP" --secure-port="$API_PORT" \
        --cert-dir="$C/pki/apiserver" --token-auth-file="$C/pki/tokens.csv" --authorization-mode=Node,RBAC \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$C/pki/sa.pub" --service-account-signing-key-file="$C/pki/sa.key" \
        --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true \
        --kubelet-preferred-address-types=InternalIP --enable-aggregator-routing=true ;;
    nsforward)
      spawn nsforward "" "$CLUSTERBIN/nsforward" -netns "$C/ns/control-plane.net" -listen "$HOST_API" -target "$CP_IP:$API_PORT" ;;
    kube-controller-manager)
      spawn kube-controller-manager "" nsenter --mount="$C/ns/control-plane.mnt" --net="$C/ns/control-plane.net" -- \
        "$k/kube-controller-manager" --kubeconfig="$C/kcm.kubeconfig" \
        --authentication-kubeconfig="$C/kcm.kubeconfig" --authorization-kubeconfig="$C/kcm.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
        --service-account-private-key-file="$C/pki/sa.key" --root-ca-file="$C/pki/apiserver/apiserver.crt" ;;
    kube-scheduler)
      spawn kube-scheduler "" nsenter --mount="$C/ns/control-plane.mnt" --net="$C/ns/control-plane.net" -- \
        "$k/kube-scheduler" --kubeconfig="$C/scheduler.kubeconfig" \
        --authentication-kubeconfig="$C/scheduler.kubeconfig" --authorization-kubeconfig="$C/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false ;;
    coredns)
      spawn coredns "" nsenter --mount="$C/ns/control-plane.mnt" --net="$C/ns/control-plane.net" -- \
        "$CLUSTERBIN/coredns" -conf "$C/Corefile" ;;
    *) die "unknown component $unit" ;;
  esac
}

# start_node_unit starts a node's process in the node's own freezer cgroup,
# where its children (containerd's shims, the containers under the
# kubelet's cgroupRoot) are too.
start_node_unit() { # node component
  local n=$1 k="$KUBEBIN" d
  d=$(node_dir "$n")
  local run=(spawn "$n/$2" "$FREEZER/$CGROUP/$n/system" nsenter --mount="$C/ns/$n.mnt" --net="$C/ns/$n.net" --)
  case "$2" in
    containerd) "${run[@]}" /usr/bin/containerd --config "$d/containerd.toml" ;;
    kubelet)
      "${run[@]}" "$k/kubelet" --config="$d/kubelet.yaml" --kubeconfig="$d/kubelet.kubeconfig" \
        --root-dir="$d/kubelet" --node-ip="$(node_ip "$(node_index "$n")")" --hostname-override="$n" ;;
    kube-proxy) "${run[@]}" "$k/kube-proxy" --config="$d/kube-proxy.yaml" ;;
    *) die "unknown component $2" ;;
  esac
}

up() {
  # Before anything is built: what this machine lacks, and the alternative.
  tools/cluster/preflight.sh || exit 1
  NODES=${JOBSET_CLUSTER_NODES:-1}
  if ! [[ "$NODES" =~ ^[1-9][0-9]*$ ]] || [ "$NODES" -gt "$MAX_NODES" ]; then
    die "JOBSET_CLUSTER_NODES=$NODES: 1 to $MAX_NODES"
  fi
  if [ -f "$C/cluster.env" ]; then
    local want=$NODES
    load
    [ "$NODES" = "$want" ] || die "the cluster in $C has $NODES nodes, not $want: down it first"
  fi
  binaries
  local i n
  create_network
  create_host control-plane "$CP_IP" cp
  for i in $(seq "$NODES"); do
    create_node "$i"
    # A node left frozen or cut in a cluster `up` reuses is made whole.
    thaw "$(node_name "$i")"
    link "$(node_name "$i")" up
    api_back "$(node_name "$i")"
  done
  generate_config
  printf 'KUBEBIN=%q\nCLUSTERBIN=%q\nNODES=%q\nHOST_API=%q\n' "$KUBEBIN" "$CLUSTERBIN" "$NODES" "$HOST_API" >"$C/cluster.env"

  start_unit etcd
  for i in $(seq "$NODES"); do start_unit "$(node_name "$i")/containerd"; done
  wait_for etcd 60 in_cp curl -sf http://127.0.0.1:2379/health
  start_unit kube-apiserver
  start_unit nsforward
  for i in $(seq "$NODES"); do
    n=$(node_name "$i")
    wait_for "$n: containerd" 60 ctr_on "$n" version
  done
  import_everywhere "$CLUSTERBIN/pause.tar" "$@"
  wait_for kube-apiserver 120 kc get --raw /readyz

  start_unit kube-controller-manager
  start_unit kube-scheduler
  start_unit coredns
  for i in $(seq "$NODES"); do
    n=$(node_name "$i")
    start_unit "$n/kubelet"
    start_unit "$n/kube-proxy"
  done
  # Starts processes again for `start` and `node back` (see there).
  [ -p "$C/run/starter.fifo" ] || mkfifo "$C/run/starter.fifo"
  spawn starter "" "$SELF" starter
  wait_for "$NODES node(s)" 180 nodes_ready
  wait_for "default ServiceAccount" 60 kc get serviceaccount default -n default
  wait_for "cluster DNS" 60 in_cp curl -sf http://127.0.0.1:8181/ready
  wait_for "API server from the host" 30 "$KUBEBIN/kubectl" --kubeconfig "$C/host.kubeconfig" get --raw /readyz
  log "up: $(node_names); KUBECONFIG=$C/host.kubeconfig"
}

# alive: the process exists and is no zombie. A zombie holds no port or
# lock, and whoever reaps the cluster's processes (init, or a subreaper)
# may take its time.
alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; }

stop() { # unit [signal]: returns once the process is gone
  local f signal=${2:-TERM}
  f=$(pidfile "$1")
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  # A process may end between alive and kill (a SIGKILLed API server on a
  # loaded machine takes seconds to go): that is what was asked.
  if alive "$pid"; then
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 200); do alive "$pid" || break; sleep 0.05; done
    if alive "$pid"; then
      kill -9 "$pid" 2>/dev/null || true
      while alive "$pid"; do sleep 0.05; done
    fi
  fi
  rm -f "$f"
}

# request_start starts a unit through the starter when it runs: a test
# runner (Bazel's process-wrapper is a subreaper) kills every process its
# test left, so what a test starts must not be the test's child.
request_start() { # unit
  running "$1" && return 0
  if running starter; then
    echo "$1" >"$C/run/starter.fifo"
    local deadline=$(( $(date +%s) + 30 ))
    until running "$1"; do
      [ "$(date +%s)" -lt "$deadline" ] || die "the starter did not start $1; see $C/log/starter.log"
      sleep 0.05
    done
  else
    start_unit "$1"
  fi
}

# unit_of turns COMPONENT [--node NAME] into a unit.
unit_of() { # component [--node name]
  local comp=${1:-} node=""
  [ "${2:-}" = --node ] && node=${3:?--node needs a name}
  if [[ " ${CP_COMPONENTS[*]} " == *" $comp "* ]]; then
    [ -z "$node" ] || die "$comp runs on the control plane, not on a node"
    echo "$comp"
  elif [[ " ${NODE_COMPONENTS[*]} " == *" $comp "* ]]; then
    [ -n "$node" ] || node=$(node_name 1)
    node_index "$node" >/dev/null
    echo "$node/$comp"
  else
    echo "unknown component '$comp' (${CP_COMPONENTS[*]} ${NODE_COMPONENTS[*]})" >&2
    exit 2
  fi
}

# node_pids lists every process in a node's cgroup tree: its daemons, the
# shims, every container's processes.
node_pids() { # node
  find "$FREEZER/$CGROUP/$1" -name cgroup.procs -exec cat {} + 2>/dev/null
}

freezer_state() { cat "$FREEZER/$CGROUP/$1/freezer.state"; }  # node

freeze() { # node: returns once every process is frozen
  echo FROZEN >"$FREEZER/$CGROUP/$1/freezer.state"
  local deadline=$(( $(date +%s) + 30 ))
  until [ "$(freezer_state "$1")" = FROZEN ]; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$1 not frozen after 30s"
    sleep 0.05
  done
}

thaw() { echo THAWED >"$FREEZER/$CGROUP/$1/freezer.state"; }  # node

# links sets the links of several nodes up or down in one batch: a rack
# goes off the network at once, not node after node.
links() { # up|down node...
  local state=$1 n; shift
  for n in "$@"; do echo "link set n$(node_index "$n") $state"; done | in_network ip -batch -
}
link() { links "$2" "$1"; }  # node up|down

# The API server's path to and from a node is cut in the node's own
# network namespace, by the mangle table's PREROUTING (what arrives from
# the control plane's host, for the kubelet or a Pod) and POSTROUTING
# (what leaves for it, after kube-proxy's DNAT of the kubernetes Service
# to $CP_IP:$API_PORT, from the kubelet, kube-proxy or a Pod). kube-proxy
# writes the nat and filter tables only, so nothing of its own comes
# first. DNS stays: CoreDNS shares the control plane's host here, where a
# cluster runs it on nodes, and a cut-off Pod still finds its peers by
# name.
API_CUT_CHAIN=JOBSET-CUT-API
api_cut() { # node
  api_cut_on "$1" && return 0
  in_host "$1" iptables -w -t mangle -N "$API_CUT_CHAIN"
  local p
  for p in udp tcp; do
    in_host "$1" iptables -w -t mangle -A "$API_CUT_CHAIN" -d "$CP_IP" -p "$p" --dport 53 -j RETURN
    in_host "$1" iptables -w -t mangle -A "$API_CUT_CHAIN" -s "$CP_IP" -p "$p" --sport 53 -j RETURN
  done
  in_host "$1" iptables -w -t mangle -A "$API_CUT_CHAIN" -d "$CP_IP" -j DROP
  in_host "$1" iptables -w -t mangle -A "$API_CUT_CHAIN" -s "$CP_IP" -j DROP
  in_host "$1" iptables -w -t mangle -I PREROUTING 1 -j "$API_CUT_CHAIN"
  in_host "$1" iptables -w -t mangle -I POSTROUTING 1 -j "$API_CUT_CHAIN"
}
api_cut_on() { in_host "$1" iptables -w -t mangle -S "$API_CUT_CHAIN" >/dev/null 2>&1; }  # node
api_back() { # node
  api_cut_on "$1" || return 0
  local hook
  for hook in PREROUTING POSTROUTING; do
    while in_host "$1" iptables -w -t mangle -D "$hook" -j "$API_CUT_CHAIN" 2>/dev/null; do :; done
  done
  in_host "$1" iptables -w -t mangle -F "$API_CUT_CHAIN"
  in_host "$1" iptables -w -t mangle -X "$API_CUT_CHAIN"
}

# kill_node SIGKILLs every process of a node at once: frozen first, so
# that none forks or restarts another while the others die; a frozen
# process dies when thawed.
kill_node() { # node
  freeze "$1"
  local pid
  for pid in $(node_pids "$1"); do kill -9 "$pid" 2>/dev/null || true; done
  thaw "$1"
  local deadline=$(( $(date +%s) + 30 ))
  until [ -z "$(node_pids "$1")" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$1: processes left after SIGKILL: $(node_pids "$1" | tr '\n' ' ')"
    sleep 0.05
  done
  rm -f "$C/pids/$1/"*.pid
}

node_state() { # node: what `nodes` prints
  local s=() c
  [ "$(freezer_state "$1")" = THAWED ] || s+=(frozen)
  # (ip cannot name the peer's namespace, and says so on stderr.)
  in_network ip link show "n$(node_index "$1")" 2>/dev/null | grep -q 'state UP' || s+=(cut)
  ! api_cut_on "$1" || s+=(cut-api)
  for c in "${NODE_COMPONENTS[@]}"; do running "$1/$c" || s+=("$c-down"); done
  [ ${#s[@]} -gt 0 ] || s=(up)
  (IFS=,; echo "${s[*]}")
}

node_fault() { # kill|freeze|cut|cut-api|back node...
  local action=$1 n; shift
  [ $# -gt 0 ] || usage
  for n in "$@"; do node_index "$n" >/dev/null; done
  case "$action" in
    # A node that lost power answers nothing: without its link down, the
    # kernel would still answer for its Pods' network namespaces, which
    # outlive their processes.
    kill) links down "$@"; for n in "$@"; do kill_node "$n"; done ;;
    freeze) for n in "$@"; do freeze "$n"; done ;;
    cut) links down "$@" ;;
    cut-api) for n in "$@"; do api_cut "$n"; done ;;
    back)
      for n in "$@"; do thaw "$n"; done
      links up "$@"
      for n in "$@"; do api_back "$n"; done
      for n in "$@"; do
        request_start "$n/containerd"
        wait_for "$n: containerd" 60 ctr_on "$n" version
        request_start "$n/kubelet"
        request_start "$n/kube-proxy"
      done ;;
    *) usage ;;
  esac
  log "node $action $*"
}

down() {
  [ -d "$C" ] || return 0
  NODES=0
  if [ -f "$C/cluster.env" ]; then load; fi
  # SIGKILL: nothing of theirs outlives `down`, and the API server's
  # graceful shutdown alone takes seconds.
  stop starter KILL; stop coredns KILL; stop kube-scheduler KILL; stop kube-controller-manager KILL
  local i n
  for i in $(seq "$NODES"); do
    n=$(node_name "$i")
    if [ -d "$FREEZER/$CGROUP/$n" ]; then kill_node "$n"; fi
  done
  stop nsforward KILL; stop kube-apiserver KILL; stop etcd KILL
  # Whatever else has a PID recorded (a cluster made by another version of
  # this script).
  local f
  while IFS= read -r f; do
    f=${f#"$C/pids/"}; stop "${f%.pid}" KILL
  done < <(find "$C/pids" -name '*.pid' 2>/dev/null)
  local m
  for m in /sys/fs/cgroup/*; do
    if [ -d "$m/$CGROUP" ]; then find "$m/$CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null; fi
    rmdir "$m/${CGROUP%%/*}" 2>/dev/null || true
  done
  if [ -d "$C/ns" ]; then
    for f in "$C/ns/"*; do umount "$f" 2>/dev/null || true; done
    umount "$C/ns" 2>/dev/null || true
  fi
  rm -rf "$C"
  log "down"
}

# with_node takes --node NAME off the front of the arguments: NODE is its
# value, or empty; ARGS the rest.
with_node() {
  NODE=""
  if [ "${1:-}" = --node ]; then
    NODE=${2:?--node needs a name}
    node_index "$NODE" >/dev/null
    shift 2
  fi
  ARGS=("$@")
}

usage() {
  echo "usage: $0 up [image.tar ...] | down | build | kubeconfig | nodes | import [--node NAME] image.tar... | exec [--node NAME] CMD... | socket [--node NAME] | node kill|freeze|cut|cut-api|back NAME... | stop|kill|start|pid COMPONENT [--node NAME]" >&2
  exit 2
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  build) binaries ;;
  kubeconfig) echo "$C/host.kubeconfig" ;;
  nodes)
    load
    for i in $(seq "$NODES"); do
      n=$(node_name "$i")
      echo "$n $(node_ip "$i") $(pod_cidr "$i") $(node_state "$n")"
    done ;;
  import)
    load; shift; with_node "$@"
    if [ -n "$NODE" ]; then import_images "$NODE" "${ARGS[@]}"; else import_everywhere "${ARGS[@]}"; fi ;;
  exec)
    load; shift; with_node "$@"
    in_host "${NODE:-control-plane}" "${ARGS[@]}" ;;
  socket)
    load; shift; with_node "$@"
    containerd_socket "${NODE:-$(node_name 1)}" ;;
  node) load; [ $# -ge 3 ] || usage; node_fault "${@:2}" ;;
  stop|kill|start|pid)
    load
    unit=$(unit_of "${@:2}")
    # A frozen process takes no signal until thawed.
    if [[ "$unit" == */* ]] && [ "$(freezer_state "${unit%%/*}")" != THAWED ]; then
      die "${unit%%/*} is frozen: node back ${unit%%/*} first"
    fi
    case "$1" in
      stop) stop "$unit"; log "$unit stopped" ;;
      kill) stop "$unit" KILL; log "$unit killed" ;;
      start)
        running "$unit" && die "$unit is running (pid $(cat "$(pidfile "$unit")"))"
        request_start "$unit"
        log "$unit started (pid $(cat "$(pidfile "$unit")"))" ;;
      pid) running "$unit" || die "$unit is not running"; cat "$(pidfile "$unit")" ;;
    esac ;;
  starter) # internal: what `up` leaves running for `start` and `node back`
    load
    while true; do
      # Every line of every writer, until the last one closes the fifo.
      while read -r unit; do
        [ -n "$unit" ] && start_unit "$unit" && log "started $unit (pid $(cat "$(pidfile "$unit")"))"
      done <"$C/run/starter.fifo"
    done ;;
  *) usage ;;
esac
