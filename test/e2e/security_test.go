//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

func ptr[T any](v T) *T { return &v }

// linesOf splits a container's output into its non-empty lines.
func linesOf(out string) []string {
	var l []string
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			l = append(l, s)
		}
	}
	return l
}

// fieldOf returns the value after "name:" in /proc/self/status style output.
func fieldOf(out, name string) string {
	for _, l := range linesOf(out) {
		if k, v, ok := strings.Cut(l, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// The identity, groups, read-only root, capabilities, no_new_privs and masked /proc paths a
// container's processes have, seen from inside.
func TestSecurityContextSeenFromInside(t *testing.T) {
	ns := newNamespace(t)
	script := `echo "uid: $(id -u)"; echo "gid: $(id -g)"; echo "groups: $(id -G)"
touch /probe 2>/dev/null && echo "rootfs: writable" || echo "rootfs: read-only"
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status
echo x > /proc/sys/kernel/domainname 2>/dev/null && echo "procsys: writable" || echo "procsys: read-only"
[ -s /proc/kcore ] && echo "kcore: visible" || echo "kcore: masked"`
	locked := busybox("locked", script)
	locked.SecurityContext = &v1.SecurityContext{
		ReadOnlyRootFilesystem:   ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}, Add: []v1.Capability{"NET_ADMIN"}},
		SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}
	plain := busybox("plain", script)
	plain.SecurityContext = &v1.SecurityContext{RunAsUser: ptr(int64(0))}
	pod := basePod("secctx", locked, plain)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	// runAsGroup needs a runAsUser on the sandbox: containerd refuses a group alone.
	pod.Spec.SecurityContext = &v1.PodSecurityContext{
		RunAsUser:          ptr(int64(1234)),
		RunAsGroup:         ptr(int64(2345)),
		FSGroup:            ptr(int64(3456)),
		SupplementalGroups: []int64{4567},
	}
	createPod(t, ns, pod)
	waitPod(t, ns, "secctx", 2*time.Minute, "Succeeded", isSucceeded)

	out := podLogs(t, ns, "secctx", "locked")
	for field, want := range map[string]string{
		"uid":        "1234",
		"gid":        "2345",
		"groups":     "2345 3456 4567",
		"rootfs":     "read-only",
		"CapBnd":     "0000000000001000", // NET_ADMIN (bit 12) only
		"NoNewPrivs": "1",
		"Seccomp":    "2", // filter mode: the runtime's default profile
		"procsys":    "read-only",
		"kcore":      "masked",
	} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("locked container: %s = %q, want %q\n%s", field, got, want, out)
		}
	}
	out = podLogs(t, ns, "secctx", "plain")
	for field, want := range map[string]string{
		"uid":        "0",
		"gid":        "2345",
		"rootfs":     "writable",
		"NoNewPrivs": "0",
		"Seccomp":    "0", // Unconfined: the kubelet's default without seccompDefault
		"procsys":    "read-only",
	} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("plain container: %s = %q, want %q\n%s", field, got, want, out)
		}
	}
	// The runtime's default capabilities, not all of them.
	if capEff := fieldOf(out, "CapEff"); capEff == "" || capEff == "000001ffffffffff" || capEff == "0000003fffffffff" {
		t.Errorf("plain container CapEff = %q, want the runtime's default set", capEff)
	}
}

// runAsNonRoot against an image that runs as root: CreateContainerConfigError with the
// kubelet's message, and nothing runs.
func TestSecurityRunAsNonRootRefusesRootImage(t *testing.T) {
	ns := newNamespace(t)
	c := busybox("main", "sleep 3600")
	c.SecurityContext = &v1.SecurityContext{RunAsNonRoot: ptr(true)}
	p := createPod(t, ns, basePod("nonroot", c))
	want := fmt.Sprintf("container has runAsNonRoot and image will run as root (pod: %q, container: main)",
		fmt.Sprintf("nonroot_%s(%s)", ns, p.UID))
	waitPod(t, ns, "nonroot", time.Minute, "CreateContainerConfigError", func(p *v1.Pod) bool {
		r, m := waitingReason(p, "main")
		return r == "CreateContainerConfigError" && m == want
	})
	// With a non-root user it runs.
	c2 := busybox("main", "id -u; sleep 3600")
	c2.SecurityContext = &v1.SecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(1000))}
	createPod(t, ns, basePod("nonroot-ok", c2))
	waitPod(t, ns, "nonroot-ok", time.Minute, "Running", isRunningReady)
}

