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

{{/* Whether the release brings its own runtime (runtime.mode bundled). */}}
{{- define "vk-cri.bundled" -}}
{{- if eq .Values.runtime.mode "bundled" }}true{{ end }}
{{- end }}

{{/* The bridge of node .index ("d" in daemonset mode): network.bridge, or vk + 6 hex of the release + suffix. */}}
{{- define "vk-cri.bridge" -}}
{{- $base := .root.Values.network.bridge | default (printf "vk%s" (sha256sum .root.Release.Name | trunc 6)) }}
{{- printf "%s%s" $base (toString .index) }}
{{- end }}

{{/* The /24 number .index of network.podCIDR (x.y.index.0/24). */}}
{{- define "vk-cri.subnet" -}}
{{- $o := splitList "." (first (splitList "/" .root.Values.network.podCIDR)) }}
{{- printf "%s.%s.%d.0/24" (index $o 0) (index $o 1) (int .index) }}
{{- end }}

{{/* The run dir of a node: <runtime.bundled.runDir>/<8 hex of key>. */}}
{{- define "vk-cri.runDir" -}}
{{- printf "%s/%s" (trimSuffix "/" .root.Values.runtime.bundled.runDir) (sha256sum .key | trunc 8) }}
{{- end }}

{{/* A map as k=v,k=v (sorted), for --kube-reserved and --system-reserved. */}}
{{- define "vk-cri.pairs" -}}
{{- $pairs := list }}
{{- range $k := keys . | sortAlpha }}
{{- $pairs = append $pairs (printf "%s=%s" $k (toString (get $ $k))) }}
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
  maxPods, kubeReserved, systemReserved   the node's capacity settings
  runtimeDir, runDir, bridge, subnet      runtime.mode bundled: the node's runtime (subnet
                                          empty in daemonset mode: picked by host at start)
