{{/* Chart name, truncated to the 63 characters of a label value. */}}
{{- define "vk-cri.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "vk-cri.fullname" -}}
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

{{- define "vk-cri.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vk-cri.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "vk-cri.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "vk-cri.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "vk-cri.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vk-cri.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "vk-cri.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (toString .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The labels of every node of the release: the chart's selector labels, then node.labels.
*/}}
{{- define "vk-cri.nodeLabels" -}}
{{- $labels := merge (dict) .Values.node.labels (include "vk-cri.selectorLabels" . | fromYaml) }}
{{- $pairs := list }}
{{- range $k := keys $labels | sortAlpha }}
{{- $pairs = append $pairs (printf "%s=%s" $k (toString (get $labels $k))) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* The extra node number .Index's name, checked as a Node name. */}}
{{- define "vk-cri.extraNodeName" -}}
{{- $name := tpl .root.Values.extraNodes.nameTemplate (dict "Release" .root.Release "Values" .root.Values "Template" .root.Template "Index" .index) }}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" $name) }}
{{- fail (printf "extraNodes.nameTemplate gives %q for node %d: a node name must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit" $name .index) }}
{{- end }}
{{- if gt (len $name) 253 }}
{{- fail (printf "extraNodes.nameTemplate gives a name of %d characters for node %d: at most 253" (len $name) .index) }}
{{- end }}
{{- $name }}
{{- end }}

{{/*
The vk-cri pod template of one node. Takes a dict:
  root          the chart's top-level context
  component     "daemonset" or "extra-node"
  nodeName      the --nodename value
  extraLabels   labels that select this workload's pods (besides the chart's)
  kubeletPort, healthzPort, rootDir, podLogDir, cgroupRoot
  hostDirs      host directories to mount at the same path (root dir, logs)
*/}}
{{- define "vk-cri.podTemplate" -}}
{{- $ := .root }}
{{- $v := $.Values }}
{{- $socketDir := dir $v.cri.socket }}
{{- $env := list }}
{{- if eq .component "daemonset" }}
{{- $env = append $env (dict "name" "HOST_NODE_NAME" "valueFrom" (dict "fieldRef" (dict "fieldPath" "spec.nodeName"))) }}
{{- end }}
{{- if contains "$(HOST_IP)" (toString $v.node.ip) }}
{{- $env = append $env (dict "name" "HOST_IP" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.hostIP"))) }}
{{- end }}
{{- with $v.apiServer.host }}
{{- /* In-cluster config reads the API server's address from these. */}}
{{- $env = append $env (dict "name" "KUBERNETES_SERVICE_HOST" "value" (toString .)) }}
{{- $env = append $env (dict "name" "KUBERNETES_SERVICE_PORT" "value" (toString $v.apiServer.port)) }}
{{- end -}}
metadata:
  labels:
    {{- include "vk-cri.selectorLabels" $ | nindent 4 }}
    {{- with .extraLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "vk-cri.serviceAccountName" $ }}
  automountServiceAccountToken: true
  # vk-cri serves the kubelet API on the host's address and reaches the runtime and the API
  # server as a host process would.
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  {{- with $v.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: vk-cri
      image: {{ include "vk-cri.image" $ | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args:
        - --nodename={{ .nodeName }}
        - --cri-endpoint=unix://{{ $v.cri.socket }}
        - --runtime-request-timeout={{ $v.cri.runtimeRequestTimeout }}
        {{- with $v.node.ip }}
        - --node-ip={{ . }}
        {{- end }}
        - --port={{ .kubeletPort }}
        - --healthz-bind-address=127.0.0.1
        - --healthz-port={{ .healthzPort }}
        - --root-dir={{ .rootDir }}
        - --pod-log-dir={{ .podLogDir }}
        - --cgroup-root={{ .cgroupRoot }}
        - --max-pods={{ $v.node.maxPods }}
        {{- with $v.node.clusterDNS }}
        - --cluster-dns={{ join "," . }}
        {{- end }}
        {{- with $v.node.clusterDomain }}
        - --cluster-domain={{ . }}
        {{- end }}
        - --enable-stats={{ $v.stats.enabled }}
        {{- with $v.stats.evictionHard }}
        - --eviction-hard={{ . }}
        {{- end }}
        - --node-labels={{ include "vk-cri.nodeLabels" $ }}
        {{- range $v.node.taints }}
        - --register-with-taints={{ .key }}{{ with .value }}={{ . }}{{ end }}:{{ .effect }}
        {{- end }}
        {{- if and $v.node.removeOnUninstall $v.rbac.create }}
        - --node-owner-clusterrole={{ include "vk-cri.fullname" $ }}
        {{- end }}
        {{- if eq $v.tls.mode "csr" }}
        - --rotate-server-certificates
        - --cert-dir={{ .rootDir }}/pki
        {{- else if eq $v.tls.mode "files" }}
        - --tls-cert-file=/etc/vk-cri/tls/tls.crt
        - --tls-private-key-file=/etc/vk-cri/tls/tls.key
        {{- else if eq $v.tls.mode "selfSigned" }}
        - --self-signed-serving-cert
        {{- end }}
        {{- if and (ne $v.tls.mode "none") $v.tls.clientCA.configMap }}
        - --client-ca-file=/etc/vk-cri/client-ca/ca.crt
        {{- end }}
        - --log-level={{ $v.logLevel }}
        - --log-format={{ $v.logFormat }}
      {{- with $env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: kubelet
          containerPort: {{ .kubeletPort }}
          protocol: TCP
        - name: healthz
          containerPort: {{ .healthzPort }}
          protocol: TCP
      {{- if $v.probes.enabled }}
      livenessProbe:
        httpGet:
          host: 127.0.0.1
          path: /healthz
          port: {{ .healthzPort }}
        {{- toYaml $v.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          host: 127.0.0.1
          path: /healthz
          port: {{ .healthzPort }}
        {{- toYaml $v.probes.readiness | nindent 8 }}
      {{- end }}
      resources:
        {{- toYaml $v.resources | nindent 8 }}
      securityContext:
        {{- toYaml $v.securityContext | nindent 8 }}
      volumeMounts:
        - name: cri-socket-dir
          mountPath: {{ $socketDir }}
        {{- range $i, $d := .hostDirs }}
        - name: host-dir-{{ $i }}
          mountPath: {{ $d }}
          {{- if ne $v.mountPropagation "None" }}
          mountPropagation: {{ $v.mountPropagation }}
          {{- end }}
        {{- end }}
        {{- if eq $v.tls.mode "files" }}
        - name: serving-cert
          mountPath: /etc/vk-cri/tls
          readOnly: true
        {{- end }}
        {{- if and (ne $v.tls.mode "none") $v.tls.clientCA.configMap }}
        - name: client-ca
          mountPath: /etc/vk-cri/client-ca
          readOnly: true
        {{- end }}
        {{- if $v.stats.enabled }}
        - name: cgroup
          mountPath: /sys/fs/cgroup
          readOnly: true
        {{- end }}
        {{- if $v.hostInfo }}
        - name: machine-id
          mountPath: /etc/machine-id
          readOnly: true
        - name: os-release
          mountPath: /etc/os-release
          readOnly: true
        {{- end }}
  volumes:
    # The runtime's socket directory: a socket file mounted alone would go stale when the
    # runtime restarts and re-creates it.
    - name: cri-socket-dir
      hostPath:
        path: {{ $socketDir }}
        type: Directory
    # Paths the runtime reads (pod logs, volumes) must be the same inside and outside.
    {{- range $i, $d := .hostDirs }}
    - name: host-dir-{{ $i }}
      hostPath:
        path: {{ $d }}
        type: DirectoryOrCreate
    {{- end }}
    {{- if eq $v.tls.mode "files" }}
    - name: serving-cert
      secret:
        secretName: {{ required "tls.secretName is required with tls.mode files" $v.tls.secretName }}
    {{- end }}
    {{- if and (ne $v.tls.mode "none") $v.tls.clientCA.configMap }}
    - name: client-ca
      configMap:
        name: {{ $v.tls.clientCA.configMap }}
        items:
          - key: {{ $v.tls.clientCA.key }}
            path: ca.crt
    {{- end }}
    {{- if $v.stats.enabled }}
    # cAdvisor reads the host's cgroups: the node's root cgroup and the pods' under the cgroup root.
    - name: cgroup
      hostPath:
        path: /sys/fs/cgroup
        type: Directory
    {{- end }}
    {{- if $v.hostInfo }}
    - name: machine-id
      hostPath:
        path: /etc/machine-id
        type: File
    - name: os-release
      hostPath:
        path: /etc/os-release
        type: File
    {{- end }}
{{- end }}
