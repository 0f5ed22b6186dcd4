#!/usr/bin/env bash
# make images: one OCI image per codectx service (and `codectx`, the command line the
# chart's indexer Jobs run), built without a Docker daemon
# (Debian's buildah, vfs storage, chroot isolation) on `scratch`: nothing is pulled.
#
#   deploy/images/build.sh [--profile release|debug] [--tag TAG] [--archive DIR] [SERVICE...]
#
# Each image holds /usr/local/bin/service (the service binary), the shared libraries
# `ldd` lists for it, /etc/ssl/certs/ca-certificates.crt, /etc/passwd and /etc/group
# with the unprivileged user 65532 it runs as, and an empty /var/lib/codectx. The
# embedding image also holds ONNX Runtime under /opt/onnxruntime and the model under
# /models (from `make models`), so it is SERVING without any volume; a volume mounted
# at /models replaces the model. Images are tagged localhost/codectx/<service>:<tag>
# in buildah/podman's vfs store; --archive also writes each as an OCI archive.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
profile=release
tag="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)"
archive=""
services=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --archive) archive="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown option $1" >&2; exit 2 ;;
    *) services+=("$1"); shift ;;
  esac
done
[ ${#services[@]} -gt 0 ] || services=(authz lexical-ranker embedding vector-gateway graph-hydrator context-assembler gateway codectx)
command -v buildah >/dev/null || { echo "build.sh: buildah is missing (apt-get install buildah podman runc)" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$repo/target}/$profile"
storage=(--storage-driver vfs)

# Copies a file and every shared library it needs (as `ldd` resolves them here) into
# the root, at the same paths.
copy_with_libraries() {
  local file="$1" root="$2" destination="$3"
  install -D -m 0755 "$file" "$root$destination"
  ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | while read -r library; do
    [ -e "$root$library" ] || install -D -m 0755 "$(readlink -f "$library")" "$root$library"
  done
}

for service in "${services[@]}"; do
  binary="$target/$service"
  [ -x "$binary" ] || { echo "build.sh: $binary is missing: cargo build --profile $profile --workspace --bins" >&2; exit 1; }
  work="$(mktemp -d)"
  root="$work/rootfs"
  copy_with_libraries "$binary" "$root" /usr/local/bin/service
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  mkdir -p "$root/tmp" "$root/var/lib/codectx"
  chmod 1777 "$root/tmp"
  chown 65532:65532 "$root/var/lib/codectx"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ncodectx:x:65532:65532:codectx:/var/lib/codectx:/sbin/nologin\n' > "$root/etc/passwd"
  printf 'root:x:0:\ncodectx:x:65532:\n' > "$root/etc/group"
  if [ "$service" = embedding ]; then
    models="$("$repo/deploy/local/models.sh")"
    copy_with_libraries "$models/libonnxruntime.so.1.32.0" "$root" /opt/onnxruntime/libonnxruntime.so.1.32.0
    install -D -m 0644 "$models/model.onnx" "$root/models/model.onnx"
    install -D -m 0644 "$models/tokenizer.json" "$root/models/tokenizer.json"
  fi
  cp "$here/Containerfile" "$work/Containerfile"
  image="localhost/codectx/$service:$tag"
  extra=()
  if [ "$service" = embedding ]; then
    extra=(--env CODECTX_EMBEDDING__MODEL__DIRECTORY=/models
           --env CODECTX_EMBEDDING__MODEL__RUNTIME=/opt/onnxruntime/libonnxruntime.so.1.32.0)
  fi
  buildah "${storage[@]}" build --quiet --isolation chroot --layers=false \
    --build-arg "SERVICE=$service" --build-arg "VERSION=$tag" \
    "${extra[@]}" -t "$image" -f "$work/Containerfile" "$work" >/dev/null
  if [ -n "$archive" ]; then
    mkdir -p "$archive"
    rm -f "$archive/$service.tar"
    buildah "${storage[@]}" push --quiet "$image" "oci-archive:$archive/$service.tar:$tag" >/dev/null
  fi
  size="$(du -sh "$root" | cut -f1)"
  echo "built $image ($size)"
  rm -rf "$work"
done
