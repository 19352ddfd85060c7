package provider

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// admissionProvider is a provider with a pod store, an allocation store and the test node,
// recording its events.
func admissionProvider(t *testing.T) (*Provider, *record.FakeRecorder) {
	t.Helper()
	rec := record.NewFakeRecorder(100)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	p := &Provider{
		cfg:      Config{NodeName: "vk-adm", Metrics: noMetrics{}},
		log:      logrus.NewEntry(quiet),
		pods:     newPodStore(),
		alloc:    newAllocationStore(filepath.Join(t.TempDir(), allocationFile)),
		recorder: rec,
	}
	p.setDescribedNode(admissionTestNode())
	return p, rec
}

// addAdmissionPod adds a pod named name requesting cpu to the store.
func addAdmissionPod(p *Provider, name, cpu string) *podRecord {
	pod := otherPod(name, rl("cpu", cpu))
	pod.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
	r, _ := p.pods.add(newPodRecord(podIdentity{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}, pod))
	return r
}

func admit(p *Provider, r *podRecord) (bool, time.Duration) {
	r.mu.Lock()
	pod := r.pod
	r.mu.Unlock()
	return p.rejectIfInadmissible(context.Background(), r, pod, &podRuntime{})
}

// decide admits the record's pod until it is decided: admitted (true) or refused (false).
func decide(t *testing.T, p *Provider, r *podRecord) bool {
	for i := 0; i < 1000; i++ {
		stop, retry := admit(p, r)
		if !stop {
			return true
		}
		if retry == 0 {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("pod %s never decided", r.uid)
	return false
}

// Pods that arrive together are admitted one at a time, each next to those admitted before it,
// as the kubelet's allocation manager does: of two pods that each fit alone, one runs.
func TestAdmissionOneAtATime(t *testing.T) {
	for round := 0; round < 20; round++ {
		p, _ := admissionProvider(t)
		a, b := addAdmissionPod(p, "a", "1500m"), addAdmissionPod(p, "b", "1")
		var wg sync.WaitGroup
		admitted := make([]bool, 2)
		for i, r := range []*podRecord{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); admitted[i] = decide(t, p, r) }()
		}
		wg.Wait()
		if admitted[0] == admitted[1] {
			t.Fatalf("round %d: a admitted %v, b admitted %v: want exactly one", round, admitted[0], admitted[1])
		}
	}
}

// Pods are decided in creation order (then in the order the API gave them), whichever worker
// comes first: the first created of two pods after the same resources runs.
func TestAdmissionInCreationOrder(t *testing.T) {
	p, _ := admissionProvider(t)
	later, earlier := addAdmissionPod(p, "later", "1500m"), addAdmissionPod(p, "earlier", "1")
	later.pod.CreationTimestamp = metav1.NewTime(testT0.Add(time.Second))
	earlier.pod.CreationTimestamp = metav1.NewTime(testT0)
	if stop, retry := admit(p, later); !stop || retry != admissionRetry {
		t.Fatalf("later pod: stop %v retry %v, want to wait for the earlier one", stop, retry)
	}
	if st := later.view().Status; st.Phase != "" {
		t.Errorf("waiting pod has status %+v", st)
	}
	// The decision wakes the waiting pod's worker.
	if stop, _ := admit(p, earlier); stop {
		t.Fatalf("earlier pod refused: %+v", earlier.view().Status)
	}
	select {
	case <-later.wake:
	default:
		t.Error("the later pod was not woken by the earlier one's admission")
	}
	if stop, retry := admit(p, later); !stop || retry != 0 || later.view().Status.Reason != "OutOfcpu" {
		t.Errorf("later pod: stop %v retry %v status %+v, want OutOfcpu", stop, retry, later.view().Status)
	}

	// Created within the same second: the order the API gave them.
	p, _ = admissionProvider(t)
	first, second := addAdmissionPod(p, "first", "1500m"), addAdmissionPod(p, "second", "1")
	first.firstSeen, second.firstSeen = testT0, testT0.Add(time.Millisecond)
	if stop, retry := admit(p, second); !stop || retry != admissionRetry {
		t.Errorf("second pod: stop %v retry %v, want to wait for the first", stop, retry)
	}
	if !decide(t, p, first) {
		t.Error("first refused")
	}
	if decide(t, p, second) {
		t.Error("second admitted")
	}
}