*/}}
{{- define "vk-cri.podTemplate" -}}
{{- $ := .root }}
{{- $v := $.Values }}
{{- $bundled := include "vk-cri.bundled" $ }}
{{- $socket := $v.cri.socket }}
{{- if $bundled }}
{{- $socket = printf "%s/containerd.sock" .runDir }}
{{- end }}
{{- $socketDir := dir $socket }}
{{- $env := list }}
{{- if eq .component "daemonset" }}
{{- $env = append $env (dict "name" "HOST_NODE_NAME" "valueFrom" (dict "fieldRef" (dict "fieldPath" "spec.nodeName"))) }}
{{- end }}
{{- if contains "$(HOST_IP)" (toString $v.node.ip) }}
{{- $env = append $env (dict "name" "HOST_IP" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.hostIP"))) }}
{{- end }}
{{- if $bundled }}
{{- if ne .component "daemonset" }}
{{- $env = append $env (dict "name" "HOST_NODE_NAME" "valueFrom" (dict "fieldRef" (dict "fieldPath" "spec.nodeName"))) }}
{{- end }}
{{- $subnets := list }}
{{- range $host, $cidr := $v.network.nodeSubnets }}
{{- $subnets = append $subnets (printf "%s=%s" $host $cidr) }}
{{- end }}
{{- $env = concat $env (list
    (dict "name" "VKCRI_NODE" "value" (toString .nodeName))
    (dict "name" "RUN_DIR" "value" .runDir)
    (dict "name" "RUNTIME_DIR" "value" .runtimeDir)
    (dict "name" "ROOT_DIR" "value" .rootDir)
    (dict "name" "POD_LOG_DIR" "value" .podLogDir)
    (dict "name" "CGROUP_ROOT" "value" .cgroupRoot)
    (dict "name" "SHIM_CGROUP" "value" (printf "%s-shims" .cgroupRoot))
    (dict "name" "BRIDGE" "value" .bridge)
    (dict "name" "SUBNET" "value" .subnet)
    (dict "name" "NODE_SUBNETS" "value" (join " " (sortAlpha $subnets)))
    (dict "name" "SANDBOX_IMAGE" "value" $v.runtime.bundled.sandboxImage)
    (dict "name" "INSECURE_REGISTRIES" "value" (join " " $v.runtime.bundled.insecureRegistries))
    (dict "name" "RESTRICT_OOM_SCORE_ADJ" "value" (toString $v.runtime.bundled.restrictOOMScoreAdj))
    (dict "name" "SNAPSHOTTER" "value" $v.runtime.bundled.snapshotter)) }}
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
  {{- if or $v.podAnnotations $bundled }}
  annotations:
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- if $bundled }}
    # A new entrypoint script restarts the agents (their pods keep running).
    checksum/runtime-sh: {{ $.Files.Get "files/runtime.sh" | sha256sum | quote }}
    {{- end }}
  {{- end }}
spec:
  serviceAccountName: {{ include "vk-cri.serviceAccountName" $ }}
  automountServiceAccountToken: true
  # vk-cri serves the kubelet API on the host's address and reaches the runtime and the API
  # server as a host process would.
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  {{- if $bundled }}
  # The bundled runtime's shims must outlive this pod (helm upgrade): in the host's PID
  # namespace, the end of this container does not end them (files/runtime.sh).
  hostPID: true
  {{- end }}
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
  {{- if $bundled }}
  initContainers:
    # The network namespace pins of the bundled runtime must outlive its container: their
    # directory becomes a shared mount on the host (as the kubelet makes its own root dir), which
    # the vk-cri container mounts with Bidirectional propagation.
    - name: share-netns-dir
      image: {{ include "vk-cri.image" $ | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      # In the mount namespace of this container's parent, its runtime's shim: the one where the
      # runtime resolves host paths (PID 1's may not be open to containers).
      command:
        - /bin/sh
        - -c
        - >-
          d={{ .runDir }}-netns;
          exec nsenter -t "$PPID" -m -- /bin/sh -c
          "mkdir -p $d && { grep -q ' $d ' /proc/self/mountinfo || mount --bind $d $d; } && mount --make-rshared $d"
      securityContext:
        privileged: true
  {{- end }}
  containers:
    - name: vk-cri
      image: {{ include "vk-cri.image" $ | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      {{- if $bundled }}
      command: ["/bin/sh", "/etc/vk-cri/runtime/runtime.sh"]
      {{- end }}
      args:
        - --nodename={{ .nodeName }}
        - --cri-endpoint=unix://{{ $socket }}
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
        - --max-pods={{ .maxPods }}
        {{- with .kubeReserved }}
        - --kube-reserved={{ include "vk-cri.pairs" . }}
        {{- end }}
        {{- with .systemReserved }}
        - --system-reserved={{ include "vk-cri.pairs" . }}
        {{- end }}
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
        {{- if $bundled }}
        - name: runtime-script
          mountPath: /etc/vk-cri/runtime
          readOnly: true
        - name: runtime-run-dir
          mountPath: {{ .runDir }}
        - name: runtime-dir
          mountPath: {{ .runtimeDir }}
        # containerd's default netns directory, a mount of its own (see the init container).
        - name: runtime-netns
          mountPath: /var/run/netns
          mountPropagation: Bidirectional
        {{- else }}
        - name: cri-socket-dir
          mountPath: {{ $socketDir }}
        {{- end }}
        {{- range $i, $d := .hostDirs }}
        - name: host-dir-{{ $i }}
          mountPath: {{ $d }}
          {{- if and (not $bundled) (ne $v.mountPropagation "None") }}
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
        {{- if or $bundled $v.stats.enabled }}
        # The bundled runtime makes the pods' cgroups (under the host's tree, as the host's
        # runtime would); cAdvisor only reads them.
        - name: cgroup
          mountPath: /sys/fs/cgroup
          readOnly: {{ not $bundled }}
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
    {{- if $bundled }}
    - name: runtime-script
      configMap:
        name: {{ include "vk-cri.fullname" $ }}-runtime
        defaultMode: 0555
    # Sockets (the shims' too) and state on the host: the next containerd finds the running
    # shims there after a restart of this pod.
    - name: runtime-run-dir
      hostPath:
        path: {{ .runDir }}
        type: DirectoryOrCreate
    - name: runtime-dir
      hostPath:
        path: {{ .runtimeDir }}
        type: DirectoryOrCreate
    - name: runtime-netns
      hostPath:
        path: {{ .runDir }}-netns
        type: DirectoryOrCreate
    {{- end }}
    {{- if not $bundled }}
    # The runtime's socket directory: a socket file mounted alone would go stale when the
    # runtime restarts and re-creates it.
    - name: cri-socket-dir
      hostPath:
        path: {{ $socketDir }}
        type: Directory
    {{- end }}
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
    {{- if or $bundled $v.stats.enabled }}
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
