#!/usr/bin/env bash
# Where a saturated stack spends its CPU, per service and per kind of work:
#   bench/profile/profile.sh CODECTX_BINARY BENCH_ARGS...
# runs `codectx bench BENCH_ARGS` (which must include a closed-loop load phase,
# --concurrency N --duration D with D of 60 s or more), samples the process with
# `perf record` (Debian's linux-perf; DWARF call stacks, 199 Hz) for 20 s once the load
# has started, and prints bench/profile/attribute.py's tables (docs/BENCHMARKS.md).
# Every service runs in the one bench process, so one profile covers all seven.
set -euo pipefail
binary="$1"; shift
here="$(cd "$(dirname "$0")" && pwd)"
out="${PROFILE_OUT:-${TMPDIR:-/tmp}/codectx-profile}"
command -v perf >/dev/null || { echo "profile.sh: perf is needed (apt install linux-perf)" >&2; exit 1; }
mkdir -p "$out"
"$binary" bench "$@" >"$out/bench.log" 2>&1 &
bench=$!
# The load phase starts after indexing (incremental) and the accuracy pass.
for _ in $(seq 1 600); do
  grep -q "load phase" "$out/bench.log" 2>/dev/null && break
  kill -0 "$bench" 2>/dev/null || { cat "$out/bench.log" >&2; exit 1; }
  sleep 1
done
sleep 5
perf record -F 199 --call-graph dwarf,16384 -p "$bench" -o "$out/perf.data" -- sleep 20 >/dev/null 2>&1
# The whole stack's peak resident memory so far (all seven services, the gateway's MCP
# sessions and the load clients live in this one process).
peak="$(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' "/proc/$bench/status" 2>/dev/null || true)"
wait "$bench"
perf script -i "$out/perf.data" -F comm,tid,ip,sym,dso 2>/dev/null >"$out/stacks.txt"
echo "peak resident memory of the stack under load: ${peak:-unknown}"
python3 "$here/attribute.py" "$out/stacks.txt"
