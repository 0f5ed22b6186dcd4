#!/usr/bin/env bash
# The oracle benchmark: installs the SCIP indexers, indexes the corpus with them, then
# judges codectx's graph of each project against its SCIP index (codectx bench oracle).
# Report: $BENCH_OUT/oracle.{json,md}. Extra arguments go to `codectx bench oracle`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${CODECTX_ORACLES:-$HOME/.cache/codectx/oracles}"
corpus="${CODECTX_CORPUS:-$HOME/.cache/codectx/corpus}"
"$here/install.sh"
"$here/index.sh" >/dev/null
args=()
for scip in "$root"/scip/*.scip; do
  name="$(basename "$scip" .scip)"; language="${name%%-*}"; project="${name#*-}"
  args+=(--project "$scip=$corpus/$language/$project")
done
${CODECTX:-cargo run --release -q -p codectx --bin codectx --} bench oracle --out "${BENCH_OUT:-.codectx-bench/reports}" "${args[@]}" "$@"
