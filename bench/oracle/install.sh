#!/usr/bin/env bash
# Install the SCIP indexers the oracle benchmark compares the code graph with, from the
# package registries only (npm and the Go module proxy), into ~/.cache/codectx/oracles.
# Idempotent: a tool already installed at its pinned version is kept.
set -euo pipefail
ROOT="${CODECTX_ORACLES:-$HOME/.cache/codectx/oracles}"
SCIP_TS=0.4.0
SCIP_PY=0.6.6
SCIP_GO=v0.1.26
mkdir -p "$ROOT/bin"

npm_tool() { # package version binary
  local dir="$ROOT/npm/$1@$2"
  if [[ ! -x "$dir/node_modules/.bin/$3" ]]; then
    mkdir -p "$dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" "$1@$2" >/dev/null
  fi
  ln -sf "$dir/node_modules/.bin/$3" "$ROOT/bin/$3"
}
npm_tool @sourcegraph/scip-typescript "$SCIP_TS" scip-typescript
npm_tool @sourcegraph/scip-python "$SCIP_PY" scip-python

# scip-go: `go install` fails the module's deprecation check, so build from the module cache.
if [[ ! -x "$ROOT/bin/scip-go" || "$(cat "$ROOT/bin/scip-go.version" 2>/dev/null)" != "$SCIP_GO" ]]; then
  mod="github.com/sourcegraph/scip-go@$SCIP_GO"
  src=$(go mod download -json "$mod" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  work=$(mktemp -d)
  cp -r "$src/." "$work/" && chmod -R u+w "$work"
  (cd "$work" && GOFLAGS=-mod=mod go build -o "$ROOT/bin/scip-go" ./cmd/scip-go)
  echo "$SCIP_GO" >"$ROOT/bin/scip-go.version"
  rm -rf "$work"
fi
echo "oracles in $ROOT/bin: $(ls "$ROOT/bin" | grep -v version | tr '\n' ' ')"
