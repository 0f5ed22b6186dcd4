#!/usr/bin/env bash
# Whole-stack memory (make bench-rss): the resident memory of `codectx up` (all seven
# services, embedded stores) serving one repository, alone in its process, under MCP
# sessions of the official Python SDK. Indexes REPO into a fresh data directory with
# `codectx up --index`, builds its code vectors, starts the stack again without --index
# (so the indexer's heap is not counted), then reports VmRSS/VmHWM idle, after a first
# round of calls, and after RUNS runs of SESSIONS concurrent sessions.
# Usage: bench/rss/rss.sh CODECTX REPO NAME WORKLOAD [SESSIONS] [ROUNDS] [RUNS]
# With CODECTX_RSS_DATA=DIR (a data directory an earlier run indexed and embedded, and
# CODECTX_RSS_KEY the development key it was made with), the index and vector steps are
# skipped and DIR is kept: two builds are compared on the same data without re-embedding.
set -euo pipefail
codectx="$1" repo="$2" name="$3" workload="$4"
sessions="${5:-32}" rounds="${6:-30}" runs="${7:-5}"
here="$(cd "$(dirname "$0")" && pwd)"
python="$("$here/../../deploy/local/mcp-client.sh")"
models="$("$here/../../deploy/local/models.sh")"
port="${CODECTX_RSS_PORT:-18080}"
url="http://127.0.0.1:$port/mcp"
pid=""
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; pid=""; }
if [ -n "${CODECTX_RSS_DATA:-}" ]; then
  data="$CODECTX_RSS_DATA"
  : "${CODECTX_RSS_KEY:?CODECTX_RSS_DATA needs CODECTX_RSS_KEY, the key that data directory was made with}"
  export CODECTX_RSS_KEY
  trap 'stop' EXIT
else
  data="$(mktemp -d)"
  export CODECTX_RSS_KEY="cdx_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  trap 'stop; rm -rf "$data"' EXIT
fi
start() { # extra flags
  "$codectx" up --data "$data" --no-watch --gateway-addr "127.0.0.1:$port" --grpc-base-port 0 \
    --models "$models" --dev-api-key-env CODECTX_RSS_KEY "$@" >"$data/up.log" 2>&1 &
  pid=$!
  until grep -q "stop with Ctrl-C" "$data/up.log"; do
    kill -0 "$pid" 2>/dev/null || { cat "$data/up.log" >&2; exit 1; }
    sleep 1
  done
}
memory() { # label
  awk -v label="$1" '/^VmRSS/ {rss=$2} /^VmHWM/ {hwm=$2} END {printf "| %s | %d MiB | %d MiB |\n", label, rss/1024, hwm/1024}' "/proc/$pid/status"
}
if [ -z "${CODECTX_RSS_DATA:-}" ]; then
  start --index "$repo" --name "$name"
  grep '^indexed' "$data/up.log" >&2
  "$python" "$here/wait_vectors.py" "$url" "$CODECTX_RSS_KEY" "$name" >&2
  stop
fi
start
sleep 5
echo "| moment | resident (VmRSS) | peak (VmHWM) |"
echo "|---|---:|---:|"
memory "started, idle"
"$python" "$here/drive.py" "$url" "$CODECTX_RSS_KEY" "$workload" 1 4 "$name" >&2
memory "after one round of calls, 4 sessions"
for run in $(seq 1 "$runs"); do
  "$python" "$here/drive.py" "$url" "$CODECTX_RSS_KEY" "$workload" "$rounds" "$sessions" "$name" >&2
  memory "after run $run of $sessions sessions x $rounds rounds"
done
