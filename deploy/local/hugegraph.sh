#!/usr/bin/env bash
# HugeGraph 1.5.0 for codectx's tests, from its Maven Central jars (no other download):
# the RocksDB backend in a temporary directory, REST and Gremlin on free loopback ports,
# authentication on (StandardAuthenticator, the `admin` user; Java 17 authenticates the
# admin only, ../shared/notes/hugegraph-offline.md).
#
#   deploy/local/hugegraph.sh start   # prints the REST URL http://127.0.0.1:PORT/hugegraph;
#                                     # the admin password is in $CODECTX_HUGEGRAPH_STATE/password
#   deploy/local/hugegraph.sh stop
#   deploy/local/hugegraph.sh fetch   # jars only (CI does this before the tests)
#
# Needs Java 11-17 and Maven. Jars are cached in ${CODECTX_CACHE:-$HOME/.cache/codectx};
# state in $CODECTX_HUGEGRAPH_STATE.
set -euo pipefail
version="1.5.0"
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_CACHE:-$HOME/.cache/codectx}/hugegraph-$version"
state="${CODECTX_HUGEGRAPH_STATE:-${TMPDIR:-/tmp}/codectx-hugegraph-$(id -u)}"
java_flags=(--add-exports=java.base/jdk.internal.reflect=ALL-UNNAMED --add-modules=jdk.unsupported
  --add-exports=java.base/sun.nio.ch=ALL-UNNAMED)

fail() { echo "hugegraph.sh: $*" >&2; exit 1; }

fetch() {
  [ -f "$cache/classpath" ] && [ "$here/hugegraph/pom.xml" -ot "$cache/classpath" ] && return 0
  command -v java >/dev/null || fail "java is not installed (Java 11-17 runs HugeGraph $version)"
  command -v mvn >/dev/null || fail "mvn is not installed (Maven fetches HugeGraph from Maven Central)"
  mkdir -p "$cache"
  echo "hugegraph.sh: fetching HugeGraph $version jars from Maven Central" >&2
  mvn -q -B -f "$here/hugegraph/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cache/classpath.raw" \
    -Dhugegraph.version="$version" >&2 || fail "Maven could not fetch org.apache.hugegraph:hugegraph-dist:$version"
  # The order the dist scripts use: the log4j binding, then HugeGraph's jars, then the rest.
  tr ':' '\n' <"$cache/classpath.raw" | awk '
    /log4j-slf4j-impl/ { a[++na]=$0; next }
    /\/hugegraph[^\/]*\.jar$/ { b[++nb]=$0; next }
    { c[++nc]=$0 }
    END { for(i=1;i<=na;i++) print a[i]; for(i=1;i<=nb;i++) print b[i]; for(i=1;i<=nc;i++) print c[i] }' \
    | paste -sd: - >"$cache/classpath.tmp"
  mv "$cache/classpath.tmp" "$cache/classpath"
  rm -f "$cache/classpath.raw"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# conf/ and scripts/ from the dist jar, set for one test server.
configure() {
  local rest_port="$1" gremlin_port="$2"
  local dist; dist="$(tr ':' '\n' <"$cache/classpath" | grep '/hugegraph-dist-[^/]*\.jar$')"
  (cd "$state" && unzip -q -o "$dist" 'conf/*' 'scripts/*')
  local conf="$state/conf"
  sed -i -e 's#^restserver.url=.*#restserver.url=http://127.0.0.1:'"$rest_port"'#' \
    -e 's#^graphs=.*#graphs='"$conf"'/graphs#' "$conf/rest-server.properties"
  cat >>"$conf/rest-server.properties" <<PROPS
gremlinserver.url=http://127.0.0.1:$gremlin_port
auth.authenticator=org.apache.hugegraph.auth.StandardAuthenticator
auth.graph_store=hugegraph
PROPS
  sed -i -e '/^arthas\.\(telnet_port\|http_port\)=/d' "$conf/rest-server.properties"
  sed -i -e 's#^backend=.*#backend=rocksdb#' -e 's#^serializer=.*#serializer=binary#' \
    -e 's#^search.text_analyzer=.*#search.text_analyzer=ikanalyzer#' \
    -e 's#^search.text_analyzer_mode=.*#search.text_analyzer_mode=smart#' "$conf/graphs/hugegraph.properties"
  cat >>"$conf/graphs/hugegraph.properties" <<PROPS
rocksdb.data_path=$state/data
rocksdb.wal_path=$state/data
rocksdb.write_buffer_size=8388608
PROPS
  # Java 17: Groovy's ASM resolving fails; request bodies up to 64 MiB (batched writes
  # bind their rows); the admin authenticates every request.
  sed -i -e 's#^\(\s*\)org.apache.tinkerpop.gremlin.server.jsr223.GremlinServerGremlinPlugin: {},#&\n\1org.apache.tinkerpop.gremlin.groovy.jsr223.GroovyCompilerGremlinPlugin: {compilerConfigurationOptions: {OptimizationOptions: {asmResolving: false}}},#' \
    -e 's#^maxContentLength:.*#maxContentLength: 67108864#' "$conf/gremlin-server.yaml"
  cat >>"$conf/gremlin-server.yaml" <<YAML
host: 127.0.0.1
port: $gremlin_port
authentication: {
  authenticator: org.apache.hugegraph.auth.StandardAuthenticator,
  authenticationHandler: org.apache.hugegraph.auth.WsAndHttpBasicAuthHandler,
  config: {tokens: $conf/rest-server.properties}
}
YAML
  grep -q GroovyCompilerGremlinPlugin "$conf/gremlin-server.yaml" || fail "could not set the Java 17 Gremlin option"
}

start() {
  fetch
  if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
    echo "http://127.0.0.1:$(cat "$state/port")/hugegraph"
    return 0
  fi
  rm -rf "$state"; mkdir -p "$state/data"
  local rest_port gremlin_port password
  rest_port="$(free_port)"; gremlin_port="$(free_port)"
  password="$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
  configure "$rest_port" "$gremlin_port"
  local cp; cp="$(cat "$cache/classpath")"
  (cd "$state" && printf '%s\n' "$password" | java "${java_flags[@]}" -Xmx512m -cp "$cp" \
    org.apache.hugegraph.cmd.InitStore conf/rest-server.properties >"$state/init.log" 2>&1) \
    || { tail -30 "$state/init.log" >&2; fail "InitStore failed (log above)"; }
  (cd "$state" && exec java "${java_flags[@]}" -Xms256m -Xmx2g -Dname=HugeGraphServer -cp "$cp" \
    org.apache.hugegraph.dist.HugeGraphServer conf/gremlin-server.yaml conf/rest-server.properties \
    >"$state/log" 2>&1) &
  echo $! >"$state/pid"
  echo "$rest_port" >"$state/port"
  echo "$password" >"$state/password"
  for _ in $(seq 1 120); do
    local code
    code="$(curl -s -o /dev/null -w '%{http_code}' -u "admin:$password" "http://127.0.0.1:$rest_port/graphs" || true)"
    if [ "$code" = 200 ]; then
      echo "http://127.0.0.1:$rest_port/hugegraph"
      return 0
    fi
    kill -0 "$(cat "$state/pid")" 2>/dev/null || { tail -30 "$state/log" >&2; fail "HugeGraph exited during start-up (log above)"; }
    sleep 1
  done
  tail -30 "$state/log" >&2
  fail "HugeGraph did not answer /graphs within 120 s"
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
