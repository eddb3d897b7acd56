#!/usr/bin/env bash
# A single-node Kubernetes v1.37.1 cluster built from source, running in a
# private mount + network namespace of this machine: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd + runc, kubelet,
# kube-proxy (iptables) and CoreDNS. Everything listens inside the namespace,
# except a forwarder on the host's loopback that carries the API server to
# host tools (kubectl, the e2e suite). Nothing is pulled: images are
# imported into containerd from tars.
#
#   tools/cluster/cluster.sh up [image.tar ...]   start (or reuse) the cluster, import images
#   tools/cluster/cluster.sh down                 stop every process it started, by PID
#   tools/cluster/cluster.sh kubeconfig           print the host kubeconfig's path
#   tools/cluster/cluster.sh import image.tar...   import images into the running cluster
#   tools/cluster/cluster.sh exec CMD...          run CMD inside the namespace
#   tools/cluster/cluster.sh stop COMPONENT       stop one process (SIGTERM, SIGKILL after 10 s)
#   tools/cluster/cluster.sh kill COMPONENT       crash one process (SIGKILL)
#   tools/cluster/cluster.sh start COMPONENT      start it again, with the flags of `up`
#   tools/cluster/cluster.sh pid COMPONENT        print its PID
#
# stop and kill return once the process is gone, so that a start after
# them never meets its predecessor (ports, etcd's lock); the fault specs of
# the end-to-end suite use them to take the API server or etcd away.
# COMPONENT: etcd kube-apiserver kube-controller-manager kube-scheduler
# containerd kubelet kube-proxy coredns nsforward.
#
# State lives in $JOBSET_CLUSTER_DIR (default /tmp/jobset-cluster); binaries
# come from tools/kubebin/build.sh and tools/cluster/build.sh.
set -euo pipefail
SELF=$(realpath "$0")
cd "$(dirname "$0")/../.."

C="${JOBSET_CLUSTER_DIR:-/tmp/jobset-cluster}"
NODE_IP=198.18.0.1       # the node, on a veth inside the namespace
POD_CIDR=198.18.1.0/24   # Pods, on the bridge kp0
SERVICE_CIDR=198.18.128.0/24
NODE_NAME=jobset-node
API_PORT=6443
HOST_API="127.0.0.1:${JOBSET_CLUSTER_API_PORT:-16443}"
PAUSE_IMAGE=localhost/jobset-cluster/pause:v1

