package compare

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newFakeCluster is a fake clientset that sets resource versions (the watches need them) and
// a fake "kubelet" for each node: it creates namespaces' default ServiceAccounts and runs each
// pod's single container to an exit with the node's exit code, with events.
func newFakeCluster(t *testing.T, exitCodes map[string]int32) kubernetes.Interface {
	t.Helper()
	nodes := make([]string, 0, len(exitCodes))
	for n := range exitCodes {
		nodes = append(nodes, n)
	}
	return newFakeClusterFunc(t, nodes, func(node string) int32 { return exitCodes[node] })
}

// newFakeClusterFunc is newFakeCluster with the exit code of each pod's container asked of
// exitCode when the container ends.
func newFakeClusterFunc(t *testing.T, nodes []string, exitCode func(node string) int32) kubernetes.Interface {
	t.Helper()
	client := fake.NewClientset()
	var rv atomic.Int64
	setRV := func(action k8stesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		case k8stesting.CreateAction:
			obj = a.GetObject()
		case k8stesting.UpdateAction:
			obj = a.GetObject()
		}
		if m, ok := obj.(metav1.Object); ok {
			m.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10))
		}
		return false, nil, nil
	}
	client.PrependReactor("create", "*", setRV)
	client.PrependReactor("update", "*", setRV)
	for _, node := range nodes {
		if _, err := client.CoreV1().Nodes().Create(context.Background(), &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: node},
			Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		fakeKubelet(ctx, client, nodes, exitCode)
	}()
	return client
}

func fakeKubelet(ctx context.Context, client kubernetes.Interface, nodes []string, exitCode func(node string) int32) {
	core := client.CoreV1()
	started := map[string]time.Time{}
	for ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		nss, _ := core.Namespaces().List(ctx, metav1.ListOptions{})
		for _, ns := range nss.Items {
			if _, err := core.ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{}); apierrors.IsNotFound(err) {
				_, _ = core.ServiceAccounts(ns.Name).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
			}
			pods, _ := core.Pods(ns.Name).List(ctx, metav1.ListOptions{})
			for i := range pods.Items {
				pod := &pods.Items[i]
				if !slices.Contains(nodes, pod.Spec.NodeName) || len(pod.Spec.Containers) == 0 {
					continue
				}
				c := pod.Spec.Containers[0].Name
				key := ns.Name + "/" + pod.Name
				event := func(reason string) {
					_, _ = core.Events(ns.Name).Create(ctx, &v1.Event{
						ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: ns.Name},
						InvolvedObject: v1.ObjectReference{Kind: "Pod", Name: pod.Name, Namespace: ns.Name, FieldPath: "spec.containers{" + c + "}"},
						Type:           v1.EventTypeNormal, Reason: reason, Count: 1,
						FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
					}, metav1.CreateOptions{})
				}
				switch {
				case pod.Status.Phase == "":
					started[key] = time.Now()
					event("Started")
					pod.Status.Phase = v1.PodRunning
					pod.Status.PodIP = "10.88.0." + strconv.Itoa(len(started))
					pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: c, Ready: true, ContainerID: "containerd://" + strings.Repeat("ab", 32),
						State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
				case pod.Status.Phase == v1.PodRunning && time.Since(started[key]) > 200*time.Millisecond:
					reason, code := "Completed", exitCode(pod.Spec.NodeName)
					pod.Status.Phase = v1.PodSucceeded
					if code != 0 {
						pod.Status.Phase, reason = v1.PodFailed, "Error"
					}
					pod.Status.ContainerStatuses[0].Ready = false
					pod.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.Now()}}
				default:
					continue
				}
				_, _ = core.Pods(ns.Name).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			}
		}
	}
}

const fakeScenario = `
name: fake-run
category: lifecycle
description: Runs against the fake cluster.
timeout: 20s
objects:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: b}}
pods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: main}
    spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
steps:
  - wait: {pod: main, for: "ContainerTerminated:c", timeout: 10s}
  - update: {pod: main, patch: {metadata: {labels: {x: "y"}}}}
  - wait: {pod: main, for: Running, timeout: 1s}
  - delete: {pod: main, gracePeriodSeconds: 0}
  - wait: {pod: main, for: Deleted, timeout: 5s}
`

func runFake(t *testing.T, exitCodes map[string]int32, nodeA, nodeB string) *Result {
	t.Helper()
	return runFakeOn(t, newFakeCluster(t, exitCodes), nodeA, nodeB, 0)
}

