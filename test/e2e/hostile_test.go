//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The hostile-input battery of the kubelet API (issue 19): broken and hostile requests sent to
// the e2e node's kubelet API and, when the reference kubelet node is Ready, to its kubelet API
// too. Each request's status is pinned here (read from the kubelet's pkg/kubelet/server and
// seen on ref); with ref up, ref must answer the pinned status as well and both bodies must say
// the same once names, UIDs and addresses are normalised. Afterwards the node must still run its
// pods as before (no restart, same containers), must not have panicked, and must have left no
// mount of its pods outside its root directory.


// apiTarget is one node's kubelet API and the pods the battery names on it.
type apiTarget struct {
	node    string
	addr    string // host:port of its kubelet API
	ns      string
	victim  *v1.Pod // runs "talker", whose log is "hello\n"
	other   *v1.Pod // a second pod of the same namespace on the same node
	foreign *v1.Pod // a pod of the other node (nil when ref is down)
}

// refReady tells whether the reference kubelet node is Ready.
func refReady(t *testing.T) bool {
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 10*time.Second), refNode, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// batteryPods starts the battery's two pods on node in a namespace of their own.
func batteryPods(t *testing.T, node string) (string, *v1.Pod, *v1.Pod) {
	t.Helper()
	ns := newNamespace(t)
	mk := func(name string) *v1.Pod {
		p := basePod(name, busybox("talker", "echo hello; trap 'exit 0' TERM; sleep 3600 & wait"))
		p.Spec.NodeSelector = nil
		p.Spec.NodeName = node
		createPod(t, ns, p)
		return waitPod(t, ns, name, 2*time.Minute, "Running", isRunningReady)
	}
	return ns, mk("victim"), mk("other")
}