log() { printf '%s cluster: %s\n' "$(date -u +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }

in_ns() { nsenter --mount="$C/ns/mnt" --net="$C/ns/net" -- "$@"; }

running() { # name
  local f="$C/pids/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

start() { # name cmd...: a process inside the namespace
  local name=$1; shift
  start_on_host "$name" nsenter --mount="$C/ns/mnt" --net="$C/ns/net" -- "$@"
}

start_on_host() { # name cmd...
  local name=$1; shift
  running "$name" && return 0
  # A session of its own: a process started by a test (`start`) must
  # outlive the test, whose runner kills the test's process group.
  nohup setsid "$@" >>"$C/log/$name.log" 2>&1 &
  echo $! >"$C/pids/$name.pid"
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

# The namespace: persistent (bind-mounted namespace files), with the node's
# veth, fake copies of the machine-wide sysctls the kubelet writes, and
# private copies of the directories kubelet, CNI and containerd use whatever
# their flags say.
create_namespace() {
  mkdir -p "$C/ns"
  if ! mountpoint -q "$C/ns"; then
    mount --bind "$C/ns" "$C/ns"
    mount --make-private "$C/ns"
  fi
  if [ -f "$C/ns/net" ] && in_ns true 2>/dev/null; then
    return 0
  fi
  touch "$C/ns/mnt" "$C/ns/net"
  unshare --mount="$C/ns/mnt" --net="$C/ns/net" --propagation private true
  mkdir -p "$C/sysctl"
  echo 1 >"$C/sysctl/overcommit_memory"
  echo 10 >"$C/sysctl/panic"
  echo 1 >"$C/sysctl/panic_on_oops"
  in_ns bash -euc "
    ip link set lo up
    ip link add node0 type veth peer name node0p
    ip link set node0p up
    ip addr add $NODE_IP/24 dev node0
    ip link set node0 up
    ip route add default via ${NODE_IP%.*}.254 dev node0 onlink
    mount --bind $C/sysctl/overcommit_memory /proc/sys/vm/overcommit_memory
    mount --bind $C/sysctl/panic /proc/sys/kernel/panic
    mount --bind $C/sysctl/panic_on_oops /proc/sys/kernel/panic_on_oops
    sysctl -qw net.ipv4.ip_forward=1
    for d in /var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /run/containerd /opt/containerd /etc/kubernetes; do
      mkdir -p \$d $C/hostpaths\$d
      mount --bind $C/hostpaths\$d \$d
    done
  "
  log "namespace ready ($C/ns)"
}

generate_config() {
  mkdir -p "$C/pki" "$C/cni" "$C/log" "$C/pids" "$C/run"
  if [ ! -f "$C/pki/sa.key" ]; then
    openssl genrsa -out "$C/pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$C/pki/sa.key" -pubout -out "$C/pki/sa.pub" 2>/dev/null
    head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$C/pki/admin-token"
  fi
  local admin; admin=$(cat "$C/pki/admin-token")
  cat >"$C/pki/tokens.csv" <<EOF
$admin,admin,admin,"system:masters"
kubelet-$admin,system:node:$NODE_NAME,node,"system:nodes"
kcm-$admin,system:kube-controller-manager,kcm,
scheduler-$admin,system:kube-scheduler,scheduler,
proxy-$admin,system:kube-proxy,proxy,
EOF
  local who
  for who in admin kubelet kcm scheduler proxy; do
    local token="$admin"; [ "$who" = admin ] || token="$who-$admin"
    kubeconfig "https://$NODE_IP:$API_PORT" "$token" >"$C/$who.kubeconfig"
  done
  kubeconfig "https://$HOST_API" "$admin" >"$C/host.kubeconfig"

  cat >"$C/containerd.toml" <<EOF
version = 2
root = "$C/containerd/root"
state = "$C/containerd/state"
[grpc]
  address = "$C/run/containerd.sock"
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
    conf_dir = "$C/cni"
EOF
  cat >"$C/cni/10-jobset-cluster.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "jobset-cluster",
  "plugins": [{
    "type": "bridge", "bridge": "kp0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$C/run/cni-ipam"}
  }]
}
EOF
  cat >"$C/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine kind: cgroup v1, cgroupfs.
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$C/run/containerd.sock
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $C/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
failSwapOn: false
protectKernelDefaults: false
syncFrequency: 10s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 5s
podCIDR: $POD_CIDR
maxPods: 250
EOF
  # No upstream DNS is reachable: Pods resolve cluster names only.
  echo "nameserver $NODE_IP" >"$C/resolv.conf"
  cat >"$C/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $C/proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Pods share one bridge without br_netfilter: masquerade Service traffic so
# that replies come back through the node, where the DNAT is undone.
iptables: {masqueradeAll: true}
# Leave the machine's conntrack sysctls alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  cat >"$C/Corefile" <<EOF
.:53 {
    bind $NODE_IP
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

# kc is kubectl inside the namespace, as the cluster admin.
kc() { in_ns "$KUBEBIN/kubectl" --kubeconfig "$C/admin.kubeconfig" "$@"; }

node_ready() {
  [ "$(kc get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

import_images() { # tar...
  local tar
  for tar in "$@"; do
    # nsenter --mount starts ctr in /: a relative path would not be found.
    tar=$(realpath "$tar")
    in_ns ctr --address "$C/run/containerd.sock" -n k8s.io images import "$tar" >/dev/null
    log "imported $(basename "$tar")"
  done
}

# start_component starts one process of the cluster with its flags (binaries,
# the namespace and the configuration must be there: `up` makes them).
start_component() { # name
  local k="$KUBEBIN"
  case "$1" in
    etcd)
      start etcd "$k/etcd" --name jobset-cluster --data-dir "$C/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster jobset-cluster=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn ;;
    containerd)
      start containerd /usr/bin/containerd --config "$C/containerd.toml" ;;
    kube-apiserver)
      # The API server reaches the kubelet (logs, exec, port-forward) at the
      # Node's InternalIP, which the kubelet's --node-ip sets: by default it
      # prefers the Hostname, jobset-node, which no DNS it can ask resolves.
      # Without --kubelet-certificate-authority it does not verify the kubelet's
      # self-signed serving certificate, and the kubelet (anonymous,
      # AlwaysAllow) asks it for no client certificate: both ends are reachable
      # only inside the namespace.
      start kube-apiserver "$k/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
        --bind-address=0.0.0.0 --advertise-address="$NODE_IP" --secure-port="$API_PORT" \
        --cert-dir="$C/pki/apiserver" --token-auth-file="$C/pki/tokens.csv" --authorization-mode=Node,RBAC \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$C/pki/sa.pub" --service-account-signing-key-file="$C/pki/sa.key" \
        --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true \
        --kubelet-preferred-address-types=InternalIP ;;
    nsforward)
      start_on_host nsforward "$CLUSTERBIN/nsforward" -netns "$C/ns/net" -listen "$HOST_API" -target "$NODE_IP:$API_PORT" ;;
    kube-controller-manager)
      start kube-controller-manager "$k/kube-controller-manager" --kubeconfig="$C/kcm.kubeconfig" \
        --authentication-kubeconfig="$C/kcm.kubeconfig" --authorization-kubeconfig="$C/kcm.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
        --service-account-private-key-file="$C/pki/sa.key" --root-ca-file="$C/pki/apiserver/apiserver.crt" ;;
    kube-scheduler)
      start kube-scheduler "$k/kube-scheduler" --kubeconfig="$C/scheduler.kubeconfig" \
        --authentication-kubeconfig="$C/scheduler.kubeconfig" --authorization-kubeconfig="$C/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false ;;
    kubelet)
      start kubelet "$k/kubelet" --config="$C/kubelet.yaml" --kubeconfig="$C/kubelet.kubeconfig" \
        --root-dir="$C/kubelet" --node-ip="$NODE_IP" --hostname-override="$NODE_NAME" ;;
    kube-proxy)
      start kube-proxy "$k/kube-proxy" --config="$C/kube-proxy.yaml" ;;
    coredns)
      start coredns "$CLUSTERBIN/coredns" -conf "$C/Corefile" ;;
    *) die "unknown component $1" ;;
  esac
}

