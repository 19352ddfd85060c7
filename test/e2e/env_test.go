//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// podLogs reads a container's log through the API server (and so vk-cri's kubelet API).
func podLogs(t *testing.T, ns, pod, container string) string {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		rc, err := s.kube.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{Container: container}).Stream(ctx)
		if err != nil {
			return false, nil
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return false, nil
		}
		out = string(b)
		return true, nil
	})
	if err != nil {
		t.Fatalf("logs of %s/%s %s: %v", ns, pod, container, err)
	}
	return out
}

// envOf parses `env` output (NAME=value per line; values without newlines).
func envOf(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

func isSucceeded(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded }

// waitingReason is the waiting reason of the named container, or "".
func waitingReason(p *v1.Pod, container string) (string, string) {
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range list {
			if c.Name == container && c.State.Waiting != nil {
				return c.State.Waiting.Reason, c.State.Waiting.Message
			}
		}
	}
	return "", ""
}

// allocatableOf reads the e2e node's allocatable resources.
func allocatableOf(t *testing.T) v1.ResourceList {
	t.Helper()
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading node %s: %v", nodeName, err)
	}
	return n.Status.Allocatable
}

// A container's environment as the kubelet builds it: literal values with $(VAR) expansion,
// the downward API (pod fields, IPs, resources), ConfigMap and Secret keys, envFrom with a
// prefix, service link variables and the API server's KUBERNETES_SERVICE_* variables.
func TestEnvResolvedFromEverySource(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, time.Minute)
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"color": "blue", "size": "XL"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data:       map[string][]byte{"password": []byte("s3cr3t"), "user": []byte("admin")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := s.kube.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "back-end"},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": "none"},
			Ports:    []v1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeSvc, err := s.kube.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	optional := true
	field := func(path string) *v1.EnvVarSource {
		return &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
	}
	res := func(r, divisor string) *v1.EnvVarSource {
		return &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: r, Divisor: resource.MustParse(divisor)}}
	}
	c := busybox("main", "env; echo ARGS: $0 $1")
	c.Command = []string{"sh", "-c", "env; echo ARGS: $0 $1", "$(GREETING)", "$$(GREETING)"}
	c.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	c.EnvFrom = []v1.EnvFromSource{
		{Prefix: "CM_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}}},
		{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}},
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: &optional}},
	}
	c.Env = []v1.EnvVar{
		{Name: "GREETING", Value: "hello"},
		{Name: "MESSAGE", Value: "$(GREETING) $(CM_color) $(MISSING) $$(GREETING) $(BACK_END_SERVICE_PORT)"},
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "POD_NAMESPACE", ValueFrom: field("metadata.namespace")},
		{Name: "POD_UID", ValueFrom: field("metadata.uid")},
		{Name: "POD_LABEL", ValueFrom: field("metadata.labels['tier']")},
		{Name: "POD_ANNOTATION", ValueFrom: field("metadata.annotations['note']")},
		{Name: "NODE_NAME", ValueFrom: field("spec.nodeName")},
		{Name: "SA_NAME", ValueFrom: field("spec.serviceAccountName")},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "POD_IPS", ValueFrom: field("status.podIPs")},
		{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
		{Name: "HOST_IPS", ValueFrom: field("status.hostIPs")},
		{Name: "CPU_LIMIT_M", ValueFrom: res("limits.cpu", "1m")},
		{Name: "CPU_REQUEST_M", ValueFrom: res("requests.cpu", "1m")},
		{Name: "MEM_LIMIT_MI", ValueFrom: res("limits.memory", "1Mi")},
		{Name: "MEM_REQUEST_MI", ValueFrom: res("requests.memory", "1Mi")},
		{Name: "STORAGE_LIMIT_MI", ValueFrom: res("limits.ephemeral-storage", "1Mi")},
		{Name: "COLOR", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}, Key: "color"}}},
		{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
		{Name: "OPTIONAL_KEY", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}, Key: "nope", Optional: &optional}}},
		{Name: "user", Value: "overridden"},
	}
	pod := basePod("envpod", c)
	pod.Labels = map[string]string{"tier": "front"}
	pod.Annotations = map[string]string{"note": "hi there"}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	created := createPod(t, ns, pod)
	p := waitPod(t, ns, "envpod", 2*time.Minute, "Succeeded", isSucceeded)
	out := podLogs(t, ns, "envpod", "main")
	env := envOf(out)

	alloc := allocatableOf(t)
	storage := alloc[v1.ResourceEphemeralStorage]
	want := map[string]string{
		"GREETING":                    "hello",
		"MESSAGE":                     "hello blue $(MISSING) $(GREETING) 8080",
		"POD_NAME":                    "envpod",
		"POD_NAMESPACE":               ns,
		"POD_UID":                     string(created.UID),
		"POD_LABEL":                   "front",
		"POD_ANNOTATION":              "hi there",
		"NODE_NAME":                   nodeName,
		"SA_NAME":                     "default",
		"POD_IP":                      p.Status.PodIP,
		"POD_IPS":                     p.Status.PodIP,
		"HOST_IP":                     p.Status.HostIP,
		"HOST_IPS":                    p.Status.HostIP,
		"CPU_LIMIT_M":                 "250",
		"CPU_REQUEST_M":               "100",
		"MEM_LIMIT_MI":                "64",
		"MEM_REQUEST_MI":              "32",
		"STORAGE_LIMIT_MI":            fmt.Sprint((storage.Value() + (1<<20 - 1)) >> 20),
		"COLOR":                       "blue",
		"PASSWORD":                    "s3cr3t",
		"CM_color":                    "blue",
		"CM_size":                     "XL",
		"password":                    "s3cr3t",
		"user":                        "overridden",
		"BACK_END_SERVICE_HOST":       svc.Spec.ClusterIP,
		"BACK_END_SERVICE_PORT":       "8080",
		"BACK_END_SERVICE_PORT_HTTP":  "8080",
		"BACK_END_PORT":               "tcp://" + svc.Spec.ClusterIP + ":8080",
		"BACK_END_PORT_8080_TCP_ADDR": svc.Spec.ClusterIP,
		"KUBERNETES_SERVICE_HOST":     kubeSvc.Spec.ClusterIP,
		"KUBERNETES_SERVICE_PORT":     fmt.Sprint(kubeSvc.Spec.Ports[0].Port),
	}
	if p.Status.PodIP == "" || p.Status.HostIP == "" {
		t.Fatalf("pod has no IPs in its status: %s", describeStatus(p))
	}
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("%s = %q (set: %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := env["OPTIONAL_KEY"]; ok {
		t.Errorf("OPTIONAL_KEY is set although its optional key does not exist")
	}
	if !strings.Contains(out, "ARGS: hello $(GREETING)") {
		t.Errorf("command arguments not expanded as the kubelet does; output:\n%s", out)
	}
}

