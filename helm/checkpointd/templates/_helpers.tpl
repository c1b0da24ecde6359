{{/* Names, labels and shared pieces of the checkpointd chart. */}}

{{- define "checkpointd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "checkpointd.fullname" -}}
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

{{/* Labels every object carries besides its selector labels. */}}
{{- define "checkpointd.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "checkpointd.labels" -}}
{{ include "checkpointd.commonLabels" . }}
app.kubernetes.io/name: {{ include "checkpointd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Selector labels of the server pods. */}}
{{- define "checkpointd.serverSelectorLabels" -}}
app.kubernetes.io/name: {{ include "checkpointd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/* Selector labels of the worker pods. */}}
{{- define "checkpointd.workerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "checkpointd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: worker
{{- end }}

{{- define "checkpointd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "checkpointd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "checkpointd.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding the database and Redis URLs: the user's, or the chart's own. */}}
{{- define "checkpointd.secretName" -}}
{{- if .Values.existingSecret.name }}
{{- .Values.existingSecret.name }}
{{- else }}
{{- include "checkpointd.fullname" . }}
{{- end }}
{{- end }}

{{/* Secret-backed environment: CHECKPOINTD_DATABASE and, when there is one, CHECKPOINTD_REDIS. */}}
{{- define "checkpointd.secretEnv" -}}
- name: CHECKPOINTD_DATABASE
  valueFrom:
    secretKeyRef:
      name: {{ include "checkpointd.secretName" . }}
      key: {{ if .Values.existingSecret.name }}{{ required "existingSecret.databaseKey is required" .Values.existingSecret.databaseKey }}{{ else }}database-url{{ end }}
{{- if .Values.existingSecret.name }}
{{- if .Values.existingSecret.redisKey }}
- name: CHECKPOINTD_REDIS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.existingSecret.name }}
      key: {{ .Values.existingSecret.redisKey }}
      optional: true
{{- end }}
{{- else if .Values.redis.url }}
- name: CHECKPOINTD_REDIS
  valueFrom:
    secretKeyRef:
      name: {{ include "checkpointd.fullname" . }}
      key: redis-url
{{- end }}
{{- end }}

{{/* Shared by both Deployments: the server must outlive its preStop delay plus its drain. */}}
{{- define "checkpointd.checkGracePeriods" -}}
{{- $server := .Values.server }}
{{- if le (int $server.terminationGracePeriodSeconds) (add $server.drainTimeoutSeconds $server.preStopSleepSeconds | int) }}
{{- fail (printf "server.terminationGracePeriodSeconds (%v) must exceed server.preStopSleepSeconds + server.drainTimeoutSeconds (%v)" $server.terminationGracePeriodSeconds (add $server.drainTimeoutSeconds $server.preStopSleepSeconds)) }}
{{- end }}
{{- if and .Values.worker.enabled (le (int .Values.worker.terminationGracePeriodSeconds) (int .Values.worker.drainDeadlineSeconds)) }}
{{- fail (printf "worker.terminationGracePeriodSeconds (%v) must exceed worker.drainDeadlineSeconds (%v)" .Values.worker.terminationGracePeriodSeconds .Values.worker.drainDeadlineSeconds) }}
{{- end }}
{{- end }}
