package gc

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-cri/vk-cri/cri"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const owner = "vk-gc"

func ctr(id, uid, sandbox, name string, state runtimeapi.ContainerState, created time.Time) *runtimeapi.Container {
	return &runtimeapi.Container{Id: id, PodSandboxId: sandbox, State: state, CreatedAt: created.UnixNano(),
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Labels:   map[string]string{cri.PodUIDLabel: uid, cri.ContainerNameLabel: name, cri.OwnerLabel: owner}}
}

func sbx(id, uid string, state runtimeapi.PodSandboxState, created time.Time) *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{Id: id, State: state, CreatedAt: created.UnixNano(),
		Metadata: &runtimeapi.PodSandboxMetadata{Uid: uid, Name: "p-" + uid, Namespace: "ns"},
		Labels:   map[string]string{cri.PodUIDLabel: uid, cri.OwnerLabel: owner}}
}

func ids(cs []DeadContainer) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

const (
	exited  = runtimeapi.ContainerState_CONTAINER_EXITED
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	created = runtimeapi.ContainerState_CONTAINER_CREATED
	unknown = runtimeapi.ContainerState_CONTAINER_UNKNOWN
	ready   = runtimeapi.PodSandboxState_SANDBOX_READY
	notRdy  = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
)

func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

func TestPlanContainersDefaultPolicy(t *testing.T) {
	pods := fakePods{known: map[types.UID]bool{"live": true, "done": true}, terminated: map[types.UID]bool{"done": true}}
	containers := []*runtimeapi.Container{
		// A crash-looping container: three dead instances and a running one; only the newest
		// dead one stays.
		ctr("app-1", "live", "s-live", "app", exited, at(1)),
		ctr("app-3", "live", "s-live", "app", exited, at(3)),
		ctr("app-2", "live", "s-live", "app", unknown, at(2)),
		ctr("app-4", "live", "s-live", "app", running, at(4)),
		// Another container of the same pod is its own unit.
		ctr("side-1", "live", "s-live", "side", exited, at(1)),
		// A terminated pod that still exists keeps one dead instance of each container.
		ctr("done-1", "done", "s-done", "app", exited, at(1)),
		ctr("done-2", "done", "s-done", "app", exited, at(2)),
		// A pod that is gone loses everything not running.
		ctr("gone-1", "gone", "s-gone", "app", exited, at(1)),
		ctr("gone-2", "gone", "s-gone", "app", created, at(2)),
	}
	sandboxes := []*runtimeapi.PodSandbox{
		sbx("s-live-old", "live", notRdy, at(0)),
		sbx("s-live", "live", ready, at(1)),
		sbx("s-done", "done", notRdy, at(1)),
		sbx("s-done-old", "done", notRdy, at(0)),
		sbx("s-gone", "gone", notRdy, at(1)),
		sbx("s-gone-old", "gone", notRdy, at(0)),
	}
	plan := PlanContainers(at(10), DefaultContainerPolicy(), containers, sandboxes, pods, false)
	wantContainers := []string{"gone-2", "gone-1", "done-1", "app-2", "app-1"}
	if got := ids(plan.Containers); !reflect.DeepEqual(got, wantContainers) {
		t.Errorf("containers to remove: got %v, want %v", got, wantContainers)
	}
	for _, c := range plan.Containers {
		if c.Unknown != (c.ID == "app-2") {
			t.Errorf("container %s: unknown %v", c.ID, c.Unknown)
		}
	}
	// s-done still has done-2, so it stays; of the live pod the newest stays, the older goes.
	wantSandboxes := []string{"s-done-old", "s-gone", "s-gone-old", "s-live-old"}
	if !reflect.DeepEqual(plan.Sandboxes, wantSandboxes) {
		t.Errorf("sandboxes to remove: got %v, want %v", plan.Sandboxes, wantSandboxes)
	}
	if !reflect.DeepEqual(plan.LogDirs, []types.UID{"gone"}) {
		t.Errorf("log dirs: got %v, want [gone]", plan.LogDirs)
	}

	// Under disk pressure (evictNonDeletedPods) a terminated pod's dead containers go too,
	// and then its sandboxes; its logs stay while the pod exists.
	plan = PlanContainers(at(10), DefaultContainerPolicy(), containers, sandboxes, pods, true)
	if got := ids(plan.Containers); !reflect.DeepEqual(got, []string{"done-2", "done-1", "gone-2", "gone-1", "app-2", "app-1"}) {
		t.Errorf("reclaim: containers to remove: got %v", got)
	}
	if !reflect.DeepEqual(plan.Sandboxes, []string{"s-done", "s-done-old", "s-gone", "s-gone-old", "s-live-old"}) {
		t.Errorf("reclaim: sandboxes to remove: got %v", plan.Sandboxes)
	}
	if !reflect.DeepEqual(plan.LogDirs, []types.UID{"gone"}) {
		t.Errorf("reclaim: log dirs: got %v, want [gone]", plan.LogDirs)
	}
}