// Without enableServiceLinks only the API server's variables are set.
func TestEnvServiceLinksDisabled(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, time.Minute)
	if _, err := s.kube.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "backend"},
		Spec:       v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	off := false
	pod := basePod("nolinks", busybox("main", "env"))
	pod.Spec.EnableServiceLinks = &off
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	createPod(t, ns, pod)
	waitPod(t, ns, "nolinks", 2*time.Minute, "Succeeded", isSucceeded)
	env := envOf(podLogs(t, ns, "nolinks", "main"))
	if _, ok := env["BACKEND_SERVICE_HOST"]; ok {
		t.Errorf("BACKEND_SERVICE_HOST is set with enableServiceLinks false")
	}
	if env["KUBERNETES_SERVICE_HOST"] == "" {
		t.Errorf("KUBERNETES_SERVICE_HOST is not set: the API server's variables are always given")
	}
}

// A missing ConfigMap or Secret makes the container wait with CreateContainerConfigError and
// the kubelet's message; the pod starts once the object appears.
func TestEnvMissingReferenceWaitsThenStarts(t *testing.T) {
	ns := newNamespace(t)
	c := busybox("main", "echo color=$COLOR pw=$PW; sleep 3600")
	c.Env = []v1.EnvVar{
		{Name: "COLOR", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "late"}, Key: "color"}}},
		{Name: "PW", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "late-secret"}, Key: "pw"}}},
	}
	createPod(t, ns, basePod("waits", c))
	reasonIs := func(msg string) func(*v1.Pod) bool {
		return func(p *v1.Pod) bool {
			r, m := waitingReason(p, "main")
			return r == "CreateContainerConfigError" && m == msg
		}
	}
	waitPod(t, ns, "waits", time.Minute, "CreateContainerConfigError for the ConfigMap", reasonIs(`configmap "late" not found`))

	ctx := ctxFor(t, time.Minute)
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Data: map[string]string{"other": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "waits", time.Minute, "CreateContainerConfigError for the key", reasonIs(fmt.Sprintf("couldn't find key color in ConfigMap %s/late", ns)))
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Update(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Data: map[string]string{"color": "green"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "waits", time.Minute, "CreateContainerConfigError for the Secret", reasonIs(`secret "late-secret" not found`))
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-secret"}, StringData: map[string]string{"pw": "x1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "waits", 2*time.Minute, "Running once the objects exist", isRunningReady)
	if out := podLogs(t, ns, "waits", "main"); !strings.Contains(out, "color=green pw=x1") {
		t.Errorf("output %q, want the late objects' values", out)
	}
}

