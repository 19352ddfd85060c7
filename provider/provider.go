// Package provider is vk-cri's virtual-kubelet provider: it runs the pods bound to its node on
// a CRI runtime, the way the kubelet does.
package provider

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/prober"
	"github.com/vk-cri/vk-cri/provider/status"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// Config is what the provider needs to know about its node.
type Config struct {
	NodeName string
	// NodeIPs are the node's InternalIP addresses, reported as the pods' host IPs.
	NodeIPs    []string
	PodLogRoot string
	CgroupRoot string
	// CgroupDriver is the runtime's cgroup driver, which the sandboxes' cgroup parents are
	// named for (cgroupfs when empty).
	CgroupDriver cm.Driver
	// ResolvConf is the file whose nameservers, search domains and options pods get.
	ResolvConf string
	// ClusterDNS are the cluster DNS service's IPs that ClusterFirst pods resolve through; none
	// makes ClusterFirst fall back to the node's resolv.conf (with a MissingClusterDNS event).
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain (cluster.local).
	ClusterDomain string
	// RootDir holds vk-cri's per-pod files (<root>/pods/<uid>/etc-hosts, the termination
	// message files under pods/<uid>/containers) and seccomp profiles.
	RootDir string
	// Objects gives the ConfigMaps, Secrets and services containers refer to; without it,
	// references cannot be resolved.
	Objects ObjectSource
	// AllowedUnsafeSysctls are the unsafe sysctls (or prefixes ending in '*') pods may set
	// besides the safe ones; checked by ValidateSysctlPatterns.
	AllowedUnsafeSysctls []string
	// SerializeImagePulls pulls one image at a time; otherwise up to MaxParallelImagePulls
	// (0: any number) at once.
	SerializeImagePulls   bool
	MaxParallelImagePulls int
	// RelistPeriod is how often the runtime is listed to notice container changes.
	RelistPeriod time.Duration
	// ResyncPeriod is how often a pod with nothing pending is looked at anyway.
	ResyncPeriod time.Duration
	// Pods, when set, lets vk-cri remove a terminated pod from the API at once, as the kubelet
	// does, instead of virtual-kubelet's removal at the end of the grace period.
	Pods corev1client.PodsGetter
	// Stats, when set, serves /stats/summary and /metrics/resource.
	Stats SummarySource
	// Volumes sets up pod volumes; without it a pod with volumes waits with FailedMount events.
	Volumes VolumeManager
	// Metrics receives pod worker durations, pod start times and runtime counts; nil: none.
	Metrics PodMetrics
	// PressureAdmission, when set, refuses new pods while the node is under pressure.
	PressureAdmission PressureAdmission
	// Node, when set, gives the Node object as the API has it, which admission checks pods
	// against (labels, taints, allocatable); without it, the node as vk-cri describes it.
	Node NodeSource
	// PodCgroups, when set, keeps the kubepods, QoS and pod cgroups with the kubelet's limits
	// (pod_cgroups.go); NodeAllocatableCgroup is what kubepods gets, PodCgroupOptions the
	// settings pod cgroups depend on.
	PodCgroups            PodCgroups
	NodeAllocatableCgroup *cm.ResourceConfig
	PodCgroupOptions      cm.PodOptions
	// RuntimeClasses resolves pods' runtimeClassName to a runtime handler; without it every
	// pod runs with the runtime's default handler (as a kubelet without a RuntimeClass manager).
	RuntimeClasses RuntimeHandlerResolver
}