func TestAdmissionRejectsOnce(t *testing.T) {
	p, events := admissionProvider(t)
	a, b := addAdmissionPod(p, "a", "1500m"), addAdmissionPod(p, "b", "1")
	if stop, _ := admit(p, a); stop {
		t.Fatal("a refused on an empty node")
	}
	if _, ok := p.alloc.allocated(a.uid); !ok {
		t.Fatal("a admitted without an allocation")
	}
	if stop, _ := admit(p, b); !stop {
		t.Fatal("b admitted next to a")
	}
	st := b.view().Status
	wantMsg := "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"
	if st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" || st.Message != wantMsg {
		t.Errorf("b's status %s %s %q, want Failed OutOfcpu %q", st.Phase, st.Reason, st.Message, wantMsg)
	}
	if e := <-events.Events; e != "Warning OutOfcpu Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000" {
		t.Errorf("event %q", e)
	}
	if stop, _ := admit(p, b); !stop {
		t.Error("b admitted on its next sync")
	}
	if _, ok := p.alloc.allocated(b.uid); ok {
		t.Error("refused b holds an allocation")
	}
	select {
	case e := <-events.Events:
		t.Errorf("second event %q", e)
	default:
	}
	// a, admitted once, is not admitted again (the kubelet admits a pod once).
	p.setDescribedNode(func() *v1.Node { n := admissionTestNode(); n.Status.Allocatable["cpu"] = rl("c", "1")["c"]; return n }())
	if stop, _ := admit(p, a); stop {
		t.Error("admitted a refused on a later sync")
	}
}

// "Used" counts the active admitted pods: a terminating pod still holds its resources, a
// terminated one (here deleted, its containers stopped, not yet removed) no longer does.
func TestAdmissionCountsActivePods(t *testing.T) {
	p, _ := admissionProvider(t)
	a := addAdmissionPod(p, "a", "1500m")
	if stop, _ := admit(p, a); stop {
		t.Fatal("a refused")
	}
	p.requestDeletion(a, nil)
	if l := a.lifecycleNow(); l.state != podTerminating {
		t.Fatalf("deleted pod %s", l.state)
	}
	b := addAdmissionPod(p, "b", "1")
	if stop, _ := admit(p, b); !stop {
		t.Error("b admitted while a terminates")
	}
	if err := a.transition(lifecycleChange{to: podTerminated}); err != nil {
		t.Fatal(err)
	}
	c := addAdmissionPod(p, "c", "1")
	if stop, _ := admit(p, c); stop {
		t.Errorf("c refused next to finished a: %+v", c.view().Status)
	}
}

// After a restart, a pod found in the runtime and not yet known from the API holds resources
// nobody can count: admission waits for it.
func TestAdmissionWaitsForUnclaimedPods(t *testing.T) {
	p, events := admissionProvider(t)
	p.pods.add(newPodRecord(podIdentity{Namespace: "default", Name: "old", UID: "uid-old"}, nil))
	b := addAdmissionPod(p, "b", "1")
	stop, retry := admit(p, b)
	if !stop || retry != admissionRetry {
		t.Errorf("stop %v, retry %v: want to wait %v", stop, retry, admissionRetry)
	}
	if st := b.view().Status; st.Phase != "" {
		t.Errorf("waiting pod has status %+v", st)
	}
	if len(events.Events) != 0 {
		t.Errorf("events while waiting: %v", <-events.Events)
	}
}

// The API's node is what admission checks against: a label added there admits a pod the
// described node would refuse.
func TestAdmissionUsesTheAPINode(t *testing.T) {
	p, _ := admissionProvider(t)
	api := admissionTestNode()
	api.Labels["disk"] = "ssd"
	p.cfg.Node = fakeNodeSource{node: api}
	r := addAdmissionPod(p, "a", "100m")
	r.pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	if stop, _ := admit(p, r); stop {
		t.Errorf("refused: %+v", r.view().Status)
	}
	// Without the API's node, the described one is used.
	p.cfg.Node = fakeNodeSource{}
	r2 := addAdmissionPod(p, "b", "100m")
	r2.pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	if stop, _ := admit(p, r2); !stop || !strings.HasPrefix(r2.view().Status.Message, "Pod was rejected: Predicate NodeAffinity failed") {
		t.Errorf("stop %v, status %+v: want NodeAffinity", stop, r2.view().Status)
	}
}

type fakeNodeSource struct{ node *v1.Node }

func (f fakeNodeSource) Node(context.Context, bool) (*v1.Node, error) {
	if f.node == nil {
		return nil, errors.New("node not found")
	}
	return f.node, nil
}
