#!/usr/bin/env bash
# Runs a command with the real backends the tests need started, and stops them after:
#   deploy/local/with-services.sh cargo test --workspace
# Exports CODECTX_TEST_NEO4J_URI, CODECTX_TEST_HUGEGRAPH_URI and _PASSWORD (HugeGraph 1.5,
# authentication on), CODECTX_TEST_MILVUS_URI, CODECTX_TEST_MODEL_DIR,
# ORT_DYLIB_PATH and CODECTX_TEST_MCP_PYTHON (a python with the official MCP SDK). A backend that cannot start fails the run with the
# reason; tests never skip a backend silently.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CODECTX_NEO4J_STATE="${CODECTX_NEO4J_STATE:-${TMPDIR:-/tmp}/codectx-neo4j-$$}"
export CODECTX_HUGEGRAPH_STATE="${CODECTX_HUGEGRAPH_STATE:-${TMPDIR:-/tmp}/codectx-hugegraph-$$}"
export CODECTX_MILVUS_STATE="${CODECTX_MILVUS_STATE:-${TMPDIR:-/tmp}/codectx-milvus-$$}"
cleanup() { "$here/neo4j.sh" stop || true; "$here/hugegraph.sh" stop || true; "$here/milvus.sh" stop || true; }
trap cleanup EXIT
CODECTX_TEST_NEO4J_URI="$("$here/neo4j.sh" start)"
export CODECTX_TEST_NEO4J_URI
echo "with-services.sh: Neo4j 5.26 at $CODECTX_TEST_NEO4J_URI" >&2
CODECTX_TEST_HUGEGRAPH_URI="$("$here/hugegraph.sh" start)"
CODECTX_TEST_HUGEGRAPH_PASSWORD="$(cat "$CODECTX_HUGEGRAPH_STATE/password")"
export CODECTX_TEST_HUGEGRAPH_URI CODECTX_TEST_HUGEGRAPH_PASSWORD
echo "with-services.sh: HugeGraph 1.5 at $CODECTX_TEST_HUGEGRAPH_URI (user admin)" >&2
CODECTX_TEST_MILVUS_URI="$("$here/milvus.sh" start)"
export CODECTX_TEST_MILVUS_URI
echo "with-services.sh: milvus-lite at $CODECTX_TEST_MILVUS_URI" >&2
models="$("$here/models.sh")"
export CODECTX_TEST_MODEL_DIR="$models"
export ORT_DYLIB_PATH="$models/libonnxruntime.so.1.32.0"
echo "with-services.sh: ONNX Runtime 1.32.0 and all-MiniLM-L6-v2 in $models" >&2
CODECTX_TEST_MCP_PYTHON="$("$here/mcp-client.sh")"
export CODECTX_TEST_MCP_PYTHON
echo "with-services.sh: MCP Python SDK at $CODECTX_TEST_MCP_PYTHON" >&2
"$@"
