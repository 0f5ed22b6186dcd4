#!/usr/bin/env bash
# The official MCP Python SDK (PyPI `mcp`, 2.x) for codectx's end-to-end tests.
#   deploy/local/mcp-client.sh   # installs if needed, prints the virtualenv's python
# Installs into a virtualenv under ${CODECTX_CACHE:-$HOME/.cache/codectx}/mcp-client.
set -euo pipefail
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/mcp-client"
fail() { echo "mcp-client.sh: $*" >&2; exit 1; }
if ! "$cache/venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp').startswith('2.')" 2>/dev/null; then
  command -v python3 >/dev/null || fail "python3 is needed to install the MCP Python SDK from PyPI"
  echo "mcp-client.sh: installing the MCP Python SDK 2.x into $cache/venv" >&2
  rm -rf "$cache/venv"
  python3 -m venv "$cache/venv" >&2 || fail "cannot create a virtualenv (install python3-venv)"
  "$cache/venv/bin/pip" install -q "mcp>=2.3,<3" >&2 || fail "pip could not install mcp 2.x"
fi
echo "$cache/venv/bin/python"
