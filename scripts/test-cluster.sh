#!/usr/bin/env bash
# scripts/test-cluster.sh -- a real single-node Kubernetes v1.20.2 on this machine, for the
# project's tests of the Kubernetes runtime.
#
#   scripts/test-cluster.sh up       start it (builds the binaries the first time); the LAST line on
#                                    stdout is the absolute path of an admin kubeconfig
#   scripts/test-cluster.sh down     stop it; no process, mount, cni0/veth or KUBE-*/CNI-* iptables
#                                    chain is left, and etcd is wiped so the next `up` starts clean
#   scripts/test-cluster.sh status   "up" (exit 0) or "down" (exit 1), with the failing parts
#   scripts/test-cluster.sh build    only make sure the binaries are built and cached
#   scripts/test-cluster.sh restart-apiserver   stop the API server and start it again (for tests)
#   scripts/test-cluster.sh import <tar>...     import docker-archive tars into the cluster's
#                                    containerd (e.g. scripts/service-image.sh's); the cluster pulls
#                                    nothing, so pods use imagePullPolicy Never; only the newest
#                                    3 tags of each imported repository are kept (those in use too)
#
# Needs root (containerd, runc, iptables, mounts). Progress goes to stderr; stdout carries only the
# kubeconfig path, so `KUBECONFIG=$(scripts/test-cluster.sh up | tail -n1)` works. `up` on a cluster
# that is already up and healthy only refreshes the devnode images and prints the path; `down` on
# nothing is a no-op.
#
# Why it is built this way (the facts come from verified notes on these machines):
#   - No Docker, no image registry, no internet except Debian's archive and npm. Debian bookworm's
#     `kubernetes` source package (1.20.5+really1.20.2) is the last one that ships vendor/, so
#     v1.20.2 is the version that can be built offline; Debian's etcd, containerd, runc and CNI
#     plugins run it. Stay within the v1.20 API.
#   - Images are docker-archive tars written by hand (a static C pause binary; devnode with the
#     host's node binary, see scripts/devnode-image.sh) and imported into containerd.
#   - There is no dynamic volume provisioning in a bare cluster: StorageClass `rln-local` (the
#     default class) is served by scripts/test-cluster/provisioner.mjs, a background process that
#     creates a hostPath PersistentVolume for each pending claim and deletes released ones.
#   - No cluster DNS (no CoreDNS image): address pods and Services by IP.
#   - Every cluster address stays on this machine and inside 198.18.0.0/15, the range reserved for
#     network testing (never 10.x or 192.168.x): pods 198.18.0.0/24 on bridge cni0, Services
#     198.19.0.0/20, and the node itself 198.18.1.1, an extra address on `lo` that the kubelet
#     (10250) and the apiserver (16443) listen on. Everything else listens on 127.0.0.1: etcd
#     23790/23800, controller-manager 10257, scheduler 10259, kubelet healthz 10248, kube-proxy
#     10249/10256.
#   - Pods reach the API (the service itself runs in the cluster in test/deploy/): the apiserver
#     listens on the node address, which pods reach through the bridge's gateway like any address
#     of the machine, and it is the endpoint of the `kubernetes` Service (198.19.0.1:443), so
#     in-cluster clients (KUBERNETES_SERVICE_HOST/PORT and the service-account token the
#     controller-manager's token controller puts in each ServiceAccount's Secret) work unchanged.
#     127.0.0.1 would be unreachable from a pod's network namespace; 0.0.0.0 would expose the API
#     on the machine's real interfaces. The admin kubeconfig uses the node address too, and the
#     serving certificate names it, the Service address and loopback (an older one is reissued).
#   - Throwaway-cluster shortcuts: the admin authenticates with a static token; the kubelet uses
#     the admin kubeconfig and serves anonymous + AlwaysAllow (that is what lets the apiserver
#     reach it for logs/exec/port-forward); etcd runs with --unsafe-no-fsync.
#
# Environment:
#   RLN_TEST_CLUSTER_CACHE   build cache, outside the repository (default /var/cache/rln-cloud/test-cluster)
#   RLN_TEST_CLUSTER_STATE   runtime state: configs, pki, logs, etcd, containerd, kubelet, volumes
#                            (default /tmp/rln-cloud-test-cluster); logs are in $STATE/logs
#   RLN_TEST_CLUSTER_DEVNODE_VERSIONS  devnode image versions imported as localhost/devnode:<version>
#                            (default "devnode-0.1.0 devnode-0.2.0")
#   RLN_TEST_CLUSTER_IMAGES_KEPT  tags kept per repository that `import` brought in (default 3)
set -euo pipefail
umask 022

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RLN_TEST_CLUSTER_CACHE:-/var/cache/rln-cloud/test-cluster}
STATE=${RLN_TEST_CLUSTER_STATE:-/tmp/rln-cloud-test-cluster}
DEVNODE_VERSIONS=${RLN_TEST_CLUSTER_DEVNODE_VERSIONS:-devnode-0.1.0 devnode-0.2.0}