func TestPlanContainersMinAgeAndLimits(t *testing.T) {
	pods := fakePods{known: map[types.UID]bool{"a": true, "b": true}}
	containers := []*runtimeapi.Container{
		ctr("a-1", "a", "sa", "c", exited, at(1)),
		ctr("a-2", "a", "sa", "c", exited, at(2)),
		ctr("a-3", "a", "sa", "c", exited, at(3)),
		ctr("b-1", "b", "sb", "c", exited, at(4)),
		ctr("b-2", "b", "sb", "c", exited, at(5)),
		ctr("b-9", "b", "sb", "c", exited, at(9)), // younger than MinAge
	}
	// MinAge: the youngest is not looked at; MaxPerPodContainer -1: no per-unit limit;
	// MaxContainers 3: each of the 2 units keeps 3/2 = 1, then 2 ≤ 3 remain.
	p := ContainerPolicy{MinAge: 2 * time.Minute, MaxPerPodContainer: -1, MaxContainers: 3}
	plan := PlanContainers(at(10), p, containers, nil, pods, false)
	if got := ids(plan.Containers); !reflect.DeepEqual(got, []string{"a-2", "a-1", "b-1"}) {
		t.Errorf("MaxContainers 3: got %v", got)
	}
	// MaxContainers 1 with 2 units: each keeps 1, then the older of the two goes.
	p.MaxContainers = 1
	plan = PlanContainers(at(10), p, containers, nil, pods, false)
	if got := ids(plan.Containers); !reflect.DeepEqual(got, []string{"a-2", "a-1", "b-1", "a-3"}) {
		t.Errorf("MaxContainers 1: got %v", got)
	}
	// No limits: nothing of known pods goes.
	plan = PlanContainers(at(10), ContainerPolicy{MaxPerPodContainer: -1, MaxContainers: -1}, containers, nil, pods, false)
	if len(plan.Containers) != 0 {
		t.Errorf("no limits: got %v", ids(plan.Containers))
	}
}

func TestContainerGCExecutes(t *testing.T) {
	rt := newFakeRuntime()
	logRoot := t.TempDir()
	goneDir := filepath.Join(logRoot, "ns_gone-pod_gone")
	liveDir := filepath.Join(logRoot, "ns_live-pod_live")
	otherDir := filepath.Join(logRoot, "ns_other_someone-elses")
	for _, d := range []string{goneDir + "/app", liveDir + "/app", otherDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	oldLog := filepath.Join(liveDir, "app", "0.log")
	if err := os.WriteFile(oldLog, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	add := func(c *runtimeapi.Container) { rt.containers[c.Id] = c }
	add(ctr("live-0", "live", "s-live", "app", exited, at(0)))
	add(ctr("live-1", "live", "s-live", "app", unknown, at(1)))
	add(ctr("live-2", "live", "s-live", "app", exited, at(2)))
	add(ctr("gone-0", "gone", "s-gone", "app", exited, at(0)))
	foreign := ctr("foreign", "other", "s-other", "app", exited, at(0))
	foreign.Labels[cri.OwnerLabel] = "another-node"
	add(foreign)
	rt.logPaths["live-0"] = oldLog
	rt.sandboxes["s-live"] = sbx("s-live", "live", ready, at(0))
	rt.sandboxes["s-gone"] = sbx("s-gone", "gone", notRdy, at(0))
	rt.failRemove["live-1"] = true

	g := NewContainerGC(ContainerGCConfig{Policy: DefaultContainerPolicy(), Owner: owner, PodLogRoot: logRoot,
		Clock: clocktesting.NewFakePassiveClock(at(10))}, rt, fakePods{known: map[types.UID]bool{"live": true}},
		logrus.NewEntry(logrus.New()))
	err := g.GarbageCollect(context.Background(), false)
	if err == nil || !strings.Contains(err.Error(), "removing container live-1") {
		t.Errorf("a failed removal is reported: got %v", err)
	}
	wantCalls := []string{"RemoveContainer gone-0", "StopContainer live-1", "RemoveContainer live-1",
		"RemoveContainer live-0", "StopPodSandbox s-gone", "RemovePodSandbox s-gone"}
	if !reflect.DeepEqual(rt.calls, wantCalls) {
		t.Errorf("calls:\n got %v\nwant %v", rt.calls, wantCalls)
	}
	if _, ok := rt.containers["foreign"]; !ok {
		t.Error("another node's container was removed")
	}
	if _, err := os.Stat(oldLog); !os.IsNotExist(err) {
		t.Errorf("the removed container's log file is still there: %v", err)
	}
	if _, err := os.Stat(goneDir); !os.IsNotExist(err) {
		t.Errorf("the gone pod's log directory is still there: %v", err)
	}
	for _, d := range []string{liveDir, otherDir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s should stay: %v", d, err)
		}
	}
}
