#!/usr/bin/env bash
# Builds a SCIP index for every Go, Python and npm project of the corpus with the
# compiler-grade indexers bench/oracle/install.sh installed. Output:
# ~/.cache/codectx/oracles/scip/<language>-<name-version>.scip. Kept when present.
# Usage: bench/oracle/index.sh [language/name-version ...]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${CODECTX_ORACLES:-$HOME/.cache/codectx/oracles}"
corpus="${CODECTX_CORPUS:-$HOME/.cache/codectx/corpus}"
bin="$root/bin"
mkdir -p "$root/scip"
"$here/../fetch-corpus.sh" >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in "$corpus"/go/*/ "$corpus"/python/*/ "$corpus"/npm/*/; do
    d="${d%/}"; targets+=("$(basename "$(dirname "$d")")/$(basename "$d")")
  done
fi

for target in "${targets[@]}"; do
  language="${target%%/*}"; project="${target#*/}"
  src="$corpus/$language/$project"
  out="$root/scip/$language-$project.scip"
  [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" -gt 1000 ] && { echo "$out (kept)"; continue; }
  work="$(mktemp -d)"; cp -r "$src/." "$work/"; chmod -R u+w "$work"
  case "$language" in
    go)
      # The module's own dependencies come from the module proxy (type information).
      (cd "$work" && GOFLAGS=-mod=mod "$bin/scip-go" --output "$out" >/dev/null 2>"$work.log") ;;
    python)
      # A clean venv with the project installed editable, so its own imports resolve to
      # the checkout (not a copy in site-packages); no dependencies.
      python3 -m venv "$work.venv"
      # compat mode: a path in a .pth file, which pyright follows (setuptools' default
      # editable import hook is invisible to it, and tests would reference nothing).
      "$work.venv/bin/pip" install -q --no-deps --config-settings editable_mode=compat -e "$work" >/dev/null 2>"$work.log" || true
      (cd "$work" && VIRTUAL_ENV="$work.venv" PATH="$work.venv/bin:$PATH" \
        "$bin/scip-python" index . --project-name "${project%-*}" --project-version "${project##*-}" --output "$out" >/dev/null 2>>"$work.log") ;;
    npm)
      # The package's own tsconfig (if any) often covers only its typings: the oracle
      # gets one that covers every JavaScript and TypeScript source, like the indexer.
      cat >"$work/tsconfig.json" <<'JSON'
{ "compilerOptions": { "allowJs": true, "checkJs": false, "noEmit": true, "target": "es2022",
    "module": "nodenext", "moduleResolution": "nodenext", "skipLibCheck": true },
  "include": ["**/*.js", "**/*.cjs", "**/*.mjs", "**/*.ts", "**/*.cts", "**/*.mts", "**/*.tsx"],
  "exclude": ["node_modules", "dist", "build"] }
JSON
      (cd "$work" && "$bin/scip-typescript" index --output "$out" >/dev/null 2>"$work.log") ;;
  esac
  if [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" -le 1000 ]; then
    echo "bench/oracle/index.sh: $target produced no index:" >&2; cat "$work.log" >&2 || true
    rm -rf "$work" "$work.venv" "$work.log" "$out"; exit 1
  fi
  rm -rf "$work" "$work.venv" "$work.log"
  echo "$out"
done