BIN=$CACHE/bin                 # the built kube binaries: all the cache keeps
RUN=$STATE/run                 # pid files
LOGS=$STATE/logs               # one log per component (kept by `down`, truncated by `up`)
PKI=$STATE/pki                 # CA, apiserver serving cert, service-account key, admin token (kept by `down`)
KUBECONFIG_FILE=$STATE/kubeconfig
CTRD=$STATE/containerd         # containerd root, state and socket: nothing in /var/lib or /run/containerd
CTRD_SOCK=$CTRD/containerd.sock
KUBELET_DIR=$STATE/kubelet
CNI_DIR=$STATE/cni             # CNI config (net.d) and host-local IPAM leases (ipam)
VOLUMES=$STATE/volumes         # hostPath volumes made by the provisioner
IMAGES=$STATE/images           # image tars and the stamp of what was imported

NODE_NAME=rln-test-node
NODE_IP=198.18.1.1
POD_CIDR=198.18.0.0/24
SERVICE_CIDR=198.19.0.0/20
SERVICE_API_IP=198.19.0.1      # first address of the Service range: the `kubernetes` Service
API_PORT=16443
ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
API_URL=https://$NODE_IP:$API_PORT   # see "Pods reach the API" above

# Debian bookworm's kubernetes source package builds v1.20.2 (newer ones only build kubectl).
K8S_SRC_PKG=kubernetes
K8S_VERSION=v1.20.2
KUBE_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
# Debian packages needed to run the cluster, and in addition to build it.
RUNTIME_PKGS=(etcd-server containerd runc containernetworking-plugins iptables conntrack iproute2
  util-linux openssl curl gcc libc6-dev)
BUILD_PKGS=(golang-go make gcc libc6-dev dpkg-dev patch xz-utils golang-github-modern-go-reflect2-dev)
# Names what the cached binaries were built from: a cache built otherwise is rebuilt.
BUILD_ID="kubernetes-1.20.2+reflect2-1.0.2"

# Components in start order; `down` stops them in reverse, apiserver before etcd (the apiserver
# hangs on SIGTERM once etcd is gone).
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy provisioner)

# stdout is reserved for the kubeconfig path: everything else, apt and build output included, goes
# to stderr. fd 3 is the real stdout; long-running children never get it (see start_bg).
exec 3>&1 1>&2

log() { printf '[test-cluster %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (containerd, runc, iptables and mounts need it)"; }

# One `up`/`down` at a time (tests running in parallel may call `up` together). The lock's fd is
# closed in every background child so a daemon never holds it.
take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  flock -w 900 9 || die "another test-cluster.sh holds $STATE/.lock"
}

# kubectl: the machine's if it has one (a newer client works against 1.20 for what is used here),
# else the one built with the cluster.
kubectl_bin() {
  if [ -x "$BIN/kubectl" ]; then echo "$BIN/kubectl"; else command -v kubectl; fi
}
kc() { "$(kubectl_bin)" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

# ---------------------------------------------------------------------------------------------
# Debian packages

ensure_pkgs() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  # --no-upgrade: never upgrade anything already installed as a side effect.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}"
}

# ---------------------------------------------------------------------------------------------
# Build of the kube binaries (once; cached in $CACHE/bin)

have_binaries() {
  local b
  for b in "${KUBE_BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
  [ "$(head -n1 "$BIN/.complete" 2>/dev/null)" = "$BUILD_ID" ] || return 1
  # kubectl is built only when the machine has none (see kubectl_bin).
  command -v kubectl >/dev/null || [ -x "$BIN/kubectl" ] || return 1
}

# The source tree (~2 GB once built: vendor/ plus _output) and the Go build cache live in
# $CACHE/build only while building and are deleted afterwards: the binaries (~390 MB) are all a
# later `up` needs, and a rebuild (rare: a new machine or a wiped cache) fetches the source again
# in ~10 s. Cold build: ~5 min on 2 cores.
build_binaries() {
  have_binaries && return 0
  ensure_pkgs "${BUILD_PKGS[@]}"
  local work=$CACHE/build
  rm -rf "$work"
  mkdir -p "$work/apt/lists/partial" "$work/home" "$LOGS"
  # apt-get source needs deb-src lines; a private sources list and lists dir leave /etc/apt and
  # the machine's package lists as they are.
  printf '%s\n' 'deb-src http://deb.debian.org/debian bookworm main' \
    'deb-src http://deb.debian.org/debian-security bookworm-security main' >"$work/apt/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/apt/lists")
  log "fetching Debian's $K8S_SRC_PKG source package"
  apt-get "${apt_opts[@]}" update -qq
  # unpacks and applies debian/patches (dpkg-source -x); the tarball includes vendor/
  (cd "$work" && apt-get "${apt_opts[@]}" source -qq "$K8S_SRC_PKG") >"$LOGS/build.log" 2>&1 ||
    { tail -n 30 "$LOGS/build.log"; die "apt-get source $K8S_SRC_PKG failed"; }
  local src
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "$K8S_SRC_PKG-*" | head -n1)
  [ -n "$src" ] && [ -d "$src/vendor" ] || die "no $K8S_SRC_PKG source tree with vendor/ in $work"
  head -n1 "$src/debian/changelog" | grep -q '1\.20\.2' ||
    die "$src is not Kubernetes 1.20.2: $(head -n1 "$src/debian/changelog")"
  # The tree vendors github.com/modern-go/reflect2 v1.0.1, which reads Go's map internals the
  # pre-1.18 way: built with Debian's Go 1.19 the apiserver dies at random with "fatal error:
  # fault" in mapiterinit (kubernetes/kubernetes#110039). Debian's reflect2 1.0.2 is the fix
  # upstream took; only the files change, so vendor/modules.txt stays consistent with go.mod.
  local reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [ -f "$reflect2/go_above_118.go" ] || die "$reflect2 is not reflect2 1.0.2 or later"
  rm -rf "$src/vendor/github.com/modern-go/reflect2"
  cp -r "$reflect2" "$src/vendor/github.com/modern-go/reflect2"
  rm -f "$src/vendor/github.com/modern-go/reflect2/go.mod" "$src/vendor/github.com/modern-go/reflect2/"*_test.go
  # Version stamped into the binaries (no .git in a source package, so hack/lib/version.sh would
  # report v0.0.0): `kubectl version` and the node's kubeletVersion then say v1.20.2.
  cat >"$work/version.env" <<EOF