// terminatedWith reports whether the container's current or last termination message holds
// want (FallbackToLogsOnError puts the log's tail there).
func terminatedWith(container, want string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name != container {
				continue
			}
			for _, st := range []v1.ContainerState{c.State, c.LastTerminationState} {
				if st.Terminated != nil && strings.Contains(st.Terminated.Message, want) {
					return true
				}
			}
		}
		return false
	}
}

// A container that restarts again and again (CrashLoopBackOff) reads its env references from
// the node's watch of each object, not from a GET per start: each restart sees the objects as
// the watch last delivered them, and an object deleted meanwhile makes the next start wait
// with the kubelet's CreateContainerConfigError.
func TestEnvCrashLoopFollowsObjectChanges(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, 3*time.Minute)
	cm := func(color string) *v1.ConfigMap {
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"color": color}}
	}
	secret := func(pw string) *v1.Secret {
		return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"}, StringData: map[string]string{"pw": pw}}
	}
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("blue"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, secret("one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := busybox("main", "echo color=$COLOR pw=$PW; exit 1")
	c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	c.EnvFrom = []v1.EnvFromSource{{Prefix: "OPT_", ConfigMapRef: &v1.ConfigMapEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "never"}, Optional: new(true)}}}
	c.Env = []v1.EnvVar{
		{Name: "COLOR", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "color"}}},
		{Name: "PW", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}, Key: "pw"}}},
	}
	createPod(t, ns, basePod("loop", c))
	waitPod(t, ns, "loop", time.Minute, "the first run with the first values", terminatedWith("main", "color=blue pw=one"))

	if _, err := s.kube.CoreV1().ConfigMaps(ns).Update(ctx, cm("green"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.CoreV1().Secrets(ns).Update(ctx, secret("two"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "loop", time.Minute, "a restart with the updated values", terminatedWith("main", "color=green pw=two"))

	if err := s.kube.CoreV1().ConfigMaps(ns).Delete(ctx, "cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "loop", 2*time.Minute, "CreateContainerConfigError once the ConfigMap is gone", func(p *v1.Pod) bool {
		r, m := waitingReason(p, "main")
		return r == "CreateContainerConfigError" && m == `configmap "cfg" not found`
	})
}

// An immutable ConfigMap's watch ends once it has been read (as the kubelet's does); restarts of
// a container keep getting its value from the cache.
func TestEnvImmutableConfigMapAcrossRestarts(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, time.Minute)
	immutable := true
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fixed"},
		Immutable: &immutable, Data: map[string]string{"color": "teal"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := busybox("main", "echo color=$COLOR; exit 1")
	c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	c.Env = []v1.EnvVar{{Name: "COLOR", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "fixed"}, Key: "color"}}}}
	createPod(t, ns, basePod("fixed", c))
	// With two restarts, the last termination is the first restart's run.
	waitPod(t, ns, "fixed", 90*time.Second, "a restart that read the value again", func(p *v1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "main" && cs.RestartCount >= 2 && cs.LastTerminationState.Terminated != nil &&
				strings.Contains(cs.LastTerminationState.Terminated.Message, "color=teal") {
				return true
			}
		}
		return false
	})
}
