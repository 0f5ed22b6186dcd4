#!/usr/bin/env bash
# Runs a command next to a real Kubernetes API server, inside a private network
# namespace nobody else can reach:
#
#   deploy/k8s/cluster.sh run COMMAND [ARGS...]
#
# etcd 3.6 and kube-apiserver 1.34 (built once by deploy/k8s/tools.sh) listen on
# addresses of the namespace's own loopback interface, which also carries
# 198.18.0.2-198.18.0.30 (the RFC 2544 benchmarking range, never routed) for the test's
# services: the API server refuses 127.x addresses in EndpointSlices. There is no
# scheduler, controller manager or kubelet: objects are stored and validated, pods never
# run, and EndpointSlices are what the test writes. COMMAND sees
#   KUBECONFIG                      an admin (system:masters) kubeconfig
#   CODECTX_TEST_KUBE_ADDRESSES     the free service addresses, space-separated
#   CODECTX_TEST_KUBE_TOKEN_FILE    the admin bearer token
# Everything stops, and the namespace disappears, when COMMAND exits.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

fail() { echo "cluster.sh: $*" >&2; exit 1; }

if [ "${1:-}" = "run" ]; then
  shift
  [ $# -gt 0 ] || fail "usage: $0 run COMMAND [ARGS...]"
  bin="$("$here/tools.sh" cluster)"
  # A user and network namespace: works for root and for an unprivileged user.
  exec unshare --map-root-user --net "$0" --inside "$bin" "$@"
fi
[ "${1:-}" = "--inside" ] || fail "usage: $0 run COMMAND [ARGS...]"
bin="$2"
shift 2
export PATH="$bin:$PATH"

ip link set lo up
api_address=198.18.0.1
ip addr add "$api_address/32" dev lo
addresses=""
for i in $(seq 2 30); do
  ip addr add "198.18.0.$i/32" dev lo
  addresses="$addresses 198.18.0.$i"
done

state="$(mktemp -d "${TMPDIR:-/tmp}/codectx-cluster.XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$state"
}
trap cleanup EXIT

etcd --name default --data-dir "$state/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster default=http://127.0.0.1:2380 >"$state/etcd.log" 2>&1 &
pids+=($!)

openssl genrsa -out "$state/sa.key" 2048 2>/dev/null
openssl rsa -in "$state/sa.key" -pubout -out "$state/sa.pub" 2>/dev/null
token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "$token" >"$state/token"
echo "$token,admin,admin,system:masters" >"$state/tokens.csv"

kube-apiserver --etcd-servers=http://127.0.0.1:2379 \
  --bind-address="$api_address" --advertise-address="$api_address" --secure-port=6443 \
  --cert-dir="$state/certs" \
  --service-account-key-file="$state/sa.pub" --service-account-signing-key-file="$state/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.96.0.0/24 --token-auth-file="$state/tokens.csv" \
  --authorization-mode=RBAC --endpoint-reconciler-type=none >"$state/apiserver.log" 2>&1 &
pids+=($!)

cat >"$state/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: https://$api_address:6443
      certificate-authority: $state/certs/apiserver.crt
users:
  - name: admin
    user:
      token: $token
contexts:
  - name: test
    context: {cluster: test, user: admin, namespace: default}
current-context: test
KUBECONFIG

ready=""
for _ in $(seq 1 120); do
  if [ -f "$state/certs/apiserver.crt" ] && python3 - "$state" "$api_address" <<'PY' 2>/dev/null
import ssl, sys, urllib.request
state, address = sys.argv[1], sys.argv[2]
context = ssl.create_default_context(cafile=f"{state}/certs/apiserver.crt")
request = urllib.request.Request(f"https://{address}:6443/readyz",
    headers={"Authorization": "Bearer " + open(f"{state}/token").read().strip()})
sys.exit(0 if urllib.request.urlopen(request, context=context, timeout=2).read() == b"ok" else 1)
PY
  then ready=1; break; fi
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { tail -20 "$state/etcd.log" "$state/apiserver.log" >&2; fail "etcd or kube-apiserver exited (logs above)"; }
  done
  sleep 0.5
done
[ -n "$ready" ] || { tail -30 "$state/apiserver.log" >&2; fail "kube-apiserver was not ready within 60 s"; }
echo "cluster.sh: kube-apiserver $(kube-apiserver --version | cut -d' ' -f2) ready at https://$api_address:6443" >&2

export KUBECONFIG="$state/kubeconfig"
export CODECTX_TEST_KUBE_ADDRESSES="${addresses# }"
export CODECTX_TEST_KUBE_TOKEN_FILE="$state/token"
status=0
"$@" || status=$?
exit "$status"
