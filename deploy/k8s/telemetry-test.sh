#!/usr/bin/env bash
# The chart's telemetry, run for real (part of make test-k8s): renders the chart's
# OpenTelemetry Collector configuration, validates and runs it with a collector built
# from the same components (deploy/k8s/tools.sh telemetry), sends it the OTLP of a
# `codectx up` stack answering one MCP tool call (official Python SDK), scrapes the
# collector's Prometheus endpoint, and requires every metric the chart's Grafana
# dashboard queries to be there. Runs in a private network namespace (the collector
# listens on its fixed ports).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" != "--inside" ]; then
  bin="$(deploy/k8s/tools.sh chart)"
  deploy/k8s/tools.sh telemetry >/dev/null
  exec unshare --map-root-user --net "$0" --inside "$bin"
fi
export PATH="$2:$PATH"
ip link set lo up
target="${CARGO_TARGET_DIR:-target}/debug"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== the chart's collector configuration, validated and running"
helm template codectx charts/codectx --kube-version 1.34.0 --set keys.existingSecret=k \
  --set telemetry.collector.enabled=true -s templates/telemetry.yaml \
  | python3 -c '
import sys
text = sys.stdin.read()
block = text.split("config.yaml: |\n", 1)[1].split("\n---", 1)[0]
print("\n".join(line[4:] for line in block.splitlines()))' > "$work/collector.yaml"
otelcol-codectx validate --config "$work/collector.yaml"
otelcol-codectx --config "$work/collector.yaml" >"$work/collector.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:13133/", timeout=1)' 2>/dev/null && break
  sleep 0.5
done

echo "== one tool call from a codectx stack exporting to it"
export DEV_KEY="cxk_telemetrytest_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 OTEL_METRIC_EXPORT_INTERVAL=1000 \
  "$target/codectx" up --data "$work/data" --index tests/fixtures/go --name shop \
  --gateway-addr 127.0.0.1:8080 --grpc-base-port 0 --dev-api-key-env DEV_KEY \
  --models "$(deploy/local/models.sh)" >"$work/up.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do grep -qs "codectx is up" "$work/up.log" && break; sleep 0.5; done
grep -qs "codectx is up" "$work/up.log" || { tail -20 "$work/up.log" >&2; echo "telemetry-test: codectx up did not start" >&2; exit 1; }
python="$(deploy/local/mcp-client.sh)"
"$python" tests/e2e/mcp_e2e.py call --url http://127.0.0.1:8080/mcp --key "$DEV_KEY" \
  --tool minimal_context --arguments '{"task": "how is an order total computed?"}' >/dev/null
"$python" tests/e2e/mcp_e2e.py call --url http://127.0.0.1:8080/mcp --key "$DEV_KEY" \
  --tool search --arguments '{"query": "order total"}' >/dev/null

echo "== every metric the dashboard queries is scraped from the collector"
python3 - "$work" <<'PY'
import json, re, sys, time, urllib.request
work = sys.argv[1]
dashboard = json.load(open("charts/codectx/dashboards/codectx.json"))
exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
wanted = set()
for expr in exprs:
    # Metric names: identifiers left once grouping labels, matchers, ranges and strings
    # are removed, that are not function calls.
    bare = re.sub(r"\b(by|without)\s*\([^)]*\)", " ", expr)
    bare = re.sub(r'\{[^}]*\}|\[[^\]]*\]|"[^"]*"', " ", bare)
    wanted.update(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", bare))
missing = wanted
for _ in range(30):
    text = urllib.request.urlopen("http://127.0.0.1:8889/metrics", timeout=2).read().decode()
    series = set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", text, re.M))
    missing = wanted - series
    if not missing:
        break
    time.sleep(1)
if missing:
    print("telemetry-test: the dashboard queries metrics the collector does not have:", sorted(missing), file=sys.stderr)
    print("scraped:", sorted(s for s in series if not s.startswith(("otelcol", "go_", "process_"))), file=sys.stderr)
    sys.exit(1)
# Every label an expression groups or filters by is on the series it reads.
labels_of = {}
for line in text.splitlines():
    match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}", line)
    if match:
        labels_of.setdefault(match.group(1), set()).update(re.findall(r'(\w+)="', match.group(2)))
for expr in exprs:
    used = set()
    for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        used.update(label.strip() for label in group.split(",") if label.strip())
    for matcher in re.findall(r"\{([^}]*)\}", expr):
        used.update(re.findall(r"(\w+)\s*(?:=|!=|=~|!~)", matcher))
    bare = re.sub(r"\b(by|without)\s*\([^)]*\)", " ", expr)
    bare = re.sub(r'\{[^}]*\}|\[[^\]]*\]|"[^"]*"', " ", bare)
    names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", bare))
    have = set().union(*(labels_of.get(n, set()) for n in names))
    absent = used - have
    if absent:
        print(f"telemetry-test: {expr!r} uses labels the series lack: {sorted(absent)} (they have {sorted(have)})", file=sys.stderr)
        sys.exit(1)
print(f"ok: {len(wanted)} metrics the dashboard queries are exported, with its labels: {sorted(wanted)}")
PY
