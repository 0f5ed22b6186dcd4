#!/usr/bin/env bash
# make test-images: builds the seven images (deploy/images/build.sh, debug binaries by
# default: PROFILE=release for what ships) and runs each with podman the way the chart
# runs its pods: read-only root filesystem, all capabilities dropped, no new privileges,
# as the image's unprivileged user, state only on a mounted directory, keys from a
# read-only mount. Each must report SERVING on the gRPC health service (embedding once
# its model, which the image carries, is loaded); the images must hold no shell.
set -euo pipefail
cd "$(dirname "$0")/../.."
profile="${PROFILE:-debug}"
tag=test
target="${CARGO_TARGET_DIR:-target}/$profile"
services=(authz lexical-ranker embedding vector-gateway graph-hydrator context-assembler gateway)
podman=(podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs)
python="$(deploy/local/otlp-receiver.sh | cut -d' ' -f1)"   # a python with grpcio

deploy/images/build.sh --profile "$profile" --tag "$tag"

work="$(mktemp -d)"
containers=()
cleanup() {
  for c in "${containers[@]}"; do "${podman[@]}" rm -f "$c" >/dev/null 2>&1 || true; done
  # Rebuilding a tag leaves the previous image dangling: vfs keeps full copies.
  "${podman[@]}" image prune -f >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Keys as the chart mounts them: the ring for authz, the public keys for the others.
mkdir -p "$work/keys"
"$target/codectx" keys rotate --key-file "$work/keys/signing-keys" >/dev/null
"$target/codectx" keys public --key-file "$work/keys/signing-keys" > "$work/keys/verification-keys"
chown -R 65532:65532 "$work/keys"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
declare -A port
for service in "${services[@]}"; do port[$service]="$(free_port)"; done
peer() { printf '["http://127.0.0.1:%s"]' "${port[$1]}"; }

for service in "${services[@]}"; do
  prefix="CODECTX_$(echo "$service" | tr 'a-z-' 'A-Z_')__"
  state="$work/state-$service"
  mkdir -p "$state" && chown 65532:65532 "$state"
  env=(-e "${prefix}SERVER__LISTEN=127.0.0.1:${port[$service]}" -e "${prefix}SERVER__DRAIN_SECONDS=0")
  case "$service" in
    authz) env+=(-e "${prefix}DATA_DIR=/var/lib/codectx/authz" -e "${prefix}SIGNING__KEY_FILE=/etc/codectx/keys/signing-keys") ;;
    *) env+=(-e "${prefix}TENANT__VERIFICATION_KEYS_FILE=/etc/codectx/keys/verification-keys") ;;
  esac
  case "$service" in
    lexical-ranker) env+=(-e "${prefix}PEERS__GRAPH_HYDRATOR__ENDPOINTS=$(peer graph-hydrator)") ;;
    vector-gateway) env+=(-e "${prefix}VECTORS__BACKEND=embedded" -e "${prefix}VECTORS__EMBEDDED_PATH=/var/lib/codectx/vectors.db") ;;
    graph-hydrator) env+=(-e "${prefix}GRAPH__BACKEND=sqlite" -e "${prefix}GRAPH__SQLITE_PATH=/var/lib/codectx/graph.db") ;;
    context-assembler)
      for p in lexical-ranker embedding vector-gateway graph-hydrator; do
        env+=(-e "${prefix}PEERS__$(echo "$p" | tr 'a-z-' 'A-Z_')__ENDPOINTS=$(peer "$p")")
      done ;;
    gateway) env+=(-e "${prefix}HTTP__LISTEN=127.0.0.1:$(free_port)"
                   -e "${prefix}PEERS__AUTHZ__ENDPOINTS=$(peer authz)"
                   -e "${prefix}PEERS__CONTEXT_ASSEMBLER__ENDPOINTS=$(peer context-assembler)") ;;
  esac
  name="codectx-image-test-$service-$$"
  "${podman[@]}" run -d --name "$name" --network host \
    --read-only --cap-drop ALL --security-opt no-new-privileges \
    --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    -v "$state:/var/lib/codectx" -v "$work/keys:/etc/codectx/keys:ro" \
    "${env[@]}" "localhost/codectx/$service:$tag" >/dev/null
  containers+=("$name")
done

failed=0
for service in "${services[@]}"; do
  name="codectx-image-test-$service-$$"
  if ! "$python" deploy/images/health.py "127.0.0.1:${port[$service]}" 90; then
    "${podman[@]}" logs "$name" 2>&1 | tail -20 >&2
    failed=1
    continue
  fi
  user="$("${podman[@]}" top "$name" huser | tail -1 | tr -d ' ')"
  [ "$user" = 65532 ] || { echo "test.sh: $service runs as $user, not 65532" >&2; failed=1; }
  # No shell: the run must fail because /bin/sh does not exist (not for another reason).
  if shell="$("${podman[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
      --entrypoint /bin/sh "localhost/codectx/$service:$tag" -c true 2>&1)"; then
    echo "test.sh: the $service image has a shell" >&2; failed=1
  elif ! grep -q '/bin/sh.*no such file or directory' <<<"$shell"; then
    echo "test.sh: /bin/sh in the $service image failed for another reason: $shell" >&2; failed=1
  fi
done
# The indexer image: the command line, unprivileged, read-only.
version="$("${podman[@]}" run --rm --network none --read-only --cap-drop ALL --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "localhost/codectx/codectx:$tag" --version)"
case "$version" in codectx\ *) echo "codectx image: $version" ;; *) echo "test.sh: codectx --version said: $version" >&2; failed=1 ;; esac
[ "$failed" = 0 ] || { echo "test-images: FAILED" >&2; exit 1; }
echo "test-images: ok (7 service images SERVING, read-only, unprivileged, no shell; the indexer image runs)"