// Safe sysctls apply to the pod; an unsafe one the node does not allow rejects the pod.
func TestSecuritySysctls(t *testing.T) {
	ns := newNamespace(t)
	safe := basePod("safe", busybox("main", "cat /proc/sys/net/ipv4/ip_unprivileged_port_start"))
	safe.Spec.RestartPolicy = v1.RestartPolicyNever
	safe.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "101"}}}
	createPod(t, ns, safe)
	waitPod(t, ns, "safe", 2*time.Minute, "Succeeded", isSucceeded)
	if out := strings.TrimSpace(podLogs(t, ns, "safe", "main")); out != "101" {
		t.Errorf("ip_unprivileged_port_start = %q inside the pod, want 101", out)
	}

	unsafe := basePod("unsafe", busybox("main", "true"))
	unsafe.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "10000"}}}
	createPod(t, ns, unsafe)
	p := waitPod(t, ns, "unsafe", time.Minute, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "SysctlForbidden" || p.Status.Message != `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted` {
		t.Errorf("rejection reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if sbs, cs := runtimeObjects(t, string(p.UID)); len(sbs)+len(cs) > 0 {
		t.Errorf("a rejected pod has %d sandboxes and %d containers in the runtime", len(sbs), len(cs))
	}
}

// A host-network pod sees the node's interfaces (the stack's bridge) and the node's hosts file.
func TestSecurityHostNetworkSeesHostInterfaces(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("hostnet", busybox("main", "cat /proc/net/dev; head -n 1 /etc/hosts"))
	pod.Spec.HostNetwork = true
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	createPod(t, ns, pod)
	p := waitPod(t, ns, "hostnet", 2*time.Minute, "Succeeded", isSucceeded)
	out := podLogs(t, ns, "hostnet", "main")
	// The host's own interfaces (veths of other pods come and go meanwhile).
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if strings.HasPrefix(i.Name, "veth") {
			continue
		}
		if !strings.Contains(out, i.Name+":") {
			t.Errorf("the pod does not see the host's interface %s:\n%s", i.Name, out)
		}
	}
	if !strings.Contains(out, "vkcri0:") {
		t.Errorf("the pod does not see the stack's bridge vkcri0:\n%s", out)
	}
	if !strings.Contains(out, "# Kubernetes-managed hosts file (host network).") {
		t.Errorf("/etc/hosts lacks the host-network header:\n%s", out)
	}
	if p.Status.PodIP != p.Status.HostIP {
		t.Errorf("podIP %s, want the host IP %s", p.Status.PodIP, p.Status.HostIP)
	}
}

// Processes of one container are visible from another with shareProcessNamespace, and PID 1
// is the sandbox's pause process.
func TestSecurityShareProcessNamespace(t *testing.T) {
	ns := newNamespace(t)
	looker := busybox("looker", "until ps | grep -q '[s]leep 3601'; do sleep 0.2; done; echo found sleeper; echo pid1=$(cat /proc/1/cmdline | tr '\\0' ' '); sleep 3600")
	pod := basePod("shared", busybox("sleeper", "exec sleep 3601"), looker)
	pod.Spec.ShareProcessNamespace = ptr(true)
	createPod(t, ns, pod)
	waitPod(t, ns, "shared", 2*time.Minute, "Running", isRunningReady)
	var out string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if out = podLogs(t, ns, "shared", "looker"); strings.Contains(out, "found sleeper") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// PID 1 is the sandbox's pause process (the stack's pause image is a long sleep).
	pid1 := fieldOf(strings.ReplaceAll(out, "=", ":"), "pid1")
	if !strings.Contains(out, "found sleeper") || !(strings.Contains(pid1, "pause") || strings.Contains(pid1, "sleep 2147483647")) {
		t.Errorf("the looker does not see the sleeper's process or the pause process as PID 1:\n%s", out)
	}
}

// hostPort reaches the container through the runtime's port mapping.
func TestSecurityHostPortMapping(t *testing.T) {
	ns := newNamespace(t)
	port := int32(31000 + rand.Intn(2000))
	c := v1.Container{Name: "web", Image: image("vktest:latest"), Args: []string{"serve", "--port", "8080"},
		Ports: []v1.ContainerPort{{ContainerPort: 8080, HostPort: port, Protocol: v1.ProtocolTCP}}}
	createPod(t, ns, basePod("hostport", c))
	waitPod(t, ns, "hostport", 2*time.Minute, "Running", isRunningReady)
	url := fmt.Sprintf("http://%s/hostname", net.JoinHostPort(s.env["NODE_IP"], fmt.Sprint(port)))
	var lastErr error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			lastErr = fmt.Errorf("status %s", resp.Status)
		} else {
			lastErr = err
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("GET %s through the host port: %v", url, lastErr)
}