// Provider runs pods on a CRI runtime.
type Provider struct {
	cfg       Config
	rt        *cri.Client
	inspector *inspector
	recorder  record.EventRecorder
	log       *logrus.Entry
	pods      *podStore
	restarts  flowBackoff
	pulls     flowBackoff
	dns       translate.DNSSource
	probes    probeManager
	hooks     *hookRunner
	// runtime is what the pod workers sync and terminate pods with (the inspector and the CRI
	// runtime service, behind a narrow interface).
	runtime podRuntimeService
	// alloc holds the resources allocated to and applied to each pod's containers.
	alloc *allocationStore
	// deletor removes surplus dead container instances off the pod workers.
	deletor *containerDeletor
	// userns hands out the ID ranges of pods with user namespaces of their own.
	userns *usernsAllocator
	// caps are the runtime handlers and features the runtime last reported.
	caps atomic.Pointer[translate.RuntimeCapabilities]

	// capacity is the node's memory and allocatable, set once the host has been read.
	capacity atomic.Pointer[nodeCapacity]
	// describedNode is the node as vk-cri registers it; admitMu makes admissions one at a
	// time (admission.go).
	describedNode atomic.Pointer[v1.Node]
	admitMu       sync.Mutex
	// relists is when the relister last listed the runtime: it paces the pod workers as the
	// kubelet's PLEG paces its own (cadence.go) and is what the syncloop health check reads.
	relists     *relistClock
	maskedPaths []string
	podCgroups  podCgroupModel
	sysctls     sysctlPolicy
	pullSlots   chan struct{} // nil: pulls are not limited

	notifyMu sync.RWMutex
	notify   func(*v1.Pod)

	// runCtx is the context workers run in; set by Start.
	runCtx context.Context
}

// NodeAllocatable returns the node's allocatable resources (nil before the node is described):
// what memory-backed volumes and resourceFieldRef default to without limits.
func (p *Provider) NodeAllocatable() v1.ResourceList {
	_, allocatable := p.currentNodeFacts()
	return allocatable
}

// New builds a provider on a connected runtime. Start must be called before the node runs.
func New(cfg Config, rt *cri.Client, recorder record.EventRecorder, log *logrus.Entry) *Provider {
	if cfg.RelistPeriod <= 0 {
		cfg.RelistPeriod = time.Second
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = 10 * time.Second
	}
	if cfg.PodLogRoot == "" {
		cfg.PodLogRoot = "/var/log/pods"
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/"
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	sysctls, err := newSysctlPolicy(cfg.AllowedUnsafeSysctls)
	if err != nil {
		log.WithError(err).Warn("--allowed-unsafe-sysctls ignored")
		sysctls, _ = newSysctlPolicy(nil)
	}
	if cfg.RootDir == "" {
		cfg.RootDir = "/var/lib/vk-cri"
	}
	p := &Provider{
		cfg:       cfg,
		rt:        rt,
		inspector: newInspector(rt, cfg.NodeName),
		recorder:  recorder,
		log:       log.WithField("node", cfg.NodeName),
		pods:      newPodStore(),
		restarts:  newFlowBackoff(),
		pulls:     newFlowBackoff(),
		dns: translate.DNSSource{
			Path:          cfg.ResolvConf,
			ClusterDNS:    cfg.ClusterDNS,
			ClusterDomain: cfg.ClusterDomain,
			NodeIPs:       cfg.NodeIPs,
		},
		maskedPaths: hostMaskedPaths(),
		podCgroups:  hostPodCgroupModel(),
		sysctls:     sysctls,
		pullSlots:   pullSlots(cfg.SerializeImagePulls, cfg.MaxParallelImagePulls),
		relists:     newRelistClock(),
		alloc:       newAllocationStore(filepath.Join(cfg.RootDir, allocationFile)),
		userns:      newUsernsAllocator(filepath.Join(cfg.RootDir, "pods"), rand.IntN),
	}
	p.runtime = criPodRuntime{inspector: p.inspector, RuntimeService: rt.Runtime}
	// Each removal within the kubelet's default --runtime-request-timeout (2m).
	p.deletor = newContainerDeletor(p.runtime.RemoveContainer, 2*time.Minute)
	p.probes = prober.NewManager(context.Background(), p.lastStatus, rt.Runtime,
		prober.WithEvents(p.probeEvent),
		prober.WithUpdates(p.probeVerdictChanged),
		prober.WithExecCommand(probeCommand),
		prober.WithRestartPolicy(func(c *v1.Container, pod *v1.Pod, exitCode int32) bool {
			return podspec.ShouldRestart(c, pod, exitCode)
		}),
	)
	p.hooks = p.newHookRunner()
	return p
}

// Start adopts the pods this node already runs (after a restart of vk-cri) and starts the
// relister. It returns once the runtime's current pods are known, so that the pod controller
// that runs next finds them instead of creating them again.
func (p *Provider) Start(ctx context.Context) error {
	p.runCtx = ctx
	lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	listed := time.Now()
	pods, ids, err := p.inspector.listAll(lctx)
	if err != nil {
		return fmt.Errorf("listing this node's pods in the runtime: %w", err)
	}
	p.relists.completed(listed)
	if err := p.alloc.load(); err != nil {
		return err
	}
	live := map[types.UID]bool{}
	for uid := range pods {
		live[types.UID(uid)] = true
	}
	if err := p.alloc.keepOnly(live); err != nil {
		p.log.WithError(err).Warn("forgetting the allocations of pods gone meanwhile")
	}
	p.cleanupOrphanedVolumes(ids)
	if err := p.userns.load(func(uid types.UID) bool { return live[uid] }); err != nil {
		return err
	}
	// The pods' workers need the runtime's handlers (user namespaces, recursive read-only
	// mounts) from their first sync, as the kubelet syncs pods only once the runtime is up.
	if err := p.readRuntimeStatus(lctx); err != nil {
		p.log.WithError(err).Warn("runtime status at start")
	}
	if err := p.startPodCgroups(ctx); err != nil {
		return err
	}
	for uid := range pods {
		rec, _ := p.pods.add(newPodRecord(ids[uid], nil))
		p.startWorker(rec)
	}
	p.log.WithField("pods", len(pods)).Info("found this node's pods in the runtime")
	go p.deletor.run(ctx)
	go p.relistLoop(ctx, pods)
	return nil
}

// NotifyPods registers the callback that carries status changes to the API server.
func (p *Provider) NotifyPods(_ context.Context, cb func(*v1.Pod)) {
	p.notifyMu.Lock()
	p.notify = cb
	p.notifyMu.Unlock()
}

func (p *Provider) publish(pod *v1.Pod) {
	p.notifyMu.RLock()
	cb := p.notify
	p.notifyMu.RUnlock()
	if cb != nil {
		cb(pod)
	}
}

func (p *Provider) podLog(pod *v1.Pod) *logrus.Entry {
	return p.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "uid": pod.UID})
}

