{{/* The release's base name (63 characters at most with a component suffix). */}}
{{- define "codectx.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Name of one component's objects: (dict "root" $ "name" "authz"). */}}
{{- define "codectx.component" -}}
{{- printf "%s-%s" (include "codectx.fullname" .root) .name -}}
{{- end -}}

{{- define "codectx.selector" -}}
app.kubernetes.io/name: codectx
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "codectx.labels" -}}
{{ include "codectx.selector" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* CODECTX_<SERVICE>__ prefix of a component's settings. */}}
{{- define "codectx.envPrefix" -}}
{{- printf "CODECTX_%s__" (.name | upper | replace "-" "_") -}}
{{- end -}}

{{/* gRPC address of a component inside the cluster. */}}
{{- define "codectx.endpoint" -}}
{{- $c := index .root.Values.components .name -}}
{{- printf "%s://%s:%v" (ternary "https" "http" .root.Values.tls.enabled) (include "codectx.component" .) $c.port -}}
{{- end -}}

{{- define "codectx.keysSecret" -}}
{{- if .Values.keys.existingSecret -}}
{{- .Values.keys.existingSecret -}}
{{- else -}}
{{- printf "%s-keys" (include "codectx.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Which components call which (DESIGN.md section 2): the NetworkPolicy edges. */}}
{{- define "codectx.callers" -}}
authz: [gateway{{ if .Values.indexer.enabled }}, indexer{{ end }}]
lexical-ranker: [context-assembler]
embedding: [context-assembler]
vector-gateway: [context-assembler]
graph-hydrator: [lexical-ranker, context-assembler]
context-assembler: [gateway]
gateway: []
{{- end -}}

{{/* Peers each component dials: settings key -> component. */}}
{{- define "codectx.peers" -}}
lexical-ranker: {graph_hydrator: graph-hydrator}
context-assembler: {lexical_ranker: lexical-ranker, embedding: embedding, vector_gateway: vector-gateway, graph_hydrator: graph-hydrator}
gateway: {authz: authz, context_assembler: context-assembler}
{{- end -}}

{{/* Components that keep a store on a volume (one replica each). */}}
{{- define "codectx.stateful" -}}
{{- $v := .Values -}}
authz: true
graph-hydrator: {{ eq $v.graph.backend "sqlite" }}
vector-gateway: {{ eq $v.vectors.backend "embedded" }}
{{- end -}}

{{/* The indexer Job spec for one repository: (dict "root" $ "repo" . "ctx" ...). */}}
{{- define "codectx.indexerJobSpec" -}}
{{- $root := .root -}}
{{- $repo := .repo -}}
{{- $indexer := $root.Values.indexer -}}
backoffLimit: {{ $indexer.backoffLimit }}
activeDeadlineSeconds: {{ $indexer.activeDeadlineSeconds }}
ttlSecondsAfterFinished: 86400
template:
  metadata:
    labels:
      {{- include "codectx.labels" .ctx | nindent 6 }}
  spec:
    restartPolicy: Never
    serviceAccountName: {{ include "codectx.component" .ctx }}
    automountServiceAccountToken: false
    securityContext:
      runAsNonRoot: true
      runAsUser: 65532
      runAsGroup: 65532
      fsGroup: 65532
      seccompProfile:
        type: RuntimeDefault
    initContainers:
      # The checkout: any image with git (the operator's choice; codectx images have no shell).
      - name: checkout
        image: {{ $indexer.gitImage | quote }}
        args: ["clone", "--depth", "1", "--branch", {{ $repo.ref | default "main" | quote }}, {{ required "indexer.repositories[].git is required" $repo.git | quote }}, "/src/checkout"]
        env:
          - name: HOME
            value: /tmp
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: [ALL]
        volumeMounts:
          - name: src
            mountPath: /src
          - name: tmp
            mountPath: /tmp
    containers:
      - name: index
        image: "{{ $root.Values.image.repository }}/codectx:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
        imagePullPolicy: {{ $root.Values.image.pullPolicy }}
        args:
          - index
          - /src/checkout
          - --name={{ $repo.name }}
          - --org={{ required "indexer.repositories[].org is required: the organisation that supplied the source" $repo.org }}
          - --authz={{ include "codectx.endpoint" (dict "root" $root "name" "authz") }}
          {{- if eq $root.Values.graph.backend "hugegraph" }}
          - --hugegraph={{ $root.Values.graph.hugegraph.url }}
          - --hugegraph-user={{ $root.Values.graph.hugegraph.user }}
          {{- else }}
          - --neo4j={{ $root.Values.graph.neo4j.uri }}
          - --neo4j-user={{ $root.Values.graph.neo4j.user }}
          {{- end }}
          - --data=/var/lib/codectx
          - --quiet
          {{- if $root.Values.tls.enabled }}
          - --authz-ca-file=/etc/codectx/tls/ca.crt
          {{- if $root.Values.tls.mutual }}
          - --authz-cert-file=/etc/codectx/tls/tls.crt
          - --authz-key-file=/etc/codectx/tls/tls.key
          {{- end }}
          {{- end }}
        env:
          - name: CODECTX_API_KEY
            valueFrom:
              secretKeyRef:
                name: {{ $indexer.apiKeySecret.name }}
                key: {{ $indexer.apiKeySecret.key }}
          {{- if eq $root.Values.graph.backend "hugegraph" }}
          - name: CODECTX_HUGEGRAPH_PASSWORD
            valueFrom:
              secretKeyRef:
                name: {{ $root.Values.graph.hugegraph.existingSecret }}
                key: {{ $root.Values.graph.hugegraph.passwordKey }}
          {{- else }}
          - name: CODECTX_NEO4J_PASSWORD
            valueFrom:
              secretKeyRef:
                name: {{ $root.Values.graph.neo4j.existingSecret }}
                key: {{ $root.Values.graph.neo4j.passwordKey }}
          {{- end }}
        resources:
          {{- toYaml $indexer.resources | nindent 10 }}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: [ALL]
        volumeMounts:
          - name: src
            mountPath: /src
            readOnly: true
          - name: cache
            mountPath: /var/lib/codectx
          - name: tmp
            mountPath: /tmp
          {{- if $root.Values.tls.enabled }}
          - name: tls
            mountPath: /etc/codectx/tls
            readOnly: true
          {{- end }}
    volumes:
      - name: src
        emptyDir: {}
      - name: tmp
        emptyDir: {}
      {{- if $root.Values.tls.enabled }}
      - name: tls
        secret:
          secretName: {{ include "codectx.component" .ctx }}-tls
      {{- end }}
      - name: cache
        {{- if $indexer.cacheClaim }}
        # The index cache: unchanged files are not parsed again.
        persistentVolumeClaim:
          claimName: {{ $indexer.cacheClaim }}
        {{- else }}
        emptyDir: {}
        {{- end }}
{{- end -}}

{{/* Where components send OTLP: the configured endpoint, else the chart's collector. */}}
{{- define "codectx.otlpEndpoint" -}}
{{- if .Values.telemetry.otlpEndpoint -}}
{{- .Values.telemetry.otlpEndpoint -}}
{{- else if .Values.telemetry.collector.enabled -}}
{{- printf "http://%s:4317" (include "codectx.component" (dict "root" . "name" "otel-collector")) -}}
{{- end -}}
{{- end -}}

{{/* The OpenTelemetry Collector's configuration (charts/codectx/templates/telemetry.yaml). */}}
{{- define "codectx.collectorConfig" -}}
{{- $collector := .Values.telemetry.collector -}}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 0.0.0.0:4317
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 25
  batch: {}
exporters:
  prometheus:
    endpoint: 0.0.0.0:{{ $collector.prometheusPort }}
  debug:
    verbosity: basic
  {{- with $collector.tracesEndpoint }}
  otlp/traces:
    endpoint: {{ . | quote }}
    tls:
      insecure: {{ $collector.tracesInsecure }}
  {{- end }}
extensions:
  health_check:
    endpoint: 0.0.0.0:13133
service:
  extensions: [health_check]
  pipelines:
    metrics:
      receivers: [otlp]
      processors: [memory_limiter, batch]
      exporters: [prometheus]
    traces:
      receivers: [otlp]
      processors: [memory_limiter, batch]
      exporters: [{{ if $collector.tracesEndpoint }}otlp/traces{{ else }}debug{{ end }}]
{{- end -}}
