#!/usr/bin/env bash
# Neo4j 5.26 Community for codectx's tests, from its Maven Central jars (no other
# download): an embedded database with Bolt on a free loopback port and auth disabled.
#
#   deploy/local/neo4j.sh start   # prints the Bolt URI; state in $CODECTX_NEO4J_STATE
#   deploy/local/neo4j.sh stop
#
# CODECTX_NEO4J_HEAP (default 1g) and CODECTX_NEO4J_PAGECACHE_MB (default 256) size the
# server; the tests use the defaults, a benchmark of a large write sizes the page cache
# to the store (a production server's setting).
#
# Needs Java 17 and Maven. Jars are cached in ${CODECTX_CACHE:-$HOME/.cache/codectx}.
set -euo pipefail
version="5.26.0"
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/neo4j-$version"
state="${CODECTX_NEO4J_STATE:-${TMPDIR:-/tmp}/codectx-neo4j-$(id -u)}"

fail() { echo "neo4j.sh: $*" >&2; exit 1; }

fetch() {
  [ -f "$cache/classes/Neo4jTestServer.class" ] && [ "$here/neo4j/Neo4jTestServer.java" -ot "$cache/classes/Neo4jTestServer.class" ] && return 0
  command -v java >/dev/null || fail "java is not installed (Java 17 is needed to run Neo4j 5.26)"
  command -v mvn >/dev/null || fail "mvn is not installed (Maven fetches Neo4j from Maven Central)"
  mkdir -p "$cache"
  echo "neo4j.sh: fetching Neo4j $version jars from Maven Central into $cache" >&2
  mvn -q -B -f "$here/neo4j/pom.xml" dependency:copy-dependencies -DoutputDirectory="$cache/lib" \
    -Dneo4j.version="$version" >&2 || fail "Maven could not fetch org.neo4j:neo4j:$version and neo4j-bolt"
  mkdir -p "$cache/classes"
  javac -cp "$cache/lib/*" -d "$cache/classes" "$here/neo4j/Neo4jTestServer.java" >&2 \
    || fail "could not compile the Neo4j launcher"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start() {
  fetch
  if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
    echo "bolt://127.0.0.1:$(cat "$state/port")"
    return 0
  fi
  rm -rf "$state"; mkdir -p "$state"
  local port; port="$(free_port)"
  java -Xms256m -Xmx"${CODECTX_NEO4J_HEAP:-1g}" -Dcodectx.pagecache.mb="${CODECTX_NEO4J_PAGECACHE_MB:-256}" -cp "$cache/lib/*:$cache/classes" Neo4jTestServer "$state/data" "$port" \
    >"$state/log" 2>&1 &
  echo $! >"$state/pid"
  echo "$port" >"$state/port"
  for _ in $(seq 1 120); do
    if grep -q "^READY" "$state/log"; then
      echo "bolt://127.0.0.1:$port"
      return 0
    fi
    kill -0 "$(cat "$state/pid")" 2>/dev/null || { tail -20 "$state/log" >&2; fail "Neo4j exited during start-up (log above)"; }
    sleep 1
  done
  tail -20 "$state/log" >&2
  fail "Neo4j did not accept Bolt connections within 120 s"
}

stop() {
  if [ -f "$state/pid" ]; then
    local pid; pid="$(cat "$state/pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  fetch) fetch ;;
  *) echo "usage: $0 start|stop|fetch" >&2; exit 2 ;;
esac