// CreatePod accepts a pod bound to this node; its worker starts it asynchronously.
func (p *Provider) CreatePod(_ context.Context, pod *v1.Pod) error {
	p.accept(pod)
	return nil
}

// UpdatePod takes a new version of a pod's spec. A pod recreated under the same name has a new
// UID: that is a new pod, and the old one is torn down.
func (p *Provider) UpdatePod(_ context.Context, pod *v1.Pod) error {
	p.accept(pod)
	return nil
}

func (p *Provider) accept(pod *v1.Pod) {
	pod = pod.DeepCopy()
	id := podIdentity{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}
	// The API holds one pod per name: any other UID under this name is gone from it.
	for _, old := range p.pods.byName(pod.Namespace, pod.Name) {
		if old.uid != pod.UID {
			p.requestDeletion(old, nil)
		}
	}
	rec, added := p.pods.add(newPodRecord(id, pod))
	if added {
		p.podLog(pod).Info("pod accepted")
		p.startWorker(rec)
		return
	}
	rec.mu.Lock()
	if rec.pod == nil {
		// A pod found in the runtime at start-up, now claimed by the API: its last status there
		// is where reporting resumes.
		rec.status = pod.Status.DeepCopy()
		rec.apiConditions = status.ForeignConditions(pod.Status.Conditions)
		// A pod that finished before vk-cri restarted never runs again.
		rec.claimedTerminal(pod)
	}
	claimed := rec.pod == nil
	rec.pod = pod
	rec.mu.Unlock()
	rec.poke()
	if claimed {
		// Its resources are known now: resizes that waited for that are evaluated.
		p.retryPendingResizes()
	}
}