up() {
  binaries
  create_namespace
  generate_config
  # `start` reuses them without building (tests run it with another HOME).
  printf 'KUBEBIN=%q\nCLUSTERBIN=%q\n' "$KUBEBIN" "$CLUSTERBIN" >"$C/binaries.env"
  local k="$KUBEBIN"

  start_component etcd
  start_component containerd
  wait_for etcd 60 in_ns curl -sf http://127.0.0.1:2379/health
  start_component kube-apiserver
  start_component nsforward
  wait_for containerd 60 in_ns ctr --address "$C/run/containerd.sock" version
  import_images "$CLUSTERBIN/pause.tar" "$@"
  wait_for kube-apiserver 120 kc get --raw /readyz

  start_component kube-controller-manager
  start_component kube-scheduler
  start_component kubelet
  start_component kube-proxy
  start_component coredns
  # Starts components again for `start` (see there).
  [ -p "$C/run/starter.fifo" ] || mkfifo "$C/run/starter.fifo"
  start_on_host starter "$SELF" starter
  wait_for "node $NODE_NAME" 120 node_ready
  wait_for "default ServiceAccount" 60 kc get serviceaccount default -n default
  wait_for "cluster DNS" 60 in_ns curl -sf http://127.0.0.1:8181/ready
  wait_for "API server from the host" 30 "$k/kubectl" --kubeconfig "$C/host.kubeconfig" get --raw /readyz
  log "up; KUBECONFIG=$C/host.kubeconfig"
}

