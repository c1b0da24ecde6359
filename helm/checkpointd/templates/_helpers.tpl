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

{{/* Secret-backed environment: CHECKPOINTD_DATABASE and, when there are, CHECKPOINTD_REDIS and
CHECKPOINTD_POSTGRES_LISTEN_URL. */}}
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
{{- if .Values.existingSecret.name }}
{{- if .Values.existingSecret.listenUrlKey }}
- name: CHECKPOINTD_POSTGRES_LISTEN_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.existingSecret.name }}
      key: {{ .Values.existingSecret.listenUrlKey }}
      optional: true
{{- end }}
{{- else if .Values.database.listenUrl }}
- name: CHECKPOINTD_POSTGRES_LISTEN_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "checkpointd.fullname" . }}
      key: listen-url
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

{{/* The server listens on 0.0.0.0: it needs an auth mode, or an explicit opt-out. */}}
{{- define "checkpointd.checkSecurity" -}}
{{- $auth := .Values.auth }}
{{- $modes := list "none" "api-key" "jwt" "api-key,jwt" "jwt,api-key" }}
{{- if not (has $auth.mode $modes) }}
{{- fail (printf "auth.mode %q is not one of none, api-key, jwt, api-key,jwt" $auth.mode) }}
{{- end }}
{{- if and (eq $auth.mode "none") (not $auth.allowUnauthenticated) }}
{{- fail "auth.mode none serves every pod of the cluster unauthenticated: set auth.allowUnauthenticated=true to mean it, or pick api-key or jwt" }}
{{- end }}
{{- if contains "jwt" $auth.mode }}
{{- $jwt := $auth.jwt }}
{{- $sources := 0 }}
{{- if $jwt.jwksUrl }}{{ $sources = add1 $sources }}{{ end }}
{{- if $jwt.jwks.configMap }}{{ $sources = add1 $sources }}{{ end }}
{{- if $jwt.jwks.secret }}{{ $sources = add1 $sources }}{{ end }}
{{- if $jwt.sharedSecret.name }}{{ $sources = add1 $sources }}{{ end }}
{{- if ne (int $sources) 1 }}
{{- fail "auth.mode jwt needs exactly one key source: auth.jwt.jwksUrl, auth.jwt.jwks.configMap, auth.jwt.jwks.secret or auth.jwt.sharedSecret.name" }}
{{- end }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- fail "tls.enabled needs tls.secretName: a Secret with tls.crt and tls.key" }}
{{- end }}
{{- if and .Values.worker.enabled (ne $auth.mode "none") (not .Values.worker.tokenSecret.name) }}
{{- fail (printf "worker.tokenSecret.name is required with auth.mode %s: a Secret holding the worker's API key or token" $auth.mode) }}
{{- end }}
{{- end }}

{{/* Where the server finds the files it is configured with; the ConfigMap names these paths. */}}
{{- define "checkpointd.paths" -}}
tls: /etc/checkpointd/tls
clientCA: /etc/checkpointd/client-ca
jwks: /etc/checkpointd/jwks
jwtSecret: /etc/checkpointd/jwt-secret
postgresCA: /etc/checkpointd/postgres-ca
redisCA: /etc/checkpointd/redis-ca
serverCA: /etc/checkpointd/server-ca
clientCert: /etc/checkpointd/client-tls
{{- end }}

{{/* The server's Secret and ConfigMap files, as volumes. Whole-volume mounts (no subPath), so a
changed Secret or ConfigMap reaches the running pod: certificates and keys rotate without a
restart. */}}
{{- define "checkpointd.serverVolumes" -}}
{{- $jwt := .Values.auth.jwt }}
{{- if .Values.tls.enabled }}
- name: tls
  secret:
    secretName: {{ .Values.tls.secretName }}
    defaultMode: 0440
    items:
      - {key: tls.crt, path: tls.crt}
      - {key: tls.key, path: tls.key}
{{- if .Values.tls.clientCA.enabled }}
- name: client-ca
  secret:
    secretName: {{ default .Values.tls.secretName .Values.tls.clientCA.secretName }}
    defaultMode: 0440
    items:
      - {key: {{ .Values.tls.clientCA.key }}, path: ca.crt}
{{- end }}
{{- end }}
{{- if contains "jwt" .Values.auth.mode }}
{{- if $jwt.jwks.configMap }}
- name: jwks
  configMap:
    name: {{ $jwt.jwks.configMap }}
    items:
      - {key: {{ $jwt.jwks.key }}, path: jwks.json}
{{- else if $jwt.jwks.secret }}
- name: jwks
  secret:
    secretName: {{ $jwt.jwks.secret }}
    defaultMode: 0440
    items:
      - {key: {{ $jwt.jwks.key }}, path: jwks.json}
{{- end }}
{{- if $jwt.sharedSecret.name }}
- name: jwt-secret
  secret:
    secretName: {{ $jwt.sharedSecret.name }}
    defaultMode: 0440
    items:
      - {key: {{ $jwt.sharedSecret.key }}, path: secret}
{{- end }}
{{- end }}
{{- if .Values.database.caSecret.name }}
- name: postgres-ca
  secret:
    secretName: {{ .Values.database.caSecret.name }}
    defaultMode: 0440
    items:
      - {key: {{ .Values.database.caSecret.key }}, path: ca.crt}
{{- end }}
{{- if .Values.redis.caSecret.name }}
- name: redis-ca
  secret:
    secretName: {{ .Values.redis.caSecret.name }}
    defaultMode: 0440
    items:
      - {key: {{ .Values.redis.caSecret.key }}, path: ca.crt}
{{- end }}
{{- end }}

{{/* Mounts of the volumes above, read-only, at the paths of "checkpointd.paths". */}}
{{- define "checkpointd.serverMounts" -}}
{{- $paths := include "checkpointd.paths" . | fromYaml }}
{{- $jwt := .Values.auth.jwt }}
{{- if .Values.tls.enabled }}
- {name: tls, mountPath: {{ $paths.tls }}, readOnly: true}
{{- if .Values.tls.clientCA.enabled }}
- {name: client-ca, mountPath: {{ $paths.clientCA }}, readOnly: true}
{{- end }}
{{- end }}
{{- if contains "jwt" .Values.auth.mode }}
{{- if or $jwt.jwks.configMap $jwt.jwks.secret }}
- {name: jwks, mountPath: {{ $paths.jwks }}, readOnly: true}
{{- end }}
{{- if $jwt.sharedSecret.name }}
- {name: jwt-secret, mountPath: {{ $paths.jwtSecret }}, readOnly: true}
{{- end }}
{{- end }}
{{- if .Values.database.caSecret.name }}
- {name: postgres-ca, mountPath: {{ $paths.postgresCA }}, readOnly: true}
{{- end }}
{{- if .Values.redis.caSecret.name }}
- {name: redis-ca, mountPath: {{ $paths.redisCA }}, readOnly: true}
{{- end }}
{{- end }}

{{/* The probes: gRPC health while the port is plain; with TLS on, the admin port's /healthz,
since the kubelet's gRPC probes cannot speak TLS. Both answer from a ping of the database. */}}
{{- define "checkpointd.probeAction" -}}
{{- if .Values.tls.enabled }}
httpGet:
  path: /healthz
  port: admin
{{- else }}
grpc:
  port: {{ .Values.server.grpcPort }}
  service: {{ .Values.server.probes.service | quote }}
{{- end }}
{{- end }}