// apiClient is the API server's own client certificate: every kubelet authorizes it fully, so
// what is compared is how a request is handled, not who may make it.
func apiClient(t *testing.T) *http.Client {
	c := kubeletClient(t, "apiserver-kubelet-client")
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// rawRequest sends method and the path exactly as given (no cleaning, no re-encoding) with the
// extra headers, and returns the status and body.
func rawRequest(t *testing.T, c *http.Client, addr, method, rawPath string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "https://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "//" + addr + rawPath
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

var reIP = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b`)

// normalize takes out of a body what differs between the nodes for the same answer.
func (tg *apiTarget) normalize(body string) string {
	for from, to := range map[string]string{
		string(tg.victim.UID): "<victim-uid>", string(tg.other.UID): "<other-uid>", tg.ns: "<ns>",
	} {
		body = strings.ReplaceAll(body, from, to)
	}
	body = regexp.MustCompile(`\b`+regexp.QuoteMeta(tg.node)+`\b`).ReplaceAllString(body, "<node>")
	if tg.foreign != nil {
		body = strings.ReplaceAll(body, string(tg.foreign.UID), "<foreign-uid>")
	}
	return reIP.ReplaceAllString(body, "<ip>")
}

// apiCase is one request of the battery. Path may hold {ns}, {pod}, {uid}, {other-uid},
// {foreign}, {foreign-ns} and {foreign-uid}.
type apiCase struct {
	name   string
	method string
	path   string
	header http.Header
	code   int
	// body, when set, is the normalised body both nodes must answer.
	body string
	// sameBody: the normalised bodies of the two nodes must be equal.
	sameBody bool
}

func (tg *apiTarget) expand(p string) string {
	r := strings.NewReplacer("{ns}", tg.ns, "{pod}", tg.victim.Name, "{uid}", string(tg.victim.UID), "{other-uid}", string(tg.other.UID))
	p = r.Replace(p)
	if tg.foreign != nil {
		p = strings.NewReplacer("{foreign}", tg.foreign.Name, "{foreign-ns}", tg.foreign.Namespace, "{foreign-uid}", string(tg.foreign.UID)).Replace(p)
	}
	return p
}

func hostileAPICases() []apiCase {
	logs := "/containerLogs/{ns}/{pod}/talker"
	invalid := `{"message": "Invalid request."}`
	undecodable := `{"message": "Unable to decode query."}`
	big := func(n int) http.Header { return http.Header{"X-Big": {strings.Repeat("a", n)}} }
	many := http.Header{}
	for i := 0; i < 2000; i++ {
		many.Set(fmt.Sprintf("X-H%d", i), "v")
	}
	return []apiCase{
		// Log queries.
		{name: "tailLines negative", method: "GET", path: logs + "?tailLines=-1", code: 422, body: invalid},
		{name: "tailLines not a number", method: "GET", path: logs + "?tailLines=abc", code: 400, body: undecodable},
		{name: "tailLines overflows int64", method: "GET", path: logs + "?tailLines=99999999999999999999", code: 400, body: undecodable},
		{name: "tailLines max int64", method: "GET", path: logs + "?tailLines=9223372036854775807", code: 200, body: "hello\n"},
		{name: "tailLines zero", method: "GET", path: logs + "?tailLines=0", code: 200, body: ""},
		{name: "tail old name negative", method: "GET", path: logs + "?tail=-3", code: 422, body: invalid},
		{name: "tail all", method: "GET", path: logs + "?tail=all", code: 200, body: "hello\n"},
		{name: "tailLines twice", method: "GET", path: logs + "?tailLines=1&tailLines=-1", code: 200, body: "hello\n"},
		{name: "limitBytes zero", method: "GET", path: logs + "?limitBytes=0", code: 422, body: invalid},
		{name: "limitBytes negative", method: "GET", path: logs + "?limitBytes=-5", code: 422, body: invalid},
		{name: "limitBytes one", method: "GET", path: logs + "?limitBytes=1", code: 200, body: "h"},
		{name: "limitBytes max int64", method: "GET", path: logs + "?limitBytes=9223372036854775807", code: 200, body: "hello\n"},
		{name: "sinceTime garbage", method: "GET", path: logs + "?sinceTime=yesterday", code: 400, body: undecodable},
		{name: "sinceTime far future", method: "GET", path: logs + "?sinceTime=9999-12-31T23:59:59Z", code: 200, body: ""},
		{name: "sinceTime year zero", method: "GET", path: logs + "?sinceTime=0000-01-01T00:00:00Z", code: 200, body: "hello\n"},
		{name: "sinceTime and sinceSeconds", method: "GET", path: logs + "?sinceTime=2006-01-02T15:04:05Z&sinceSeconds=5", code: 422, body: invalid},
		{name: "sinceSeconds zero", method: "GET", path: logs + "?sinceSeconds=0", code: 422, body: invalid},
		{name: "sinceSeconds max int64", method: "GET", path: logs + "?sinceSeconds=9223372036854775807", code: 200, sameBody: true},
		{name: "timestamps with limitBytes", method: "GET", path: logs + "?timestamps=true&limitBytes=2", code: 200, body: "20"},
		{name: "previous of a first instance", method: "GET", path: logs + "?previous=yes", code: 400, sameBody: true},
		{name: "stream Stderr", method: "GET", path: logs + "?stream=Stderr", code: 400, sameBody: true},
		{name: "stream unknown", method: "GET", path: logs + "?stream=bogus", code: 422, body: invalid},
		{name: "unknown container", method: "GET", path: "/containerLogs/{ns}/{pod}/nope", code: 404, sameBody: true},
		{name: "unknown pod", method: "GET", path: "/containerLogs/{ns}/nope/talker", code: 404, sameBody: true},
		{name: "pod of the other node", method: "GET", path: "/containerLogs/{foreign-ns}/{foreign}/talker", code: 404, sameBody: true},
		{name: "empty container name", method: "GET", path: "/containerLogs/{ns}/{pod}/", code: 404},
		// Path traversal and odd paths.
		// A path that is not clean is redirected to its clean form (307), by both.
		{name: "logs path climbing", method: "GET", path: "/containerLogs/{ns}/{pod}/../../../../etc/passwd", code: 307, sameBody: true},
		{name: "logs path climbing encoded", method: "GET", path: "/containerLogs/{ns}/{pod}/%2e%2e%2f%2e%2e%2fetc%2fpasswd", code: 404},
		{name: "container name with an encoded slash", method: "GET", path: "/containerLogs/{ns}/{pod}/talker%2Fx", code: 404},
		{name: "system logs climbing", method: "GET", path: "/logs/../../../etc/passwd", code: 307, sameBody: true},
		{name: "system logs climbing encoded", method: "GET", path: "/logs/%2e%2e/%2e%2e/etc/passwd", code: 404},
		{name: "pods through a dot-dot", method: "GET", path: "/stats/../pods", code: 307, sameBody: true},
		{name: "double slash", method: "GET", path: "//pods", code: 307, sameBody: true},
		{name: "very long path", method: "GET", path: "/containerLogs/{ns}/{pod}/" + strings.Repeat("x", 60000), code: 404},
		// Requests naming another pod's UID, or another node's pod. The kubelet's exec and run
		// find the container by the pod's name and do not look at the UID (the exec here then
		// fails for want of an upgrade); its attach refuses it; its port-forward answers 404.
		{name: "exec naming the other pod's uid", method: "POST", path: "/exec/{ns}/{pod}/{other-uid}/talker?command=true&output=1", code: 500, body: "Upgrade request required\n"},
		{name: "exec naming a made-up uid", method: "POST", path: "/exec/{ns}/{pod}/00000000-0000-0000-0000-000000000000/talker?command=true&output=1", code: 500, body: "Upgrade request required\n"},
		{name: "attach naming the other pod's uid", method: "POST", path: "/attach/{ns}/{pod}/{other-uid}/talker?output=1", code: 500, body: "pod victim_<ns> not found"},
		{name: "portForward naming the other pod's uid", method: "POST", path: "/portForward/{ns}/{pod}/{other-uid}", code: 404, sameBody: true},
		{name: "exec of the other node's pod", method: "POST", path: "/exec/{foreign-ns}/{foreign}/talker?command=true&output=1", code: 404, sameBody: true},
		{name: "exec of an unknown container", method: "POST", path: "/exec/{ns}/{pod}/nope?command=true&output=1", code: 500, body: `container not found ("nope")`},
		{name: "run naming the other pod's uid", method: "POST", path: "/run/{ns}/{pod}/{other-uid}/talker?cmd=echo+ran+in+victim", code: 200, body: "ran in victim\n"},
		{name: "run of a failing command", method: "POST", path: "/run/{ns}/{pod}/talker?cmd=false", code: 500, sameBody: true},
		{name: "run of the other node's pod", method: "POST", path: "/run/{foreign-ns}/{foreign}/talker?cmd=true", code: 404, sameBody: true},
		{name: "run with GET", method: "GET", path: "/run/{ns}/{pod}/talker?cmd=true", code: 405},
		{name: "exec without an upgrade", method: "POST", path: "/exec/{ns}/{pod}/{uid}/talker?command=true&output=1", code: 500, body: "Upgrade request required\n"},
		// Methods.
		{name: "DELETE pods", method: "DELETE", path: "/pods", code: 405},
		{name: "PUT healthz", method: "PUT", path: "/healthz", code: 200, body: "ok"},
		// Headers.
		{name: "header just under 1 MiB", method: "GET", path: "/healthz", header: big(1<<20 - 4096), code: 200, body: "ok"},
		{name: "header of 2 MiB", method: "GET", path: "/healthz", header: big(2 << 20), code: 431},
		{name: "2000 headers", method: "GET", path: "/healthz", header: many, code: 200, body: "ok"},
		{name: "query of 100 KB", method: "GET", path: logs + "?tailLines=1&pad=" + strings.Repeat("p", 100000), code: 200, body: "hello\n"},
	}
}

func TestHostileKubeletAPIBattery(t *testing.T) {
	waitKubeletAPIServing(t)
	targets := []*apiTarget{{node: nodeName, addr: net.JoinHostPort(s.env["NODE_IP"], nodePort)}}
	withRef := refReady(t)
	if withRef {
		targets = append(targets, &apiTarget{node: refNode, addr: net.JoinHostPort(s.env["REF_NODE_IP"], envOr("REF_KUBELET_PORT", "10250"))})
	} else {
		t.Logf("node %s is not Ready: the answers are checked against the pinned ones only", refNode)
	}
	for _, tg := range targets {
		tg.ns, tg.victim, tg.other = batteryPods(t, tg.node)
	}
	if withRef {
		targets[0].foreign, targets[1].foreign = targets[1].victim, targets[0].victim
	}
	before := batteryContainerIDs(targets[0].victim, targets[0].other)
	c := apiClient(t)

	for _, tc := range hostileAPICases() {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.path, "{foreign") && !withRef {
				t.Skip("needs the reference node's pod")
			}
			bodies := map[string]string{}
			for _, tg := range targets {
				code, body := rawRequest(t, c, tg.addr, tc.method, tg.expand(tc.path), tc.header)
				body = tg.normalize(body)
				bodies[tg.node] = body
				if code != tc.code {
					t.Errorf("%s: %s %.120s: %d %.300q, want %d", tg.node, tc.method, tc.path, code, body, tc.code)
				}
				if tc.body != "" || tc.code == 200 && !tc.sameBody {
					if body != tc.body {
						t.Errorf("%s: %s %.120s: body %.300q, want %q", tg.node, tc.method, tc.path, body, tc.body)
					}
				}
			}
			if withRef && tc.sameBody && bodies[nodeName] != bodies[refNode] {
				t.Errorf("bodies differ:\n  %s: %.400q\n  %s: %.400q", nodeName, bodies[nodeName], refNode, bodies[refNode])
			}
		})
	}

	t.Run("slow client trickling its headers", func(t *testing.T) {
		// vk-cri allows 30 s for a request's headers (server/limits.go); the kubelet sets no
		// ReadHeaderTimeout and would wait for its 4 h ReadTimeout: a deliberate difference,
		// so only vk-cri is checked here.
		conn, err := tls.Dial("tcp", targets[0].addr, &tls.Config{RootCAs: clusterCAPool(t), ServerName: s.env["NODE_IP"]})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = conn.SetReadDeadline(start.Add(45 * time.Second))
		_, err = bufio.NewReader(conn).ReadByte()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection still open %v after a partial request", time.Since(start).Round(time.Second))
		}
		if took := time.Since(start); took < 25*time.Second {
			t.Errorf("connection closed after %v, before the 30 s header timeout", took.Round(time.Second))
		}
	})

	t.Run("node unharmed", func(t *testing.T) {
		after := batteryContainerIDs(mustGetPod(t, targets[0].ns, "victim"), mustGetPod(t, targets[0].ns, "other"))
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the node's pods changed under the battery: containers %v, were %v", after, before)
		}
		noPanicInNodeLog(t)
		checkMountsInsideRoot(t, []types.UID{targets[0].victim.UID, targets[0].other.UID})
	})
}

// batteryContainerIDs lists each container's ID and restart count.
func batteryContainerIDs(pods ...*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			out = append(out, fmt.Sprintf("%s/%s=%s#%d", p.Name, cs.Name, cs.ContainerID, cs.RestartCount))
		}
	}
	return out
}

func mustGetPod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// noPanicInNodeLog fails when the node's log shows a recovered or fatal panic.
func noPanicInNodeLog(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.env["STACK_DIR"], "logs", "vk-cri-"+nodeName+".log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "panic") || strings.HasPrefix(line, "goroutine ") {
			t.Errorf("node log: %.300s", line)
		}
	}
}

// checkMountsInsideRoot fails for every mount of the host (this is one machine: the test's
// /proc/self/mountinfo is the node's) whose mount point names one of the pods' UIDs and lies
// outside the node's root directory. The containers' own mounts are inside their rootfs, under
// the runtime's state directory, and do not name the pod's UID.
func checkMountsInsideRoot(t *testing.T, uids []types.UID) {
	t.Helper()
	root := nodeRootDir(t)
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mountPoint := f[4]
		for _, uid := range uids {
			if strings.Contains(mountPoint, string(uid)) && !strings.HasPrefix(mountPoint, root+"/") {
				t.Errorf("mount of pod %s outside %s: %s", uid, root, line)
			}
		}
	}
}

// podMounts lists the host's mounts whose line names one of the pods' UIDs.
func podMounts(t *testing.T, uids []types.UID) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, uid := range uids {
			if strings.Contains(line, string(uid)) {
				out = append(out, line)
			}
		}
	}
	return out
}

// waitNoMountsOf waits until no mount names one of the pods' UIDs (their volumes and subPath
// binds are gone), at most timeout.
func waitNoMountsOf(t *testing.T, uids []types.UID, timeout time.Duration) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		left = podMounts(t, uids)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("mounts of deleted pods left after %v:\n%s", timeout, strings.Join(left, "\n"))
	}
}

// TestHostileSubPathMountsStayInside: symlinks an init container plants in an emptyDir, named
// by subPaths of the pod's containers; the containers whose subPath leads out are refused
// (the compare scenarios hostile/subpath-* check the reasons and events against the kubelet),
// the one inside runs, every mount of the pod stays inside the node's root directory while it
// runs, and none is left once it is deleted.
func TestHostileSubPathMountsStayInside(t *testing.T) {
	ns := newNamespace(t)
	plant := "mkdir -p /work/ok/d && echo inside > /work/ok/d/f && ln -s / /work/root && ln -s ../../../../../../.. /work/up && " +
		"ln -s /etc /work/etc && ln -s ok /work/rel && ln -s ../work/ok /work/back && mkfifo /work/fifo"
	vm := func(sub string) []v1.VolumeMount {
		return []v1.VolumeMount{{Name: "work", MountPath: "/data", SubPath: sub}}
	}
	init := busybox("plant", plant)
	init.VolumeMounts = []v1.VolumeMount{{Name: "work", MountPath: "/work"}}
	mk := func(name, sub string) v1.Container {
		c := busybox(name, "cat /data/d/f; trap 'exit 0' TERM; sleep 3600 & wait")
		c.VolumeMounts = vm(sub)
		return c
	}
	pod := basePod("subpaths", mk("good", "ok"), mk("relative", "rel"), mk("back", "back"), mk("root", "root"), mk("up", "up"), mk("etc", "etc/passwd"), mk("through", "root/etc"))
	pod.Spec.InitContainers = []v1.Container{init}
	pod.Spec.Volumes = []v1.Volume{{Name: "work", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	created := createPod(t, ns, pod)
	refused := map[string]bool{"root": true, "up": true, "etc": true, "through": true}
	p := waitPod(t, ns, "subpaths", 2*time.Minute, "good, relative and back running, the others refused", func(p *v1.Pod) bool {
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case refused[cs.Name] && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError":
				n++
			case !refused[cs.Name] && cs.State.Running != nil:
				n++
			}
		}
		return n == len(pod.Spec.Containers)
	})
	uids := []types.UID{created.UID}
	if len(podMounts(t, uids)) == 0 {
		t.Fatalf("no mount names the pod's UID %s: the check would see nothing", created.UID)
	}
	checkMountsInsideRoot(t, uids)
	for _, line := range podMounts(t, uids) {
		// A subPath bind of the host's root or /etc would show their root inside the mount.
		if f := strings.Fields(line); len(f) > 4 && (f[3] == "/" || strings.HasPrefix(f[3], "/etc")) && strings.Contains(f[4], "volume-subpaths") {
			t.Errorf("a subPath bind of a host directory: %s", line)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if refused[cs.Name] && !strings.Contains(cs.State.Waiting.Message, "failed to prepare subPath") {
			t.Errorf("container %s: message %q", cs.Name, cs.State.Waiting.Message)
		}
	}
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "subpaths", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ns, "subpaths", time.Minute)
	waitNoMountsOf(t, uids, 30*time.Second)
	noPanicInNodeLog(t)
}