stop() { # name [signal]: returns once the process is gone
  local f="$C/pids/$1.pid" signal=${2:-TERM}
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$signal" "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid"
      # Gone means reaped or a zombie; neither holds a port or a lock.
      while kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" != Z ]; do sleep 0.05; done
    fi
  fi
  rm -f "$f"
}

# component checks a name given on the command line.
component() { # name
  case "$1" in
    etcd|kube-apiserver|kube-controller-manager|kube-scheduler|containerd|kubelet|kube-proxy|coredns|nsforward) ;;
    *) echo "unknown component '$1'" >&2; exit 2 ;;
  esac
  [ -d "$C/pids" ] || die "no cluster in $C"
}

down() {
  [ -d "$C" ] || return 0
  stop starter; stop coredns; stop kube-proxy; stop kube-scheduler; stop kube-controller-manager; stop kubelet
  if [ -S "$C/run/containerd.sock" ] && running containerd; then
    local ctr=(in_ns ctr --address "$C/run/containerd.sock" -n k8s.io) t
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$t" >/dev/null 2>&1 || true; done
    for t in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers rm "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # The shims of this containerd, known by its socket path.
  local p
  for p in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $C/run/containerd.sock" || true); do kill -9 "$p" 2>/dev/null || true; done
  stop nsforward; stop kube-apiserver; stop etcd
  local h
  for h in /sys/fs/cgroup/*/kubepods; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  if [ -d "$C/ns" ]; then
    umount "$C/ns/mnt" 2>/dev/null || true
    umount "$C/ns/net" 2>/dev/null || true
    umount "$C/ns" 2>/dev/null || true
  fi
  rm -rf "$C"
  log "down"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  kubeconfig) echo "$C/host.kubeconfig" ;;
  import) shift; [ -d "$C/pids" ] || die "no cluster in $C"; import_images "$@" ;;
  exec) shift; in_ns "$@" ;;
  stop) component "${2:-}"; stop "$2"; log "$2 stopped" ;;
  kill) component "${2:-}"; stop "$2" KILL; log "$2 killed" ;;
  start)
    component "${2:-}"
    running "$2" && die "$2 is running (pid $(cat "$C/pids/$2.pid"))"
    if running starter; then
      # Started by the starter, not by us: a test runner (Bazel's
      # process-wrapper is a subreaper) kills every process its test left.
      echo "$2" >"$C/run/starter.fifo"
      deadline=$(( $(date +%s) + 30 ))
      until running "$2"; do
        [ "$(date +%s)" -lt "$deadline" ] || die "the starter did not start $2; see $C/log/starter.log"
        sleep 0.05
      done
    else
      # shellcheck source=/dev/null # written by up
      source "$C/binaries.env"
      start_component "$2"
    fi
    log "$2 started (pid $(cat "$C/pids/$2.pid"))" ;;
  starter) # internal: what `up` leaves running for `start`
    # shellcheck source=/dev/null # written by up
    source "$C/binaries.env"
    while true; do
      read -r name <"$C/run/starter.fifo" || continue
      [ -n "$name" ] && start_component "$name" && log "started $name (pid $(cat "$C/pids/$name.pid"))"
    done ;;
  pid) component "${2:-}"; running "$2" || die "$2 is not running"; cat "$C/pids/$2.pid" ;;
  *) echo "usage: $0 up [image.tar ...] | down | kubeconfig | import image.tar... | exec CMD... | stop|kill|start|pid COMPONENT" >&2; exit 2 ;;
esac
