#!/usr/bin/env bash
# An OTLP/gRPC receiver for the telemetry test (deploy/local/otlp/receiver.py): the
# official opentelemetry-proto messages served with grpcio, both from PyPI.
#   deploy/local/otlp-receiver.sh   # installs if needed, prints the command that runs it
# Installs into a virtualenv under ${CODECTX_CACHE:-$HOME/.cache/codectx}/otlp-receiver.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/otlp-receiver"
fail() { echo "otlp-receiver.sh: $*" >&2; exit 1; }
if ! "$cache/venv/bin/python" -c "import grpc, opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc" 2>/dev/null; then
  command -v python3 >/dev/null || fail "python3 is needed to install the OTLP receiver from PyPI"
  echo "otlp-receiver.sh: installing grpcio and opentelemetry-proto into $cache/venv" >&2
  rm -rf "$cache/venv"
  python3 -m venv "$cache/venv" >&2 || fail "cannot create a virtualenv (install python3-venv)"
  "$cache/venv/bin/pip" install -q "grpcio>=1.66,<2" "opentelemetry-proto>=1.27,<2" >&2 \
    || fail "pip could not install grpcio and opentelemetry-proto"
fi
echo "$cache/venv/bin/python $here/otlp/receiver.py"