KUBE_GIT_VERSION='$K8S_VERSION'
KUBE_GIT_MAJOR='1'
KUBE_GIT_MINOR='20'
KUBE_GIT_TREE_STATE='clean'
EOF
  # Same as debian/rules: the tree's own make (it runs the code generators first; a plain
  # `go build` of kube-apiserver fails with "undefined: openapi.GetOpenAPIDefinitions") in a
  # GOPATH layout, CGO_ENABLED=0. GOCACHE and HOME point into $work so nothing lands in ~/.cache.
  mkdir -p "$work/gopath/src/k8s.io"
  ln -sfn "$src" "$work/gopath/src/k8s.io/kubernetes"
  local what="" b
  for b in "${KUBE_BINARIES[@]}"; do what+="cmd/$b "; done
  command -v kubectl >/dev/null || what+="cmd/kubectl"
  log "building $what(~5 min on 2 cores; log: $LOGS/build.log)"
  local t0=$SECONDS
  (cd "$work/gopath/src/k8s.io/kubernetes" &&
    env -u GOFLAGS -u GO111MODULE -u GOROOT GOPATH="$work/gopath" GOCACHE="$work/gocache" HOME="$work/home" \
      CGO_ENABLED=0 KUBE_GIT_VERSION_FILE="$work/version.env" make WHAT="$what") >>"$LOGS/build.log" 2>&1 ||
    { tail -n 40 "$LOGS/build.log"; die "kubernetes build failed (full log: $LOGS/build.log)"; }
  rm -rf "$BIN.new"
  mkdir -p "$BIN.new"
  for b in "${KUBE_BINARIES[@]}" kubectl; do
    local f="$work/gopath/src/k8s.io/kubernetes/_output/bin/$b"
    [ -x "$f" ] && cp "$f" "$BIN.new/"
  done
  "$BIN.new/kubelet" --version >&2
  printf '%s\nbuilt %s\n' "$BUILD_ID" "$(date -u +%FT%TZ)" >"$BIN.new/.complete"
  rm -rf "$BIN" && mv "$BIN.new" "$BIN"
  log "built in $((SECONDS - t0)) s; removing the source tree and Go cache ($work)"
  rm -rf "$work"
}

STOPPED_PIDS=()   # what stop_bg stopped, for do_down's last wait

# ---------------------------------------------------------------------------------------------
# Processes: each component runs detached (own session, stdin/stdout/stderr redirected, fds 3 and
# 9 closed) so it outlives the shell that ran `up` and holds none of its pipes; its pid is in
# $RUN/<name>.pid.

start_bg() { # start_bg <name> <command...>
  local name=$1 pidf="$RUN/$1.pid"
  shift
  rm -f "$pidf"
  # setsid may fork; the inner shell writes its own pid, then execs the command under that pid, in
  # / (the caller's directory may go away) and without the caller's NODE_OPTIONS (a test runner's
  # loader must not leak into the provisioner).
  setsid bash -c 'echo $$ >"$0"; cd /; exec "$@"' "$pidf" env -u NODE_OPTIONS "$@" \
    </dev/null >"$LOGS/$name.log" 2>&1 3>&- 9>&- &
  local i
  for i in $(seq 50); do [ -s "$pidf" ] && return 0; sleep 0.1; done
  die "$name did not start (log: $LOGS/$name.log)"
}

pid_of() { [ -s "$RUN/$1.pid" ] && cat "$RUN/$1.pid"; }

# running <pid>: the process exists and has not exited. An exited daemon stays a zombie until
# process 1 reaps it (the daemons outlive `up`, so process 1 is their parent), which on these
# machines takes a second or more: waiting for /proc/<pid> to vanish would make `down` slow.
running() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# alive <name>: its pid file names a live process that is still that component (not a reused pid)
alive() {
  local pid
  pid=$(pid_of "$1") || return 1
  running "$pid" || return 1
  local want=$1
  [ "$1" = provisioner ] && want=provisioner.mjs
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q -- "$want"
}

stop_bg() { # stop_bg <name> [timeout seconds]: SIGTERM, then SIGKILL after the timeout
  local name=$1 timeout=${2:-15} pid i
  if alive "$name"; then
    pid=$(pid_of "$name")
    STOPPED_PIDS+=("$pid")
    kill "$pid" 2>/dev/null || true
    for i in $(seq $((timeout * 10))); do running "$pid" || break; sleep 0.1; done
    if running "$pid"; then
      log "$name ($pid) ignored SIGTERM for ${timeout}s; killing it"
      kill -9 "$pid" 2>/dev/null || true
      sleep 0.2
    fi
  fi
  rm -f "$RUN/$name.pid"
}

