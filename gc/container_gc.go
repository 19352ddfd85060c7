package gc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/vk-cri/vk-cri/cri"
)

// ContainerRuntime is the part of the CRI runtime service container GC uses
// (internalapi.RuntimeService has it).
type ContainerRuntime interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	RemoveContainer(ctx context.Context, containerID string) error
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
}

// ContainerGC removes this node's dead containers and sandboxes from the runtime.
type ContainerGC struct {
	runtime ContainerRuntime
	pods    PodStates
	policy  ContainerPolicy
	// owner is this node's name, the value of cri.OwnerLabel on what it created.
	owner string
	// podLogRoot holds the pods' log directories, <namespace>_<name>_<uid>.
	podLogRoot  string
	callTimeout time.Duration
	clock       clock.PassiveClock
	log         *logrus.Entry
}

// ContainerGCConfig configures a ContainerGC.
type ContainerGCConfig struct {
	Policy      ContainerPolicy
	Owner       string
	PodLogRoot  string
	CallTimeout time.Duration
	Clock       clock.PassiveClock
}

// NewContainerGC builds a container collector.
func NewContainerGC(cfg ContainerGCConfig, runtime ContainerRuntime, pods PodStates, log *logrus.Entry) *ContainerGC {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	return &ContainerGC{runtime: runtime, pods: pods, policy: cfg.Policy, owner: cfg.Owner,
		podLogRoot: cfg.PodLogRoot, callTimeout: cfg.CallTimeout, clock: cfg.Clock, log: log}
}

// GarbageCollect runs one pass (the kubelet's containerGC.GarbageCollect). With
// evictNonDeletedPods, the dead containers of terminated pods that still exist go too (the
// eviction manager's DeleteAllUnusedContainers). Every removal is tried; the errors are joined.
func (g *ContainerGC) GarbageCollect(ctx context.Context, evictNonDeletedPods bool) error {
	owned := map[string]string{cri.OwnerLabel: g.owner}
	lctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	containers, err := g.runtime.ListContainers(lctx, &runtimeapi.ContainerFilter{LabelSelector: owned})
	cancel()
	if err != nil {
		return fmt.Errorf("container GC: listing containers: %w", err)
	}
	lctx, cancel = context.WithTimeout(ctx, g.callTimeout)
	sandboxes, err := g.runtime.ListPodSandbox(lctx, &runtimeapi.PodSandboxFilter{LabelSelector: owned})
	cancel()
	if err != nil {
		return fmt.Errorf("container GC: listing pod sandboxes: %w", err)
	}
	plan := PlanContainers(g.clock.Now(), g.policy, containers, sandboxes, g.pods, evictNonDeletedPods)
	return g.execute(ctx, plan)
}

func (g *ContainerGC) execute(ctx context.Context, plan ContainerPlan) error {
	var errs []error
	for _, c := range plan.Containers {
		if err := g.removeContainer(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range plan.Sandboxes {
		if err := g.removeSandbox(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := g.removeLogDirs(plan.LogDirs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeContainer stops an unknown container, removes the container's log file (the kubelet's
// removeContainerLog) and the container.
func (g *ContainerGC) removeContainer(ctx context.Context, c DeadContainer) error {
	log := g.log.WithFields(logrus.Fields{"podUID": c.PodUID, "container": c.Name, "containerID": c.ID})
	cctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	defer cancel()
	if c.Unknown {
		if err := cri.IgnoreNotFound(g.runtime.StopContainer(cctx, c.ID, 0)); err != nil {
			return fmt.Errorf("stopping container %s (unknown state) before removal: %w", c.ID, err)
		}
	}
	st, err := g.runtime.ContainerStatus(cctx, c.ID, false)
	if err != nil && !cri.IsNotFound(err) {
		return fmt.Errorf("reading container %s before removal: %w", c.ID, err)
	}
	if p := st.GetStatus().GetLogPath(); p != "" {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the log of container %s: %w", c.ID, err)
		}
	}
	if err := cri.IgnoreNotFound(g.runtime.RemoveContainer(cctx, c.ID)); err != nil {
		return fmt.Errorf("removing container %s: %w", c.ID, err)
	}
	log.Debug("container GC: dead container removed")
	return nil
}

func (g *ContainerGC) removeSandbox(ctx context.Context, id string) error {
	cctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	defer cancel()
	if err := cri.IgnoreNotFound(g.runtime.StopPodSandbox(cctx, id)); err != nil {
		return fmt.Errorf("stopping pod sandbox %s before removal: %w", id, err)
	}
	if err := cri.IgnoreNotFound(g.runtime.RemovePodSandbox(cctx, id)); err != nil {
		return fmt.Errorf("removing pod sandbox %s: %w", id, err)
	}
	g.log.WithField("podSandboxID", id).Debug("container GC: inactive sandbox removed")
	return nil
}

// removeLogDirs removes the log directories of the given pods. Unlike the kubelet, which
// removes every directory of a pod it does not know, it only removes those of pods this node
// had runtime objects of: the log root may be shared with other nodes.
func (g *ContainerGC) removeLogDirs(uids []types.UID) error {
	if len(uids) == 0 || g.podLogRoot == "" {
		return nil
	}
	want := map[types.UID]bool{}
	for _, uid := range uids {
		want[uid] = true
	}
	entries, err := os.ReadDir(g.podLogRoot)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("container GC: reading %s: %w", g.podLogRoot, err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !want[podUIDOfLogDir(e.Name())] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(g.podLogRoot, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("removing pod log directory %s: %w", e.Name(), err))
			continue
		}
		g.log.WithField("podUID", podUIDOfLogDir(e.Name())).Debug("container GC: pod log directory removed")
	}
	return errors.Join(errs...)
}

// podUIDOfLogDir is the pod UID of a log directory named <namespace>_<name>_<uid> (the
// kubelet's parsePodUIDFromLogsDirectory).
func podUIDOfLogDir(name string) types.UID {
	i := strings.LastIndex(name, "_")
	if i < 0 {
		return ""
	}
	return types.UID(name[i+1:])
}