func runFakeOn(t *testing.T, client kubernetes.Interface, nodeA, nodeB string, retries int) *Result {
	t.Helper()
	sc, err := Parse("fake/fake-run.yaml", []byte(fakeScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Client: client, NodeA: nodeA, NodeB: nodeB, Settle: 0}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.CheckNodes(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res := r.RunAll(ctx, []*Scenario{sc}, RunOptions{Report: &out, Retries: retries}, "fake")
	t.Logf("report:\n%s", out.String())
	return res
}

// Two nodes that behave the same match, through the whole runner (namespaces, objects,
// watches, steps, logs, events, deletion), and their records are normalised.
func TestRunnerFakeClusterMatch(t *testing.T) {
	res := runFake(t, map[string]int32{"node-a": 0, "node-b": 0}, "node-a", "node-b")
	sc := res.Scenarios[0]
	if sc.Status != StatusMatch {
		t.Fatalf("status %s, diffs %+v, A %+v", sc.Status, sc.Diffs, sc.A)
	}
	a := sc.A
	if a.Error != "" || len(a.Objects) != 1 || a.Objects[0] != "ok" {
		t.Errorf("side A: error %q objects %v", a.Error, a.Objects)
	}
	var results []string
	for _, st := range a.Steps {
		results = append(results, st.Result)
	}
	if got, want := strings.Join(results, " | "), "ok | ok | wait impossible: Running (pod Succeeded) | ok | ok"; got != want {
		t.Errorf("steps: %s, want %s", got, want)
	}
	p := a.Pods["main"]
	var phases []string
	for _, e := range p.Timeline {
		phases = append(phases, e.Phase)
	}
	if got := strings.Join(phases, ","); got != "(none),Running,Succeeded" { // the fake API server does not default the phase
		t.Errorf("timeline phases %s", got)
	}
	if len(p.Events) != 1 || p.Events[0].Key() != "Normal Started spec.containers{c}" {
		t.Errorf("events %+v", p.Events)
	}
	if p.Logs["c"] == nil || p.Logs["c"].Current == nil || p.Logs["c"].Current.Text != "fake logs" {
		t.Errorf("logs %+v", p.Logs["c"])
	}
	if d := p.Deletion; d == nil || !d.Gone || d.GracePeriodSeconds != 0 || d.Bucket != "<1s" {
		t.Errorf("deletion %+v", d)
	}
	if !strings.HasPrefix(a.Namespace, "cmp-fake-run-a-") || !strings.HasPrefix(sc.B.Namespace, "cmp-fake-run-b-") {
		t.Errorf("namespaces %s %s", a.Namespace, sc.B.Namespace)
	}
	if res.Failed() || res.ScoreLine() != "matching 1/1 scenarios" {
		t.Errorf("result %s failed=%v", res.ScoreLine(), res.Failed())
	}
}

func TestRunnerFakeClusterDiffer(t *testing.T) {
	res := runFake(t, map[string]int32{"node-a": 0, "node-b": 3}, "node-a", "node-b")
	sc := res.Scenarios[0]
	if sc.Status != StatusDiffer || !res.Failed() {
		t.Fatalf("status %s", sc.Status)
	}
	var b bytes.Buffer
	PrintDiffs(&b, sc.Diffs, "")
	for _, want := range []string{
		"- pods/main/timeline[2].containers[c].state: terminated:Completed exit=0",
		"+ pods/main/timeline[2].containers[c].state: terminated:Error exit=3",
		"- steps[2]: wait impossible: Running (pod Succeeded)",
		"+ steps[2]: wait impossible: Running (pod Failed)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRunnerMissingNode(t *testing.T) {
	r := &Runner{Client: newFakeCluster(t, map[string]int32{"node-a": 0}), NodeA: "node-a", NodeB: "nope"}
	if err := r.CheckNodes(context.Background()); err == nil || !strings.Contains(err.Error(), "node nope") {
		t.Errorf("CheckNodes: %v", err)
	}
}

// A scenario that differs once and then matches is reported as matched on retry, with the first
// attempt's diffs kept; one that keeps differing fails after its retries.
func TestRunnerRetriesADifferingScenario(t *testing.T) {
	var bRuns atomic.Int32
	flaky := func(node string) int32 {
		if node == "node-b" && bRuns.Add(1) == 1 {
			return 3
		}
		return 0
	}
	res := runFakeOn(t, newFakeClusterFunc(t, []string{"node-a", "node-b"}, flaky), "node-a", "node-b", 2)
	sc := res.Scenarios[0]
	if sc.Status != StatusMatch || len(sc.EarlierAttempts) != 1 || sc.EarlierAttempts[0].Status != StatusDiffer || len(sc.EarlierAttempts[0].Diffs) == 0 {
		t.Fatalf("status %s, earlier attempts %+v", sc.Status, sc.EarlierAttempts)
	}
	if res.Failed() || len(res.Summary.MatchedOnRetry) != 1 {
		t.Errorf("failed=%v summary %+v", res.Failed(), res.Summary)
	}
	var b bytes.Buffer
	PrintScenario(&b, sc)
	PrintSummary(&b, res)
	for _, want := range []string{"attempt 1: differ", "+ pods/main/timeline[2].containers[c].state: terminated:Error exit=3", "matched only when run again (1): lifecycle/fake-run"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}

	always := func(node string) int32 {
		if node == "node-b" {
			return 3
		}
		return 0
	}
	res = runFakeOn(t, newFakeClusterFunc(t, []string{"node-a", "node-b"}, always), "node-a", "node-b", 1)
	if sc := res.Scenarios[0]; sc.Status != StatusDiffer || len(sc.EarlierAttempts) != 1 || !res.Failed() {
		t.Errorf("a scenario that always differs: status %s, earlier %d, failed %v", sc.Status, len(sc.EarlierAttempts), res.Failed())
	}
}
