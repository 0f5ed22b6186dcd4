#!/usr/bin/env bash
# milvus-lite 3.2 (PyPI) for codectx's tests: Milvus's gRPC API on a free loopback port.
#   deploy/local/milvus.sh start   # prints the endpoint (http://127.0.0.1:PORT)
#   deploy/local/milvus.sh stop
# Installs into a virtualenv under ${CODECTX_CACHE:-$HOME/.cache/codectx}/milvus-lite.
set -euo pipefail
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/milvus-lite"
state="${CODECTX_MILVUS_STATE:-${TMPDIR:-/tmp}/codectx-milvus-$(id -u)}"

fail() { echo "milvus.sh: $*" >&2; exit 1; }

install() {
  [ -x "$cache/venv/bin/milvus-lite" ] && "$cache/venv/bin/python" -c "import pymilvus, milvus_lite" 2>/dev/null && return 0
  command -v python3 >/dev/null || fail "python3 is needed to install milvus-lite from PyPI"
  echo "milvus.sh: installing milvus-lite 3.2 into $cache/venv" >&2
  python3 -m venv "$cache/venv" >&2 || fail "cannot create a virtualenv (install python3-venv)"
  "$cache/venv/bin/pip" install -q "milvus-lite==3.2.*" pymilvus >&2 || fail "pip could not install milvus-lite 3.2 and pymilvus"
}

start() {
  install
  if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
    echo "http://127.0.0.1:$(cat "$state/port")"
    return 0
  fi
  rm -rf "$state"; mkdir -p "$state"
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
  "$cache/venv/bin/milvus-lite" server --data-dir "$state/data" --host 127.0.0.1 --port "$port" >"$state/log" 2>&1 &
  echo $! >"$state/pid"
  echo "$port" >"$state/port"
  for _ in $(seq 1 60); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; then
      echo "http://127.0.0.1:$port"
      return 0
    fi
    kill -0 "$(cat "$state/pid")" 2>/dev/null || { tail -20 "$state/log" >&2; fail "milvus-lite exited during start-up (log above)"; }
    sleep 1
  done
  tail -20 "$state/log" >&2
  fail "milvus-lite did not listen within 60 s"
}

stop() {
  if [ -f "$state/pid" ]; then
    kill "$(cat "$state/pid")" 2>/dev/null || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  install) install ;;
  *) echo "usage: $0 start|stop|install" >&2; exit 2 ;;
esac
