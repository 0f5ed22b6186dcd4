#!/usr/bin/env bash
# Inside deploy/k8s/cluster.sh run: pods stored by a real kube-apiserver, their status
# written through the status subresource as a kubelet would, then the list kubectl
# get pods -o json prints.
set -euo pipefail
server=$(grep -m1 'server:' "$KUBECONFIG" | awk '{print $2}')
token=$(cat "$CODECTX_TEST_KUBE_TOKEN_FILE")
k() { curl -sk -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
kp() { curl -sk -H "Authorization: Bearer $token" -H 'Content-Type: application/merge-patch+json' "$@"; }
k -X POST "$server/api/v1/namespaces" -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}' >/dev/null
k -X POST "$server/api/v1/namespaces/shop/serviceaccounts" -d '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}' >/dev/null
now=2026-12-01T20:30:00Z
for i in 0 1 2 3 4 5 6 7; do
  name="checkout-api-7d9f8b6c5d-$(printf '%05x' $((i*7919+4099)))"
  [ $i -ge 6 ] && name="payments-worker-5b7c9d8f4-$(printf '%05x' $((i*104729)))"
  app=checkout-api; [ $i -ge 6 ] && app=payments-worker
  k -X POST "$server/api/v1/namespaces/shop/pods" -o /dev/null -d "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$name\",\"labels\":{\"app\":\"$app\",\"pod-template-hash\":\"7d9f8b6c5d\"},\"annotations\":{\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\"}},\"spec\":{\"nodeName\":\"node-$((i%3))\",\"containers\":[{\"name\":\"$app\",\"image\":\"registry.example.com/shop/$app:1.14.$((i%2))\",\"ports\":[{\"containerPort\":8080,\"name\":\"http\"},{\"containerPort\":9090,\"name\":\"metrics\"}],\"env\":[{\"name\":\"DATABASE_URL\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"shop-db\",\"key\":\"url\"}}},{\"name\":\"LOG_LEVEL\",\"value\":\"info\"}],\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"256Mi\"},\"limits\":{\"memory\":\"512Mi\"}},\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},\"periodSeconds\":5},\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},\"periodSeconds\":10}}]}}" >/dev/null
  if [ $i -eq 7 ]; then
    state="{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off 5m0s restarting failed container=payments-worker pod=${name}_shop(7a1c2e44-93f1-4d2b-9f0e-3b8d5c6a1f20)\"}}"
    last="{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\",\"startedAt\":\"$now\",\"finishedAt\":\"$now\",\"message\":\"panic: dial tcp 10.0.3.7:5432: connect: connection refused\"}}"
    ready=false; restarts=14; phase=Running
    conditions="[{\"type\":\"Ready\",\"status\":\"False\",\"lastTransitionTime\":\"$now\",\"reason\":\"ContainersNotReady\",\"message\":\"containers with unready status: [payments-worker]\"},{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]"
  elif [ $i -eq 4 ]; then
    state="{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\",\"startedAt\":\"$now\",\"finishedAt\":\"$now\"}}"
    last="{}"; ready=false; restarts=3; phase=Running
    conditions="[{\"type\":\"Ready\",\"status\":\"False\",\"lastTransitionTime\":\"$now\",\"reason\":\"ContainersNotReady\",\"message\":\"containers with unready status: [checkout-api]\"},{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]"
  else
    state="{\"running\":{\"startedAt\":\"$now\"}}"; last="{}"; ready=true; restarts=0; phase=Running
    conditions="[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"},{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]"
  fi
  kp -o /dev/null -X PATCH "$server/api/v1/namespaces/shop/pods/$name/status" -d "{\"status\":{\"phase\":\"$phase\",\"hostIP\":\"10.0.1.$((i%3+10))\",\"podIP\":\"10.244.$((i%3)).$((i+20))\",\"startTime\":\"$now\",\"conditions\":$conditions,\"containerStatuses\":[{\"name\":\"$app\",\"image\":\"registry.example.com/shop/$app:1.14.$((i%2))\",\"imageID\":\"registry.example.com/shop/$app@sha256:$(printf '%064x' $((i+1)))\",\"ready\":$ready,\"started\":$ready,\"restartCount\":$restarts,\"state\":$state,\"lastState\":$last}]}}" >/dev/null
done
k "$server/api/v1/namespaces/shop/pods" | python3 -m json.tool --indent 4 > "$OUT"
