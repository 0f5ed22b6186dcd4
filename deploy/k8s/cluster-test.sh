#!/usr/bin/env bash
# make test-k8s: the chart and peer discovery against a real kube-apiserver 1.34 + etcd
# (deploy/k8s/cluster.sh, in a private network namespace):
#   1. `helm install --dry-run=server` of every value set in charts/codectx/ci: the API
#      server validates each object (schemas, RBAC references, immutable fields);
#   2. a real `helm install`, `helm upgrade` to another value set and back, and
#      `helm uninstall` leaving nothing of the release behind;
#   3. tests/tests/kubernetes.rs: the EndpointSlice watch, authenticated as the chart's
#      context-assembler ServiceAccount with a token the API server issues, balancing
#      over real authz processes.
#   4. the indexer's CronJob installed, and `codectx reindex` starting it now.
# Expects the test binary, `authz` and `codectx` built (the Makefile target does it).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${CODECTX_TEST_KUBE_ADDRESSES:-}" ]; then
  exec deploy/k8s/cluster.sh run "$0" "$@"
fi
export PATH="$HOME/.cache/codectx/k8s/bin:${CODECTX_K8S_CACHE:+$CODECTX_K8S_CACHE/bin:}$PATH"
chart=charts/codectx
namespace=codectx
release=codectx

echo "== helm install --dry-run=server, every value set"
for values in "$chart"/ci/*-values.yaml; do
  helm install "$release" "$chart" --namespace "$namespace" --create-namespace \
    -f "$values" --dry-run=server >/dev/null
  echo "ok: $(basename "$values")"
done

echo "== helm install, upgrade, rollback"
helm install "$release" "$chart" --namespace "$namespace" --create-namespace \
  -f "$chart/ci/cluster-values.yaml" >/dev/null
helm upgrade "$release" "$chart" --namespace "$namespace" -f "$chart/ci/minimal-values.yaml" >/dev/null
helm rollback "$release" 1 --namespace "$namespace" >/dev/null
helm status "$release" --namespace "$namespace" | grep "STATUS: deployed" >/dev/null # not -q: grep stopping early would SIGPIPE helm under pipefail
echo "ok: revision $(helm history "$release" --namespace "$namespace" --max 1 -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["revision"])') deployed"

echo "== the indexer: a Job at install, a CronJob per repository"
helm install indexing "$chart" --namespace indexing --create-namespace \
  -f "$chart/ci/indexer-values.yaml" --no-hooks >/dev/null
echo "ok"

echo "== EndpointSlice discovery (as the chart's context-assembler ServiceAccount), codectx reindex"
CODECTX_TEST_K8S_NAMESPACE="$namespace" \
CODECTX_TEST_K8S_CALLER_ACCOUNT="$release-context-assembler" \
CODECTX_TEST_K8S_INDEXER_NAMESPACE=indexing \
CODECTX_TEST_K8S_INDEXER_CRONJOB=indexing-codectx-index-shop \
  cargo test --offline -q --workspace --features codectx-tests/kubernetes --test kubernetes -- --nocapture --test-threads 1

echo "== helm uninstall"
helm uninstall "$release" --namespace "$namespace" >/dev/null
helm uninstall indexing --namespace indexing >/dev/null
left="$(helm list --namespace "$namespace" -q)"
[ -z "$left" ] || { echo "cluster-test.sh: releases left after uninstall: $left" >&2; exit 1; }
echo "ok"
