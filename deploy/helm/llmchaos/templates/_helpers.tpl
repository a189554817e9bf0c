{{/* The chart's name, or nameOverride. */}}
{{- define "llmchaos.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* RELEASE-NAME, or RELEASE when the release's name already holds the chart's; fullnameOverride wins. */}}
{{- define "llmchaos.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "llmchaos.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The selector labels: stable across upgrades. */}}
{{- define "llmchaos.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llmchaos.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels of every object but the test hook: the common ones and the component (the mode). */}}
{{- define "llmchaos.labels" -}}
{{ include "llmchaos.commonLabels" . }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end }}

{{- define "llmchaos.commonLabels" -}}
helm.sh/chart: {{ include "llmchaos.chart" . }}
{{ include "llmchaos.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: llmchaos
{{- end }}

{{- define "llmchaos.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding the admin token, and its key. */}}
{{- define "llmchaos.secretName" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.existingSecret }}
{{- else }}
{{- printf "%s-admin" (include "llmchaos.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "llmchaos.secretKey" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.existingSecretKey }}
{{- else -}}
token
{{- end }}
{{- end }}

{{/* The ConfigMap mounted at /cases, or "" when the image's own catalog stays there. */}}
{{- define "llmchaos.casesConfigMap" -}}
{{- if .Values.cases.existingConfigMap }}
{{- .Values.cases.existingConfigMap }}
{{- else if .Values.cases.files }}
{{- printf "%s-cases" (include "llmchaos.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "llmchaos.readinessPath" -}}
{{- default "/__llmchaos/ready" .Values.probes.readinessPath }}
{{- end }}

{{- define "llmchaos.livenessPath" -}}
{{- if .Values.probes.livenessPath }}
{{- .Values.probes.livenessPath }}
{{- else if eq .Values.mode "gateway" -}}
/health
{{- else -}}
/__llmchaos/health
{{- end }}
{{- end }}

{{/* The container's arguments (its entrypoint is /llmchaos), one per line as a YAML list. */}}
{{- define "llmchaos.args" -}}
{{- $port := toString .Values.containerPort }}
{{- $args := list }}
{{- if eq .Values.mode "serve" }}
{{- $args = list "serve" "--host" "0.0.0.0" "--port" $port }}
{{- with .Values.serve.script }}
{{- $args = concat $args (list "--script" (printf "/cases/%s" .)) }}
{{- end }}
{{- else if eq .Values.mode "proxy" }}
{{- if not .Values.proxy.upstream }}
{{- fail "mode proxy needs proxy.upstream (the real provider's base URL)" }}
{{- end }}
{{- $args = list "proxy" "--host" "0.0.0.0" "--port" $port "--upstream" .Values.proxy.upstream }}
{{- with .Values.proxy.script }}
{{- $args = concat $args (list "--script" (printf "/cases/%s" .)) }}
{{- end }}
{{- else if eq .Values.mode "gateway" }}
{{- if not .Values.gateway.config }}
{{- fail "mode gateway needs gateway.config (the gateway's TOML file under /cases)" }}
{{- end }}
{{- $args = list "gateway" "--config" (printf "/cases/%s" .Values.gateway.config) "--host" "0.0.0.0" "--port" $port }}
{{- if .Values.gateway.allowNonLoopback }}
{{- $args = append $args "--allow-non-loopback" }}
{{- end }}
{{- end }}
{{- if ne .Values.mode "gateway" }}
{{- with .Values.publicUrl }}
{{- $args = concat $args (list "--public-url" .) }}
{{- end }}
{{- if and (eq .Values.mode "serve") (gt (int .Values.maxSessions) 0) }}
{{- $args = concat $args (list "--max-sessions" (toString .Values.maxSessions)) }}
{{- end }}
{{- if gt (float64 .Values.timeScale) 0.0 }}
{{- $args = concat $args (list "--time-scale" (toString .Values.timeScale)) }}
{{- end }}
{{- end }}
{{- $args = concat $args .Values.extraArgs }}
{{- toYaml $args }}
{{- end }}
