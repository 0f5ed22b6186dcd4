#!/usr/bin/env bash
# Fetches the pinned corpus (bench/corpus.toml) from the package registries with their
# ordinary clients: go mod download, pip download (sdists), npm pack, cargo vendor.
# Prints one `language name-version path` line per project. Idempotent: present ones are kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_CORPUS:-$HOME/.cache/codectx/corpus}"
mkdir -p "$cache"/{go,python,npm,crate}
python3 - "$here/corpus.toml" >"$cache/.list" <<'PY'
import sys, tomllib
corpus = tomllib.load(open(sys.argv[1], "rb"))
for language, items in corpus.items():
    for item in items:
        print(language, item.get("module") or item["name"], item["version"])
PY
while read -r language name version; do
  case "$language" in
    go)
      short="${name##*/}-$version"; target="$cache/go/$short"
      if [ ! -d "$target" ]; then
        dir="$(GOFLAGS=-mod=mod GOMODCACHE="$cache/go/.modcache" go mod download -json "$name@$version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
        cp -r "$dir" "$target"; chmod -R u+w "$target"
      fi ;;
    python)
      short="$name-$version"; target="$cache/python/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"
        pip download -q --no-deps --no-binary :all: -d "$tmp" "$name==$version"
        mkdir -p "$target"; tar -xzf "$tmp"/*.tar.gz -C "$target" --strip-components=1; rm -rf "$tmp"
      fi ;;
    npm)
      short="$name-$version"; target="$cache/npm/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"
        (cd "$tmp" && npm pack -q "$name@$version" >/dev/null)
        mkdir -p "$target"; tar -xzf "$tmp"/*.tgz -C "$target" --strip-components=1; rm -rf "$tmp"
      fi ;;
    crate)
      short="$name-$version"; target="$cache/crate/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"
        mkdir -p "$tmp/src"; echo 'fn main() {}' >"$tmp/src/main.rs"
        printf '[package]\nname = "corpus-fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' "$name" "$version" >"$tmp/Cargo.toml"
        (cd "$tmp" && cargo vendor -q --versioned-dirs "$tmp/vendor" >/dev/null)
        cp -r "$tmp/vendor/$name-$version" "$target"; rm -rf "$tmp"
      fi ;;
  esac
  echo "$language $short $target"
done <"$cache/.list"
