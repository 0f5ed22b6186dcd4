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
{{- printf "http://%s:%v" (include "codectx.component" .) $c.port -}}
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
authz: [gateway]
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
