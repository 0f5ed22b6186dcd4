#!/usr/bin/env bash
# make chart-test: lints charts/codectx, renders it for every value set in
# charts/codectx/ci/ and validates each rendering strictly with kubeconform against
# offline Kubernetes 1.30 and 1.34 schemas, checks that bad values fail and keys never
# render in plain text, and runs the helm-unittest suites in charts/codectx/tests. Tools
# come from the Go module proxy (deploy/k8s/tools.sh) and schemas from PyPI, cached in
# ~/.cache/codectx/k8s (the first run builds helm: ~3 min).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${CODECTX_K8S_CACHE:-$HOME/.cache/codectx/k8s}"
# helm, helm-unittest and kubeconform, built once from the Go module proxy.
bin="$(deploy/k8s/tools.sh chart)"
export PATH="$bin:$PATH"
SCHEMAS_VERSION=1.37.0
KUBERNETES_VERSIONS=(1.30.0 1.34.0)

schemas="$cache/schemas-$SCHEMAS_VERSION-strict"
if [ ! -f "$schemas/.complete" ]; then
  # The kubernetes-validate wheel bundles the schemas; their $refs point at
  work="$(mktemp -d)"
  python3 -m pip download --no-deps -q "kubernetes-validate==$SCHEMAS_VERSION" -d "$work"
  rm -rf "$schemas" && mkdir -p "$schemas"
  python3 -m zipfile -e "$work"/kubernetes_validate-*.whl "$work/wheel" >/dev/null
  for version in "${KUBERNETES_VERSIONS[@]}"; do
    cp -r "$work/wheel/kubernetes_validate/kubernetes-json-schema/v$version-local" "$schemas/"
  done
  # kubernetes.io, so they are rewritten to the local _definitions.json, and the `$id`s
  # (kubernetes.io addresses refs would resolve against) are dropped.
  python3 - "$schemas" <<'PY'
import json, pathlib, sys
for path in pathlib.Path(sys.argv[1]).rglob("*.json"):
    text = path.read_text().replace('"/api/_definitions.json#', '"_definitions.json#')
    schema = json.loads(text)
    schema.pop("$id", None)
    # Strict: an object schema that lists its properties allows no others (what
    # kubeconform's -strict means; these schemas leave it open).
    def close(node):
        if isinstance(node, dict):
            if ("properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)
    close(schema)
    path.write_text(json.dumps(schema))
PY
  rm -rf "$work"
  touch "$schemas/.complete"
fi

chart=charts/codectx
# An unstamped helm assumes Kubernetes 1.20: every command names the version.
for values in "$chart"/ci/*-values.yaml; do
  helm lint --strict --kube-version "${KUBERNETES_VERSIONS[-1]}" "$chart" -f "$values"
done
value_sets=("$chart"/ci/*-values.yaml)
for version in "${KUBERNETES_VERSIONS[@]}"; do
  for values in "${value_sets[@]}"; do
    echo "== Kubernetes $version, $(basename "$values")"
    helm template codectx "$chart" -f "$values" --kube-version "$version" \
      | kubeconform -strict -summary -kubernetes-version "$version" \
          -schema-location "$schemas/{{.NormalizedKubernetesVersion}}-local/{{.ResourceKind}}{{.KindSuffix}}.json"
  done
done

# Bad values fail at install, with a message naming the value.
expect_failure() { # message, helm args...
  local message="$1"; shift
  if out="$(helm template codectx "$chart" --kube-version "${KUBERNETES_VERSIONS[-1]}" "$@" 2>&1)"; then
    echo "expected failure ($message), but rendering succeeded" >&2; exit 1
  fi
  grep -q -- "$message" <<<"$out" || { echo "expected '$message' in: $out" >&2; exit 1; }
}
expect_failure "keys.signingKeys" 
expect_failure "graph.neo4j.uri" -f "$chart/ci/minimal-values.yaml" --set graph.backend=neo4j
expect_failure "graph.hugegraph.url" -f "$chart/ci/minimal-values.yaml" --set graph.backend=hugegraph
expect_failure "hugegraph" -f "$chart/ci/minimal-values.yaml" --set graph.backend=hugegraph \
  --set graph.hugegraph.url=http://admin:secret@hugegraph:8080/hugegraph
expect_failure "backend" -f "$chart/ci/minimal-values.yaml" --set graph.backend=postgres
expect_failure "port" -f "$chart/ci/minimal-values.yaml" --set components.authz.port=0
# Keys given inline appear only in the Secret (base64), never in plain text.
rendered="$(helm template codectx "$chart" --kube-version "${KUBERNETES_VERSIONS[-1]}" \
  --set-string keys.signingKeys=chart-test-private-seed --set-string keys.verificationKeys=chart-test-public)"
if grep -q "chart-test-private-seed\|chart-test-public" <<<"$rendered"; then
  echo "a key was rendered in plain text" >&2; exit 1
fi
grep -q "$(printf chart-test-private-seed | base64)" <<<"$rendered" || { echo "the key is missing from the Secret" >&2; exit 1; }

# helm-unittest: every template's behaviour (charts/codectx/tests).
helm-unittest "$chart"
echo "chart-test: ok"
