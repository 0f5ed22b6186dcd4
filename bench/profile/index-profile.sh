#!/usr/bin/env bash
# Where a cold index spends its CPU, phase by phase:
#   bench/profile/index-profile.sh CODECTX_BINARY REPOSITORY [NAME]
# indexes REPOSITORY into a fresh data directory under `perf record` (Debian's
# linux-perf; DWARF call stacks, 99 Hz, wall-clock sample times), and prints
# bench/profile/index_attribute.py's tables: per phase (walk, parse, resolve, write,
# finish; from the indexer's debug log) its wall time, CPU seconds, how many cores were
# busy, and the kinds of work (tree-sitter parsing, tree walks, the resolver, SQLite, ...).
# A phase with fewer busy cores than the machine has is where a faster index must look
# first (docs/BENCHMARKS.md, "Session of 2026-12-07 (fifth)").
set -euo pipefail
binary="$1"; repository="$2"; name="${3:-profiled}"
here="$(cd "$(dirname "$0")" && pwd)"
out="${PROFILE_OUT:-${TMPDIR:-/tmp}/codectx-index-profile}"
command -v perf >/dev/null || { echo "index-profile.sh: perf is needed (apt install linux-perf)" >&2; exit 1; }
rm -rf "$out/data"
mkdir -p "$out/data"
# -k realtime: sample times on the clock the log's timestamps are on.
RUST_LOG="codectx_index=debug" NO_COLOR=1 perf record -k realtime -F 99 --call-graph dwarf,8192 \
  -o "$out/perf.data" -- "$binary" index --name "$name" --data "$out/data" "$repository" \
  >"$out/index.out" 2>"$out/index.log"
perf script -i "$out/perf.data" -F tid,time,ip,sym,dso 2>/dev/null >"$out/stacks.txt"
cat "$out/index.out"
python3 "$here/index_attribute.py" "$out/index.log" "$out/stacks.txt" 99 "$(nproc)"