# wait_for <seconds> <what> <command...>: poll the command every 0.25 s
wait_for() {
  local timeout=$1 what=$2 end=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || die "timed out after ${timeout}s waiting for $what"
    sleep 0.25
  done
}

api_get() { # api_get <path>: GET on the apiserver as admin, body on stdout, fails on non-2xx
  curl -sf --max-time 5 --cacert "$PKI/ca.crt" -H "@$PKI/auth-header" "$API_URL$1"
}

node_ready() {
  api_get "/api/v1/nodes/$NODE_NAME" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const c=(JSON.parse(s).status.conditions||[]).find(c=>c.type==="Ready");process.exit(c&&c.status==="True"?0:1)})'
}

# healthy: every component runs, the apiserver is ready and the node is Ready
healthy() {
  local c bad=()
  for c in "${COMPONENTS[@]}"; do alive "$c" || bad+=("$c"); done
  if [ ${#bad[@]} -eq 0 ]; then
    api_get /readyz >/dev/null 2>&1 || bad+=("apiserver-not-ready")
    node_ready 2>/dev/null || bad+=("node-not-ready")
  fi
  HEALTH_PROBLEMS="${bad[*]}"
  [ ${#bad[@]} -eq 0 ]
}

any_running() {
  local c
  for c in "${COMPONENTS[@]}"; do alive "$c" && return 0; done
  return 1
}

# ---------------------------------------------------------------------------------------------
# Configuration written at each `up`

# Once per state dir, so the kubeconfig stays valid across down/up: a CA, the apiserver's serving
# certificate for every name a client may use, the service-account signing key, an admin token.
ensure_pki() {
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  if [ -s "$PKI/ca.crt" ] && [ -s "$PKI/ca.key" ] && [ -s "$PKI/apiserver.crt" ] && [ -s "$PKI/sa.key" ] && [ -s "$PKI/admin.token" ]; then
    apiserver_cert_current && return 0
    # A state dir from an older version of this script: same CA (kubeconfigs stay valid), new
    # serving certificate for the addresses clients use now.
    log "reissuing the apiserver certificate: its names are outdated"
    issue_apiserver_cert
    return 0
  fi
  log "creating the cluster's CA, apiserver certificate, service-account key and admin token"
  (
    cd "$PKI"
    openssl genrsa -out ca.key 2048 2>/dev/null
    openssl req -x509 -new -key ca.key -subj "/CN=rln-test-cluster-ca" -days 3650 -out ca.crt \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    openssl rand -hex 24 >admin.token
  )
  issue_apiserver_cert
}

# Every address a client may use: loopback, the node address (kubeconfig, the `kubernetes`
# Service's endpoint) and the Service address pods use; the usual in-cluster names.
APISERVER_IPS=(127.0.0.1 "$NODE_IP" "$SERVICE_API_IP")
APISERVER_DNS=(localhost kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local)

apiserver_cert_current() {
  local ip
  for ip in "${APISERVER_IPS[@]}"; do
    openssl x509 -in "$PKI/apiserver.crt" -noout -checkip "$ip" 2>/dev/null | grep -q 'does match' || return 1
  done
  openssl verify -CAfile "$PKI/ca.crt" "$PKI/apiserver.crt" >/dev/null 2>&1
}

issue_apiserver_cert() {
  local san="" n
  for n in "${APISERVER_IPS[@]}"; do san+="IP:$n,"; done
  for n in "${APISERVER_DNS[@]}"; do san+="DNS:$n,"; done
  (
    cd "$PKI"
    openssl genrsa -out apiserver.key 2048 2>/dev/null
    openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=${san%,}" >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
  )
}

write_configs() {
  local token
  token=$(cat "$PKI/admin.token")
  # static token -> user admin in system:masters
  echo "$token,admin,admin-uid,system:masters" >"$PKI/tokens.csv"
  echo "Authorization: Bearer $token" >"$PKI/auth-header"
  chmod 600 "$PKI/tokens.csv" "$PKI/auth-header"

  # Admin kubeconfig: used by the tests, kubectl, and (a throwaway cluster) the control plane and
  # the kubelet themselves. The CA is real, so clients verify the apiserver.
  (
    umask 077
    cat >"$KUBECONFIG_FILE.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rln-test-cluster
  cluster:
    server: $API_URL
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: rln-test-cluster
  context: {cluster: rln-test-cluster, user: admin, namespace: default}
current-context: rln-test-cluster
EOF
    mv "$KUBECONFIG_FILE.tmp" "$KUBECONFIG_FILE"
  )

  # CNI: bridge cni0 + host-local IPAM, run by containerd's CRI plugin (kubelet 1.20 with a remote
  # runtime ignores --network-plugin). Leases live in the state dir, not /var/lib/cni.
  mkdir -p "$CNI_DIR/net.d" "$CNI_DIR/ipam"
  cat >"$CNI_DIR/net.d/10-rln-bridge.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "rln-test-cluster",
  "plugins": [
    { "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$CNI_DIR/ipam",
                "ranges": [[{ "subnet": "$POD_CIDR" }]], "routes": [{ "dst": "0.0.0.0/0" }] } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF

  # containerd (Debian's, CRI plugin built in), run directly: there is no systemd here. Its root,
  # state, socket and runc state are all in the state dir.
  mkdir -p "$CTRD"
  cat >"$CTRD/config.toml" <<EOF
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
[grpc]
  address = "$CTRD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:3.2"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # REQUIRED on these VMs: CAP_SYS_RESOURCE is not in the bounding set, so runc cannot give the
  # sandbox its negative oom_score_adj and the pause container fails ("can't get final child's
  # PID from pipe: EOF"). This clamps the value to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTRD/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CNI_DIR/net.d"
EOF

  # kubelet: cgroupfs driver (no systemd), listens only on the node address; anonymous +
  # AlwaysAllow because the apiserver has no kubelet client certificate (throwaway cluster).
  # Image GC is off: the images are imported locally and could not be pulled back.
  mkdir -p "$KUBELET_DIR/root" "$KUBELET_DIR/pki" "$KUBELET_DIR/volume-plugins"
  cat >"$KUBELET_DIR/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
runtimeRequestTimeout: 5m
imageGCHighThresholdPercent: 100
# kubelet 1.20 with this containerd sometimes fails to kill a pod's container ("NotFound": the
# container was already removed) and retries only at the next sync, a minute later by default, so
# a pod deletion took up to ~50 s. Syncing every 5 s bounds that to seconds.
syncFrequency: 5s
volumePluginDir: $KUBELET_DIR/volume-plugins
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
EOF
}

# Sysctls the cluster changes (the bridge plugin turns on ip_forward, kube-proxy route_localnet):
# saved before the first `up` and restored by `down`.
save_sysctls() {
  [ -s "$STATE/sysctl.saved" ] && return 0
  local k
  for k in net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables; do
    [ -e "/proc/sys/${k//.//}" ] && echo "$k=$(cat "/proc/sys/${k//.//}")"
  done >"$STATE/sysctl.saved"
}
restore_sysctls() {
  [ -s "$STATE/sysctl.saved" ] || return 0
  local line
  while IFS= read -r line; do sysctl -q -w "$line" >/dev/null 2>&1 || true; done <"$STATE/sysctl.saved"
  rm -f "$STATE/sysctl.saved"
}

# ---------------------------------------------------------------------------------------------
# Images: pause (a 15-line static C program) and devnode (scripts/devnode-image.sh), imported into
# containerd's k8s.io namespace. devnode's tar is rebuilt when devnode/ (or the image script, or
# node) changed, and re-imported when it changed or containerd started afresh.

ctr_() { ctr --address "$CTRD_SOCK" --namespace k8s.io "$@"; }

build_pause() {
  [ -s "$IMAGES/pause.tar" ] && return 0
  local w
  w=$(mktemp -d)
  cat >"$w/pause.c" <<'EOF'
/* The sandbox's process 1: sleeps, reaps children, exits at once on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static void die(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0); }
int main(void) {
  struct sigaction a = {0}, r = {0};
  a.sa_handler = die; sigaction(SIGINT, &a, NULL); sigaction(SIGTERM, &a, NULL);
  r.sa_handler = reap; r.sa_flags = SA_NOCLDSTOP; sigaction(SIGCHLD, &r, NULL);
  for (;;) pause();
}
EOF
  mkdir -p "$w/root"
  gcc -static -Os -o "$w/root/pause" "$w/pause.c" && strip "$w/root/pause"
  "$REPO/scripts/test-cluster/docker-archive.sh" "$w/pause.tar" "$w/root" \
    '[{"ref":"localhost/pause:3.2","config":{"Entrypoint":["/pause"],"User":"65535:65535"}}]'
  mv "$w/pause.tar" "$IMAGES/pause.tar"
  rm -rf "$w"
}

devnode_hash() {
  local node_bin
  node_bin=$(readlink -f "$(command -v node)")
  {
    echo "$DEVNODE_VERSIONS"
    stat -c '%n %s %Y' "$node_bin"
    # the host tools scripts/devnode-image.sh copies in beside node
    stat -c '%n %s %Y' $(readlink -f $(command -v dash cat head wc mv rm))
    cat "$REPO/scripts/devnode-image.sh" "$REPO/scripts/test-cluster/docker-archive.sh"
    (cd "$REPO" && find devnode -type f ! -name '*.test.ts' | LC_ALL=C sort | xargs sha256sum)
  } | sha256sum | cut -d' ' -f1
}

ensure_images() {
  mkdir -p "$IMAGES"
  build_pause
  local h refs=() v
  h=$(devnode_hash)
  if [ "$(cat "$IMAGES/devnode.hash" 2>/dev/null)" != "$h" ] || [ ! -s "$IMAGES/devnode.tar" ]; then
    for v in $DEVNODE_VERSIONS; do refs+=("localhost/devnode:$v"); done
    log "building the devnode image: ${refs[*]}"
    "$REPO/scripts/devnode-image.sh" "$IMAGES/devnode.tar" "${refs[@]}"
    echo "$h" >"$IMAGES/devnode.hash"
  fi
  if [ "$(cat "$IMAGES/imported" 2>/dev/null)" != "$h" ]; then
    log "importing images into containerd"
    ctr_ images import "$IMAGES/pause.tar" >/dev/null
    ctr_ images import "$IMAGES/devnode.tar" >/dev/null
    echo "$h" >"$IMAGES/imported"
  fi
}

# ---------------------------------------------------------------------------------------------
# Storage: default StorageClass rln-local, served by the project's provisioner.

apply_storage_class() {
  kc apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: rln-local
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
# No dynamic provisioner in the cluster: scripts/test-cluster/provisioner.mjs creates a hostPath
# PersistentVolume pre-bound to each pending claim of this class, and deletes the volume and its
# data once the claim is gone (so claims behave as with reclaimPolicy Delete).
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
}

start_provisioner() {
  alive provisioner && return 0
  mkdir -p "$VOLUMES"
  start_bg provisioner env RLN_TC_API_URL="$API_URL" RLN_TC_CA="$PKI/ca.crt" RLN_TC_TOKEN_FILE="$PKI/admin.token" \
    RLN_TC_VOLUMES="$VOLUMES" node "$REPO/scripts/test-cluster/provisioner.mjs"
}

# ---------------------------------------------------------------------------------------------
# up

start_apiserver() {
  # --bind-address and --advertise-address: the node address, so pods reach the API directly and
  # through the `kubernetes` Service, whose endpoint this is (an endpoint may not be loopback).
  # The node address must exist first (cmd_up adds it to lo).
  # --kubelet-preferred-address-types: logs/exec/port-forward reach the kubelet at the node's
  # InternalIP; the node's name is in no DNS.
  start_bg kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port="$API_PORT" --insecure-port=0 \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --token-auth-file="$PKI/tokens.csv" --authorization-mode=RBAC --allow-privileged=true --profiling=false
  wait_for 90 "kube-apiserver /readyz" api_get /readyz
  log "apiserver ready"
}

cmd_up() {
  need_root
  take_lock
  mkdir -p "$RUN" "$LOGS"
  if healthy; then
    log "already up"
    ensure_images
    apply_storage_class
    start_provisioner
    echo "$KUBECONFIG_FILE" >&3
    return 0
  fi
  if any_running; then
    log "partly running ($HEALTH_PROBLEMS); stopping it first"
    do_down
  fi
  local t0=$SECONDS
  ensure_pkgs "${RUNTIME_PKGS[@]}"
  command -v node >/dev/null || die "node is needed (devnode image, provisioner)"
  build_binaries
  # any failure from here on (a command under set -e, or die) stops whatever was started
  trap 'rc=$?; if [ $rc -ne 0 ]; then log "up failed; stopping what was started (logs: $LOGS)"; do_down; fi' EXIT

  ensure_pki
  write_configs
  save_sysctls
  # the node's address: on lo, so it exists without any device of our own
  ip -4 addr show dev lo | grep -q " $NODE_IP/" || ip addr add "$NODE_IP/32" dev lo
  mkdir -p "$VOLUMES" "$KUBELET_DIR"
  rm -rf "$IMAGES/imported" "$IMAGES/imports" "$IMAGES/imported-refs"   # containerd's root is fresh (down wipes it): import again

  log "starting containerd"
  start_bg containerd containerd --config "$CTRD/config.toml"
  wait_for 30 containerd ctr --address "$CTRD_SOCK" version
  ensure_images

  log "starting etcd and kube-apiserver"
  start_bg etcd etcd --name default --data-dir "$STATE/etcd" --logger zap --log-level warn \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
  wait_for 30 etcd curl -sf "http://127.0.0.1:$ETCD_CLIENT_PORT/health"
  start_apiserver

  start_bg kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG_FILE" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port=10257 --port=0 --cert-dir="$STATE/kcm-certs" \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" --use-service-account-credentials=false \
    --allocate-node-cidrs=false --cluster-cidr="$POD_CIDR" --service-cluster-ip-range="$SERVICE_CIDR" \
    --pvclaimbinder-sync-period=5s --profiling=false
  start_bg kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port=10259 --port=0 --cert-dir="$STATE/scheduler-certs" --profiling=false
  start_bg kubelet "$BIN/kubelet" --kubeconfig="$KUBECONFIG_FILE" --config="$KUBELET_DIR/config.yaml" \
    --root-dir="$KUBELET_DIR/root" --cert-dir="$KUBELET_DIR/pki" --container-runtime=remote \
    --container-runtime-endpoint="unix://$CTRD_SOCK" --pod-infra-container-image=localhost/pause:3.2 \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP"
  # kube-proxy: iptables mode; conntrack sysctls left alone; NodePorts only on loopback and the node
  # address, never on the machine's real interfaces.
  start_bg kube-proxy "$BIN/kube-proxy" --kubeconfig="$KUBECONFIG_FILE" --hostname-override="$NODE_NAME" \
    --bind-address="$NODE_IP" --cluster-cidr="$POD_CIDR" --proxy-mode=iptables \
    --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
    --nodeport-addresses=127.0.0.0/8,198.18.0.0/15 \
    --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256

  apply_storage_class
  start_provisioner

  wait_for 120 "node $NODE_NAME Ready" node_ready
  log "node $NODE_NAME Ready"
  # pods are rejected until the ServiceAccount admission finds `default`
  wait_for 60 "ServiceAccount default/default" api_get /api/v1/namespaces/default/serviceaccounts/default
  healthy || die "cluster not healthy after start: $HEALTH_PROBLEMS"
  trap - EXIT
  log "up in $((SECONDS - t0)) s; kubeconfig: $KUBECONFIG_FILE"
  echo "$KUBECONFIG_FILE" >&3
}

# ---------------------------------------------------------------------------------------------
# down (best effort: every step runs even if an earlier one failed)

delete_chains() { # delete_chains <iptables|ip6tables>: every KUBE-*/CNI-* rule and chain
  local ipt=$1 save=${1}-save t r c
  command -v "$save" >/dev/null || return 0
  for t in filter nat mangle raw; do
    "$save" -t "$t" 2>/dev/null | grep -E '^-A [A-Z]+ .*-j (KUBE|CNI)-' | grep -vE '^-A (KUBE|CNI)-' | sed 's/^-A/-D/' |
      while read -r r; do eval "$ipt -w -t $t $r" 2>/dev/null || true; done
    for c in $("$save" -t "$t" 2>/dev/null | grep -oE '^:(KUBE|CNI)-[^ ]+' | tr -d :); do "$ipt" -w -t "$t" -F "$c" 2>/dev/null || true; done
    for c in $("$save" -t "$t" 2>/dev/null | grep -oE '^:(KUBE|CNI)-[^ ]+' | tr -d :); do "$ipt" -w -t "$t" -X "$c" 2>/dev/null || true; done
  done
}

# the pids of every process in the cluster's pod cgroups (pause and app containers)
pod_pids() { cat /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/*/kubepods/*/cgroup.procs \
  /sys/fs/cgroup/*/kubepods/*/*/cgroup.procs /sys/fs/cgroup/*/kubepods/*/*/*/cgroup.procs 2>/dev/null | sort -u; }

do_down() {
  set +e
  local c pid i
  # 1. Graceful: stop what could create or schedule pods (provisioner, controller-manager,
  #    scheduler), then, with the apiserver and kubelet still running, delete the pods so the
  #    kubelet stops their containers and containerd tears down their networks (CNI DEL).
  stop_bg provisioner 5
  stop_bg kube-controller-manager
  stop_bg kube-scheduler
  if alive kube-apiserver && alive kubelet && api_get /readyz >/dev/null 2>&1 &&
    ! api_get '/api/v1/pods?limit=1' | grep -qE '"items": *\[\]'; then
    log "deleting pods"
    kc delete pods --all -A --grace-period=2 --timeout=30s >/dev/null 2>&1
  fi
  # 2. Node components, then whatever containers are left (so no shim outlives containerd).
  stop_bg kube-proxy
  stop_bg kubelet
  if alive containerd; then
    for c in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$c" >/dev/null 2>&1; done
    sleep 0.5
    for c in $(ctr_ containers ls -q 2>/dev/null); do
      ctr_ tasks rm -f "$c" >/dev/null 2>&1
      ctr_ containers rm "$c" >/dev/null 2>&1
    done
  fi
  stop_bg containerd
  # any shim (its pid is in its task dir) or pod process still there
  for pid in $(cat "$CTRD"/state/io.containerd.runtime.v2.task/*/*/shim.pid 2>/dev/null) $(pod_pids); do
    kill -9 "$pid" 2>/dev/null
  done
  # 3. Control plane: apiserver before etcd.
  stop_bg kube-apiserver
  stop_bg etcd
  # 4. Mounts (container rootfs, pod volumes, network namespaces), deepest first.
  for i in 1 2 3; do
    awk '{print $2}' /proc/self/mounts | grep -E "^($STATE/|/run/netns/cni-|/var/run/netns/cni-)" | sort -r |
      while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  done
  rm -f /run/netns/cni-* 2>/dev/null
  # 5. Network: iptables chains of kube-proxy, the kubelet and the CNI plugins; cni0 and its veths;
  #    the node address.
  [ -x "$BIN/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1
  delete_chains iptables
  delete_chains ip6tables
  for c in $(ip -o link show master cni0 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link del "$c" 2>/dev/null; done
  ip link del cni0 2>/dev/null
  ip addr del "$NODE_IP/32" dev lo 2>/dev/null
  restore_sysctls
  # 6. The kubelet's cgroups (cgroupfs driver), deepest first.
  for c in /sys/fs/cgroup/*/kubepods; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  # 7. Data: etcd (a stale node would show Ready at once), containerd, kubelet, leases, volumes.
  #    Kept: pki and kubeconfig (valid for the next `up`), logs, image tars.
  rm -rf "$STATE/etcd" "$CTRD/root" "$CTRD/state" "$CTRD/runc" "$CTRD/opt" "$KUBELET_DIR" "$CNI_DIR/ipam" \
    "$VOLUMES" "$STATE/kcm-certs" "$STATE/scheduler-certs" "$IMAGES/imported" "$IMAGES/imports" "$IMAGES/imported-refs" "$RUN"
  # Paths outside the state dir that no setting moves: the kubelet's pod log dirs and its device
  # plugin socket, libcni's result cache, the network namespaces' dir, containerd's shim sockets.
  rm -f /var/lib/cni/results/rln-test-cluster-* 2>/dev/null
  if [ "$(ls -A /var/lib/kubelet 2>/dev/null)" = device-plugins ]; then   # not some other kubelet's root
    rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/DEPRECATION
    rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
  fi
  rmdir /var/log/pods /var/log/containers /var/lib/cni/results /var/lib/cni /run/netns \
    /run/containerd/s /run/containerd 2>/dev/null
  # 8. Give process 1 a moment to reap the exited daemons, so that not even a zombie is left.
  for i in $(seq 50); do
    pid=
    for pid in "${STOPPED_PIDS[@]}"; do [ -d "/proc/$pid" ] && break; pid=; done
    [ -z "$pid" ] && break
    sleep 0.1
  done
  set -e
}

cmd_down() {
  need_root
  [ -d "$STATE" ] || { log "nothing to stop"; return 0; }
  take_lock
  log "stopping"
  do_down
  log "down"
}

# Stops the API server and starts it again, as a control-plane restart does: for the tests of what
# the service does while the API server is away (its watches and builds must resume).
cmd_restart_apiserver() {
  need_root
  take_lock
  healthy || die "the cluster is not up"
  log "restarting kube-apiserver"
  stop_bg kube-apiserver
  sleep 2
  start_apiserver
}

# Imports image tars (docker-archive, e.g. scripts/service-image.sh's) into containerd's k8s.io
# namespace, where the kubelet finds them. A tar whose manifest.json (image config and layer
# digests, so its content) was imported since containerd started is skipped: an import reads the
# whole tar (~10 s for the service's 250 MB). `down` wipes containerd's root and these stamps, so
# after the next down/up the image must be imported again.
cmd_import() {
  need_root
  [ $# -ge 1 ] || die "usage: $0 import <image.tar>..."
  local tar stamp
  for tar in "$@"; do [ -s "$tar" ] || die "$tar: no such image tar"; done
  take_lock
  alive containerd || die "the cluster is not up (containerd is not running)"
  mkdir -p "$IMAGES/imports"
  for tar in "$@"; do
    stamp=$IMAGES/imports/$(tar -xOf "$tar" manifest.json | sha256sum | cut -d' ' -f1)
    if [ -e "$stamp" ]; then
      log "already imported: $tar"
      continue
    fi
    log "importing $tar"
    ctr_ images import "$tar" >/dev/null
    touch "$stamp"
    tar -xOf "$tar" manifest.json | grep -oE '"RepoTags":\[[^]]*\]' | grep -oE '"[^"]+:[^"]+"' | tr -d '"' |
      while read -r ref; do record_import "$ref" "$stamp"; done
  done
  prune_imports
}

# Imported images are never garbage-collected here (image GC is off: nothing could be pulled
# back), so every `import` of a new tag (each service upgrade) would stay in containerd for good.
# The refs imported are logged in order with their stamp; per repository only the newest
# $IMAGES_KEPT are kept, plus any a container still uses (a rollback needs the previous tag: keep
# at least 2). A pruned ref loses its stamp, so importing its tar again really imports it. The
# images `up` imports (pause, devnode) are not logged, so never pruned.
IMAGES_KEPT=${RLN_TEST_CLUSTER_IMAGES_KEPT:-3}
record_import() { # record_import <ref> <stamp>: move <ref> to the end of the log
  local log=$IMAGES/imported-refs
  touch "$log"
  { awk -v r="$1" '$1 != r' "$log"; printf '%s %s\n' "$1" "$2"; } >"$log.tmp" && mv "$log.tmp" "$log"
}
prune_imports() {
  local log=$IMAGES/imported-refs repo ref stamp in_use
  [ -s "$log" ] || return 0
  in_use=$(ctr_ containers ls 2>/dev/null | awk 'NR > 1 {print $2}' | sort -u)
  for repo in $(awk '{sub(/:[^:\/]*$/, "", $1); print $1}' "$log" | sort -u); do
    awk -v repo="$repo" '{ r = $1; sub(/:[^:\/]*$/, "", r); if (r == repo) print }' "$log" | head -n -"$IMAGES_KEPT" |
      while read -r ref stamp; do
        if grep -qxF "$ref" <<<"$in_use"; then continue; fi
        log "pruning $ref (only the newest $IMAGES_KEPT tags of $repo are kept)"
        ctr_ images rm "$ref" >/dev/null 2>&1 || true
        rm -f "$stamp"
        awk -v r="$ref" '$1 != r' "$log" >"$log.tmp" && mv "$log.tmp" "$log"
      done
  done
}

cmd_status() {
  if [ -d "$STATE" ] && healthy; then
    echo "up (kubeconfig: $KUBECONFIG_FILE)" >&3
    return 0
  fi
  if [ -d "$RUN" ] && any_running; then
    echo "down: partly running, not healthy: $HEALTH_PROBLEMS" >&3
  else
    echo "down" >&3
  fi
  return 1
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  restart-apiserver) cmd_restart_apiserver ;;
  import) shift; cmd_import "$@" ;;
  build) need_root; take_lock; build_binaries; log "binaries in $BIN" ;;
  *) echo "usage: $0 up|down|status|build|restart-apiserver|import <tar>..." >&2; exit 2 ;;
esac
