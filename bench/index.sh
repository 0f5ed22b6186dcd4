#!/usr/bin/env bash
# Indexing benchmark (make bench-index): cold index of the Python standard library on this
# machine, a no-change re-index, and a one-file re-index; files/s and peak memory. Then the
# watcher's path (examples/reindex.rs): one-file re-indexes in one process, with the facts
# kept in memory between runs and with the disk cache read back.
# Works on a copy of the library, so the installed one is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p codectx --bin codectx -p codectx-index --example reindex
codectx="$target/release/codectx"
stdlib="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
tar -C "$stdlib" --exclude=site-packages --exclude=__pycache__ -cf - . | tar -C "$work/src" -xf -

run() { # label
  /usr/bin/time -f "%e %M" -o "$work/time" "$codectx" index "$work/src" --name python-stdlib --data "$work/data" --quiet 2>/dev/null >"$work/out"
  read -r seconds kb <"$work/time"
  printf '| %s | %s | %s s | %s MiB |\n' "$1" "$(sed 's/^indexed [^:]*: //' "$work/out")" "$seconds" "$((kb / 1024))"
}

echo "Python $(python3 -c 'import sys; print(sys.version.split()[0])') standard library ($(find "$work/src" -name '*.py' | wc -l) .py files), $(nproc) cores"
echo
echo "| run | indexer summary | wall | peak RSS |"
echo "|---|---|---|---|"
run "cold"
run "no change"
printf '\ndef _codectx_bench_added():\n    return json_added()\n' >>"$work/src/json/encoder.py"
run "one file changed"

echo
echo "In one process, as the watcher of \`codectx up\` re-indexes (one parser thread, 7 edits of \`json/decoder.py\` each):"
echo
"$target/release/examples/reindex" "$work/src" python-stdlib "$work/data" json/decoder.py 7 2>/dev/null | sed 's/^/- /'