// ObserveAPIStatus takes the pod's status as the API holds it after someone changed it. vk-cri
// keeps the conditions it does not own as they are there; when the pod has readiness gates, its
// worker syncs at once so that Ready follows them, as the kubelet reconciles readiness. Of a
// finished pod, whose updates virtual-kubelet does not pass on, it takes the ephemeral containers.
//
// A pod the API has just marked deleted is terminated from here, as the kubelet begins the
// termination on the watch event that carries the deletion timestamp: this event comes before
// the pod's removal even when it is deleted with grace 0, while virtual-kubelet's pod controller
// may act on the deletion only once the pod is gone from its cache.
func (p *Provider) ObserveAPIStatus(pod *v1.Pod) {
	rec, ok := p.pods.get(pod.UID)
	if !ok {
		return
	}
	rec.mu.Lock()
	deleted := newDeletion(pod, rec.lifecycle.deletion)
	rec.mu.Unlock()
	if deleted {
		p.requestDeletion(rec, pod)
	}
	adoptEphemeralSpec(rec, pod)
	foreign := status.ForeignConditions(pod.Status.Conditions)
	rec.mu.Lock()
	changed := !equality.Semantic.DeepEqual(rec.apiConditions, foreign)
	rec.apiConditions = foreign
	gated := rec.pod != nil && len(rec.pod.Spec.ReadinessGates) > 0
	rec.mu.Unlock()
	if changed && gated {
		rec.poke()
	}
}

// DeletePod stops the pod's containers within its grace period and removes them and the
// sandbox; the worker then reports every container terminated.
func (p *Provider) DeletePod(_ context.Context, pod *v1.Pod) error {
	rec, ok := p.pods.get(pod.UID)
	if !ok {
		// virtual-kubelet may hand us a pod by name only (a dangling pod found by GetPods).
		for _, r := range p.pods.byName(pod.Namespace, pod.Name) {
			p.requestDeletion(r, pod)
			ok = true
		}
		if !ok {
			return errdefs.NotFoundf("pod %s/%s (%s) is not on this node", pod.Namespace, pod.Name, pod.UID)
		}
		return nil
	}
	p.requestDeletion(rec, pod)
	return nil
}

// TakeOverRemoval lets vk-cri end the life in the API of a pod it runs: given the API's pod (with
// its deletion timestamp), it starts the termination if it has not started yet and reports
// whether vk-cri will delete the pod from the API itself once its containers have stopped, as
// the kubelet does. virtual-kubelet asks before force-deleting a pod.
func (p *Provider) TakeOverRemoval(pod *v1.Pod) bool {
	if p.cfg.Pods == nil || pod.DeletionTimestamp == nil {
		return false
	}
	rec, ok := p.pods.get(pod.UID)
	if !ok {
		return false
	}
	p.requestDeletion(rec, pod)
	return true
}

func (p *Provider) requestDeletion(rec *podRecord, pod *v1.Pod) {
	rec.mu.Lock()
	req := deletionRequest{Spec: rec.pod, Deleted: pod}
	rec.lifecycle.requestDeletion(req, req.gracePeriod())
	if rec.cancelSync != nil {
		rec.cancelSync()
	}
	rec.mu.Unlock()
	rec.poke()
}

// GetPod returns the pod of that name on this node, preferring one that is not being deleted.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	var found *podRecord
	for _, r := range p.pods.byName(namespace, name) {
		deleting := r.lifecycleNow().deletion != nil
		if found == nil || !deleting {
			found = r
		}
	}
	if found == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, name)
	}
	return found.view(), nil
}

// GetPodStatus returns the status last computed for the pod.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*v1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns every pod this node runs, including pods found in the runtime that the API
// has not claimed (virtual-kubelet deletes those).
func (p *Provider) GetPods(context.Context) ([]*v1.Pod, error) {
	recs := p.pods.list()
	out := make([]*v1.Pod, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.view())
	}
	return out, nil
}
