#!/usr/bin/env bash
# Fetches the pinned corpus (bench/corpus.toml) from the package registries with their
# ordinary clients: go mod download, pip download (sdists), npm pack, cargo vendor; and
# over HTTP, Debian source packages from the Debian pool (the .dsc names the upstream
# tarball and its MD5, which is checked) and sources jars from Maven Central.
# Prints one `language name-version path` line per project. Idempotent: present ones are kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_CORPUS:-$HOME/.cache/codectx/corpus}"
mkdir -p "$cache"/{go,python,npm,crate,debian,maven}
python3 - "$here/corpus.toml" >"$cache/.list" <<'PY'
import sys, tomllib
corpus = tomllib.load(open(sys.argv[1], "rb"))
for language, items in corpus.items():
    for item in items:
        if language == "debian" and "binary" in item:
            print("debian-binary", item["binary"], item["version"])
        elif language == "debian":
            print(language, item["source"], item["version"])
        elif language == "maven":
            group, artifact, version = item["coordinates"].split(":")
            print(language, f"{group}:{artifact}", version)
        else:
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
    debian)
      short="$name-${version%-*}"; target="$cache/debian/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"
        prefix="${name:0:1}"; case "$name" in lib*) prefix="${name:0:4}";; esac
        pool="http://deb.debian.org/debian/pool/main/$prefix/$name"
        curl -fsS -o "$tmp/source.dsc" "$pool/${name}_${version}.dsc"
        read -r md5 _ orig < <(awk '/^Files:/{f=1;next} f&&/\.orig\.tar\./{print $1, $2, $3; exit}' "$tmp/source.dsc")
        curl -fsS -o "$tmp/$orig" "$pool/$orig"
        echo "$md5  $tmp/$orig" | md5sum -c --quiet -
        mkdir -p "$target"; tar -xf "$tmp/$orig" -C "$target" --strip-components=1; rm -rf "$tmp"
      fi ;;
    debian-binary)
      short="$name-${version%-*}"; target="$cache/debian/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"; chmod 777 "$tmp"
        (cd "$tmp" && apt-get download -q "$name=$version" >/dev/null 2>&1)
        mkdir -p "$target"; dpkg-deb -x "$tmp"/*.deb "$target"; rm -rf "$tmp"
      fi ;;
    maven)
      artifact="${name#*:}"; group="${name%%:*}"
      short="$artifact-$version"; target="$cache/maven/$short"
      if [ ! -d "$target" ]; then
        tmp="$(mktemp -d)"
        curl -fsS -o "$tmp/sources.jar" "https://repo1.maven.org/maven2/${group//.//}/$artifact/$version/$artifact-$version-sources.jar"
        mkdir -p "$target"; (cd "$target" && python3 -m zipfile -e "$tmp/sources.jar" .); rm -rf "$tmp"
      fi ;;
  esac
  echo "$language $short $target"
done <"$cache/.list"
