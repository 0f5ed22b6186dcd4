#!/usr/bin/env bash
# Builds the Kubernetes tools the chart and cluster tests use, from the Go module proxy,
# once, into ${CODECTX_K8S_CACHE:-~/.cache/codectx/k8s}/bin (a marker file per version):
#   helm, helm-unittest, kubeconform            (make chart-test)
#   kube-apiserver, etcd                         (make test-k8s: a real API server)
#   otelcol-codectx                              (the chart's collector config, run for real)
# and the offline JSON schemas kubeconform reads. Prints the bin directory.
#
#   deploy/k8s/tools.sh [all|chart|cluster|telemetry]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${CODECTX_K8S_CACHE:-$HOME/.cache/codectx/k8s}"
bin="$cache/bin"
mkdir -p "$bin"
HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.7.0
HELM_UNITTEST_VERSION=v1.1.2
KUBERNETES_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
OTELCOL_VERSION=v0.165.0

log() { echo "tools.sh: $*" >&2; }
built() { [ -x "$bin/$1" ] && [ -f "$bin/.$1-$2" ]; }
mark() { rm -f "$bin/.$1-"*; touch "$bin/.$1-$2"; }
module_dir() {
  GOFLAGS=-mod=mod go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
}

chart_tools() {
  # `go install` builds carry no version stamp: the marker file records what was built.
  if ! built helm "$HELM_VERSION"; then
    log "building helm $HELM_VERSION (once, ~3 min)"
    GOFLAGS=-mod=mod GOBIN="$bin" nice go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
    mark helm "$HELM_VERSION"
  fi
  # helm-unittest: the proxy serves v1.1.2, which `go install` refuses (a replace
  # directive), so it is built from a copy of the module.
  if ! built helm-unittest "$HELM_UNITTEST_VERSION"; then
    local work; work="$(mktemp -d)"
    (cd "$work" && printf 'module tmp\ngo 1.22\n' > go.mod \
      && cp -r "$(module_dir "github.com/helm-unittest/helm-unittest@$HELM_UNITTEST_VERSION")" src \
      && chmod -R u+w src && cd src \
      && GOFLAGS=-mod=mod nice go build -o "$bin/helm-unittest" ./cmd/helm-unittest) >&2
    rm -rf "$work"
    mark helm-unittest "$HELM_UNITTEST_VERSION"
  fi
  if ! built kubeconform "$KUBECONFORM_VERSION"; then
    GOBIN="$bin" go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" >&2
    mark kubeconform "$KUBECONFORM_VERSION"
  fi
}

# kube-apiserver: `go install k8s.io/kubernetes/...` is refused (replace directives), so
# a wrapper module requires k8s.io/kubernetes and replaces each staging module with its
# published twin (v0.x of the same release); -X stamps the version helm checks.
cluster_tools() {
  if ! built kube-apiserver "$KUBERNETES_VERSION"; then
    log "building kube-apiserver $KUBERNETES_VERSION (once, ~3-6 min, 2.2 GB RAM)"
    local work; work="$(mktemp -d)"
    cp "$here/tools/kube-apiserver.go" "$work/main.go"
    local staging="v0.${KUBERNETES_VERSION#v1.}"
    (
      cd "$work"
      printf 'module codectx.local/kube-apiserver\n\ngo 1.24\n\nrequire k8s.io/kubernetes %s\n' "$KUBERNETES_VERSION" > go.mod
      # Every staging module k8s.io/kubernetes replaces with ./staging/... gets its twin.
      sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' \
        "$(module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")/go.mod" | sort -u | while read -r module; do
        echo "replace $module => $module $staging" >> go.mod
      done
      GOFLAGS=-mod=mod go mod tidy >&2
      local flags=""
      for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags="$flags -X $package.gitVersion=$KUBERNETES_VERSION -X $package.gitMajor=1"
        flags="$flags -X $package.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)"
      done
      GOFLAGS=-mod=mod nice go build -ldflags "-s -w $flags" -o "$bin/kube-apiserver" . >&2
    )
    rm -rf "$work"
    mark kube-apiserver "$KUBERNETES_VERSION"
  fi
  if ! built etcd "$ETCD_VERSION"; then
    log "building etcd $ETCD_VERSION (once, ~40 s)"
    local work; work="$(mktemp -d)"
    cp "$here/tools/etcd.go" "$work/main.go"
    (
      cd "$work"
      printf 'module codectx.local/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > go.mod
      GOFLAGS=-mod=mod go mod tidy >&2
      GOFLAGS=-mod=mod nice go build -ldflags "-s -w" -o "$bin/etcd" . >&2
    )
    rm -rf "$work"
    mark etcd "$ETCD_VERSION"
  fi
}

# The OpenTelemetry Collector with the components the chart's config names (the
# collector's own builder, from the Go module proxy).
telemetry_tools() {
  local stamp="$OTELCOL_VERSION-$(sha256sum "$here/tools/otelcol-builder.yaml" | cut -c1-12)"
  if ! built otelcol-codectx "$stamp"; then
    log "building the OpenTelemetry Collector $OTELCOL_VERSION (once, ~5 min)"
    local work; work="$(mktemp -d)"
    GOBIN="$work" GOFLAGS=-mod=mod go install "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" >&2
    cp "$here/tools/otelcol-builder.yaml" "$work/builder.yaml"
    (cd "$work" && GOFLAGS=-mod=mod nice ./builder --config builder.yaml >&2)
    cp "$work/dist/otelcol-codectx" "$bin/otelcol-codectx"
    rm -rf "$work"
    mark otelcol-codectx "$stamp"
  fi
}

case "${1:-all}" in
  chart) chart_tools ;;
  cluster) chart_tools; cluster_tools ;;
  telemetry) telemetry_tools ;;
  all) chart_tools; cluster_tools; telemetry_tools ;;
  *) echo "usage: $0 [all|chart|cluster|telemetry]" >&2; exit 2 ;;
esac
echo "$bin"
