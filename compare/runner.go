package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Runner runs scenarios on two nodes of a live cluster.
type Runner struct {
	Client kubernetes.Interface
	Config *rest.Config // for exec
	NodeA  string
	NodeB  string
	// Settle is how long to let events reach the API server before collecting them.
	Settle time.Duration
	// CollectTimeout bounds the collection after the steps (logs, events).
	CollectTimeout time.Duration
	// KeepNamespaces leaves the namespaces behind, for debugging.
	KeepNamespaces bool
	Log            logrus.FieldLogger
	// Baseline, when set, holds node B's recorded records by scenario ID (BaselineOf): only
	// node A runs, and is compared with them.
	Baseline map[string]*ScenarioResult
	// ImageRegistry is the registry the scenarios were retargeted to (RetargetImages), if any.
	ImageRegistry string
	// RecordRuns, when positive, makes RunAll record the scenarios on node B alone, this many
	// runs each (compare record), instead of comparing.
	RecordRuns int
}

// RunOptions select and report scenarios.
type RunOptions struct {
	// Run is a regular expression matched against "category/name"; empty runs all.
	Run *regexp.Regexp
	// OnlyMatching skips scenarios marked known.
	OnlyMatching bool
	// Parallel is how many scenarios run at once (each on both nodes).
	Parallel int
	// Report receives each scenario's outcome as it completes, in scenario order.
	Report io.Writer
	// Retries is how many more times a scenario that differs (or could not run) is run before
	// its outcome stands. Both nodes race with themselves in places (the kubelet's own status
	// writes do), so one run of a scenario can differ where the next matches; the earlier
	// attempts stay in the result and the report.
	Retries int
}

// Select returns the scenarios --run selects.
func Select(all []*Scenario, run *regexp.Regexp) []*Scenario {
	var out []*Scenario
	for _, s := range all {
		if run == nil || run.MatchString(s.ID()) {
			out = append(out, s)
		}
	}
	return out
}

// CheckNodes fails when a node that runs scenarios does not exist and warns when it is not
// Ready: both nodes, node A alone against a baseline, node B alone when recording.
func (r *Runner) CheckNodes(ctx context.Context) error {
	nodes := []string{r.NodeA, r.NodeB}
	switch {
	case r.RecordRuns > 0:
		nodes = []string{r.NodeB}
	case r.Baseline != nil:
		nodes = []string{r.NodeA}
	}
	for _, n := range nodes {
		node, err := r.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("node %s: %w", n, err)
		}
		ready := false
		for _, c := range node.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			r.log().Warnf("node %s is not Ready: its pods may never start", n)
		}
	}
	if len(nodes) == 2 && r.NodeA == r.NodeB {
		r.log().Warnf("--node-a and --node-b are the same node %s", r.NodeA)
	}
	return nil
}

func (r *Runner) log() logrus.FieldLogger {
	if r.Log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		r.Log = l
	}
	return r.Log
}

// RunAll runs the scenarios, reports each as it completes (in order) and returns the result.
func (r *Runner) RunAll(ctx context.Context, scenarios []*Scenario, opts RunOptions, dir string) *Result {
	res := &Result{NodeA: r.NodeA, NodeB: r.NodeB, ScenarioDir: dir, OnlyMatching: opts.OnlyMatching, Started: time.Now().UTC()}
	if opts.Run != nil {
		res.Run = opts.Run.String()
	}
	if opts.Report != nil {
		switch {
		case r.RecordRuns > 0:
			fmt.Fprintf(opts.Report, "recording a baseline on node %s (%d runs of each scenario)\n", r.NodeB, r.RecordRuns)
		case r.Baseline != nil:
			fmt.Fprintf(opts.Report, "comparing A = node %s (lines -) with the baseline recorded on node %s (lines +)\n", r.NodeA, r.NodeB)
		default:
			PrintHeader(opts.Report, r.NodeA, r.NodeB)
		}
	}
	results := make([]*ScenarioResult, len(scenarios))
	done := make([]chan struct{}, len(scenarios))
	for i := range done {
		done[i] = make(chan struct{})
	}
	parallel := max(opts.Parallel, 1)
	sem := make(chan struct{}, parallel)
	go func() {
		for i, sc := range scenarios {
			if opts.OnlyMatching && sc.Known != nil {
				results[i] = skipped(sc)
				close(done[i])
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = interrupted(sc, ctx.Err())
				close(done[i])
				continue
			}
			go func() {
				defer func() { <-sem }()
				if r.RecordRuns > 0 {
					results[i] = r.recordScenario(ctx, sc, r.RecordRuns)
				} else {
					results[i] = r.runWithRetries(ctx, sc, opts.Retries)
				}
				close(done[i])
			}()
		}
	}()
	for i := range scenarios {
		<-done[i]
		if opts.Report != nil {
			PrintScenario(opts.Report, results[i])
		}
	}
	res.Scenarios = results
	res.Seconds = roundSeconds(time.Since(res.Started))
	res.Summarize()
	return res
}

// runWithRetries runs a scenario, and again while it differs or fails, up to retries more times.
// A run after the first is decided with the earlier runs' history (RunHistory).
func (r *Runner) runWithRetries(ctx context.Context, sc *Scenario, retries int) *ScenarioResult {
	res := r.RunScenario(ctx, sc)
	var earlier []Attempt
	for n := 0; n < retries && retryable(res.Status) && ctx.Err() == nil; n++ {
		earlier = append(earlier, attemptOf(res))
		r.log().WithFields(logrus.Fields{"scenario": sc.ID(), "status": res.Status, "attempt": n + 2}).Warn("running the scenario again")
		res = r.RunScenario(ctx, sc)
		// The reference node's own spread between the runs (and the baseline's runs) widens the
		// comparison of this one.
		hist := earlier
		if b, ok := r.Baseline[sc.ID()]; ok {
			hist = append(append([]Attempt{}, b.EarlierAttempts...), earlier...)
		}
		res.DecideWith(sc.Compare, historyOf(hist))
	}
	res.EarlierAttempts = earlier
	return res
}

func retryable(s Status) bool { return s == StatusDiffer || s == StatusError }

func interrupted(sc *Scenario, err error) *ScenarioResult {
	msg := "not run: " + err.Error()
	return &ScenarioResult{Name: sc.Name, Category: sc.Category, File: sc.File, Description: sc.Description, Known: sc.Known, Digest: sc.Digest,
		Status: StatusError, Diffs: []Diff{}, A: &SideRecord{Error: msg}, B: &SideRecord{Error: msg}}
}

func skipped(sc *Scenario) *ScenarioResult {
	return &ScenarioResult{Name: sc.Name, Category: sc.Category, File: sc.File, Description: sc.Description, Known: sc.Known, Digest: sc.Digest, Status: StatusSkipped, Diffs: []Diff{}}
}

// RunScenario runs one scenario on both nodes at once and compares the two records; with a
// Baseline, it runs node A alone and compares its record with the baseline's (baseline.go).
func (r *Runner) RunScenario(ctx context.Context, sc *Scenario) *ScenarioResult {
	var res *ScenarioResult
	if r.Baseline != nil {
		res = r.againstBaseline(ctx, sc)
	} else {
		res = r.runSides(ctx, sc, true, true)
		res.Decide(sc.Compare)
	}
	r.log().WithFields(logrus.Fields{"scenario": sc.ID(), "status": res.Status}).Infof("done in %.0fs", res.Seconds)
	return res
}

// NormalizeRecord applies NormalizeText to every text of a record.
func NormalizeRecord(rec *SideRecord, v Volatile) {
	n := func(s *string) { *s = NormalizeText(*s, v) }
	n(&rec.Error)
	for i := range rec.Objects {
		n(&rec.Objects[i])
	}
	for i := range rec.Steps {
		n(&rec.Steps[i].Result)
		if e := rec.Steps[i].Exec; e != nil {
			n(&e.Stdout)
			n(&e.Stderr)
			n(&e.Error)
		}
	}
	for _, p := range rec.Pods {
		n(&p.CreateError)
		for i := range p.Events {
			n(&p.Events[i].Message)
		}
		for _, l := range p.Logs {
			for _, r := range []*LogResult{l.Current, l.Previous} {
				if r != nil {
					n(&r.Text)
					n(&r.Error)
				}
			}
		}
	}
}

// barrier lets the two sides create their pods at the same moment: each arrives once its
// namespace is ready (or it failed), then waits for the other.
type barrier struct {
	once    [2]sync.Once
	arrived [2]chan struct{}
}

func newBarrier() *barrier {
	return &barrier{arrived: [2]chan struct{}{make(chan struct{}), make(chan struct{})}}
}

func (b *barrier) arrive(i int) { b.once[i].Do(func() { close(b.arrived[i]) }) }

func (b *barrier) waitOther(ctx context.Context, i int) {
	select {
	case <-b.arrived[1-i]:
	case <-ctx.Done():
	}
}

// side is one scenario run on one node.
type side struct {
	r      *Runner
	sc     *Scenario
	idx    int
	node   string
	ns     string
	log    logrus.FieldLogger
	rec    *SideRecord
	pods   *podTracker
	events *eventTracker
	uids   []string

	deleteAt map[string]time.Time
	grace    map[string]int64
	// preDeleteLogs are the logs read just before a delete step.
	preDeleteLogs map[string]map[string]*ContainerLogs
}

func (r *Runner) newSide(sc *Scenario, idx int, node string, log logrus.FieldLogger) *side {
	label := string(rune('a' + idx))
	prefix := sc.Name
	if max := 63 - len("cmp-") - len("-a-") - 5; len(prefix) > max {
		prefix = strings.TrimRight(prefix[:max], "-")
	}
	ns := fmt.Sprintf("cmp-%s-%s-%s", prefix, label, rand.String(5))
	s := &side{
		r: r, sc: sc, idx: idx, node: node, ns: ns,
		log:           log.WithFields(logrus.Fields{"side": strings.ToUpper(label), "node": node, "namespace": ns}),
		rec:           &SideRecord{Node: node, Namespace: ns, Steps: []StepRecord{}, Pods: map[string]*PodRecord{}},
		pods:          newPodTracker(sc.podNames()),
		events:        newEventTracker(),
		deleteAt:      map[string]time.Time{},
		grace:         map[string]int64{},
		preDeleteLogs: map[string]map[string]*ContainerLogs{},
	}
	for _, p := range sc.Pods {
		s.rec.Pods[p.Name] = &PodRecord{Timeline: []TimelineEntry{}, Events: []EventRecord{}}
	}
	return s
}

func (s *side) fail(format string, a ...any) {
	s.rec.Error = fmt.Sprintf(format, a...)
	s.log.Warn(s.rec.Error)
}

func (s *side) run(parent context.Context, bar *barrier) {
	defer bar.arrive(s.idx)
	deadline := time.Now().Add(s.sc.Timeout)
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	client := s.r.Client

	labelValue := s.sc.Name
	if len(labelValue) > 63 {
		labelValue = strings.TrimRight(labelValue[:63], "-")
	}
	_, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   s.ns,
		Labels: map[string]string{"vk-cri.io/compare": labelValue, "vk-cri.io/compare-side": string(rune('a' + s.idx))},
	}}, metav1.CreateOptions{})
	if err != nil {
		s.fail("creating namespace %s: %v", s.ns, err)
		return
	}
	defer s.deleteNamespace()

	// The watches live until collection is over, beyond the scenario's deadline.
	watchCtx, stopWatches := context.WithCancel(parent)
	defer stopWatches()
	watchesDone, err := startWatches(watchCtx, client, s.ns, s.pods, s.events)
	if err != nil {
		s.fail("%v", err)
		return
	}
	defer func() {
		stopWatches()
		<-watchesDone
	}()

	for _, obj := range s.sc.Objects {
		s.rec.Objects = append(s.rec.Objects, s.createObject(ctx, obj))
	}

	// Pods are admitted only once the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(s.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		s.fail("waiting for the default ServiceAccount of %s: %v", s.ns, err)
		return
	}

	bar.arrive(s.idx)
	bar.waitOther(ctx, s.idx)

	s.pods.setStart(time.Now())
	for _, p := range s.sc.Pods {
		pod := p.DeepCopy()
		pod.Namespace = s.ns
		pod.Spec.NodeName = s.node
		created, err := client.CoreV1().Pods(s.ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			s.rec.Pods[p.Name].CreateError = err.Error()
			continue
		}
		s.uids = append(s.uids, string(created.UID))
	}

	for i, st := range s.sc.Steps {
		s.rec.Steps = append(s.rec.Steps, s.runStep(ctx, i, st))
	}
	s.collect(parent, deadline)
}

func (s *side) createObject(ctx context.Context, obj runtime.Object) string {
	var err error
	core := s.r.Client.CoreV1()
	switch o := obj.DeepCopyObject().(type) {
	case *v1.ConfigMap:
		o.Namespace = s.ns
		_, err = core.ConfigMaps(s.ns).Create(ctx, o, metav1.CreateOptions{})
	case *v1.Secret:
		o.Namespace = s.ns
		_, err = core.Secrets(s.ns).Create(ctx, o, metav1.CreateOptions{})
	case *v1.Service:
		o.Namespace = s.ns
		_, err = core.Services(s.ns).Create(ctx, o, metav1.CreateOptions{})
	case *v1.PersistentVolumeClaim:
		o.Namespace = s.ns
		_, err = core.PersistentVolumeClaims(s.ns).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unsupported object %T", obj)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func (s *side) runStep(ctx context.Context, i int, st Step) (rec StepRecord) {
	rec = StepRecord{Step: st.String()}
	start := time.Now()
	defer func() {
		rec.Seconds = roundSeconds(time.Since(start))
		s.log.WithFields(logrus.Fields{"step": i, "result": rec.Result}).Debug(rec.Step)
	}()
	if ctx.Err() != nil {
		rec.Result = "skipped: scenario timeout"
		return rec
	}
	switch st.Kind {
	case StepWait:
		rec.Result = s.wait(ctx, st.Wait)
	case StepSleep:
		select {
		case <-time.After(st.Sleep):
			rec.Result = "ok"
		case <-ctx.Done():
			rec.Result = "cut short: scenario timeout"
		}
	case StepExec:
		rec.Result, rec.Exec = s.exec(ctx, st.Exec)
	case StepUpdate:
		var sub []string
		if st.Update.Subresource != "" {
			sub = []string{st.Update.Subresource}
		}
		_, err := s.r.Client.CoreV1().Pods(s.ns).Patch(ctx, st.Update.Pod, types.StrategicMergePatchType, st.Update.Patch, metav1.PatchOptions{}, sub...)
		rec.Result = resultOf(err)
	case StepDelete:
		rec.Result = s.delete(ctx, st.Delete)
	}
	return rec
}

func resultOf(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func (s *side) wait(ctx context.Context, w *WaitStep) string {
	timeout := w.Timeout
	if timeout == 0 {
		timeout = DefaultWaitTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	created := s.rec.Pods[w.Pod].CreateError == ""
	ok, why, _ := s.pods.until(wctx, w.Pod, func(tp trackedPod) (bool, string) {
		if !created {
			return false, "pod not created"
		}
		return evalWait(w.For, tp)
	})
	switch {
	case ok:
		return "ok"
	case why != "":
		return fmt.Sprintf("wait impossible: %s (%s)", w.For.Raw, why)
	}
	return "wait timed out: " + w.For.Raw
}

// evalWait decides a wait condition on what is known of a pod: done, or why it never can be.
func evalWait(w WaitFor, tp trackedPod) (bool, string) {
	if w.Kind == WaitDeleted {
		return tp.gone, ""
	}
	if tp.gone {
		return false, "pod deleted"
	}
	pod := tp.latest
	if pod == nil {
		return false, ""
	}
	phase := pod.Status.Phase
	terminal := phase == v1.PodSucceeded || phase == v1.PodFailed
	switch w.Kind {
	case WaitRunning, WaitSucceeded, WaitFailed:
		if string(phase) == string(w.Kind) {
			return true, ""
		}
		if terminal {
			return false, "pod " + string(phase)
		}
		return false, ""
	case WaitReady:
		return podCondition(pod, v1.PodReady) == v1.ConditionTrue, ""
	case WaitScheduled:
		return podCondition(pod, v1.PodScheduled) == v1.ConditionTrue, ""
	case WaitConditionKindValue:
		return string(podCondition(pod, v1.PodConditionType(w.Condition))) == w.Status, ""
	}
	cs := containerStatus(pod, w.Container)
	if cs == nil {
		return false, ""
	}
	switch w.Kind {
	case WaitContainerRunning:
		return cs.State.Running != nil, ""
	case WaitContainerTerm:
		return cs.State.Terminated != nil, ""
	case WaitRestarts:
		return cs.RestartCount >= w.Count, ""
	case WaitWaitingReason:
		return cs.State.Waiting != nil && cs.State.Waiting.Reason == w.Reason, ""
	case WaitTerminatedReason:
		return cs.State.Terminated != nil && cs.State.Terminated.Reason == w.Reason, ""
	}
	return false, "unknown wait"
}

func podCondition(pod *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func containerStatus(pod *v1.Pod, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func (s *side) exec(ctx context.Context, e *ExecStep) (string, *ExecRecord) {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultExecTimeout
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	container := e.Container
	if container == "" {
		container = s.sc.Pod(e.Pod).Spec.Containers[0].Name
	}
	rec := execInPod(ectx, s.r.Config, s.r.Client, s.ns, e.Pod, container, e.Command)
	if rec.Error != "" {
		return "error: exec failed", rec
	}
	return "ok", rec
}

func (s *side) delete(ctx context.Context, d *DeleteStep) string {
	tp, _ := s.pods.snapshot(d.Pod)
	grace := int64(v1.DefaultTerminationGracePeriodSeconds)
	if tp.latest != nil && tp.latest.Spec.TerminationGracePeriodSeconds != nil {
		grace = *tp.latest.Spec.TerminationGracePeriodSeconds
	}
	if d.GracePeriodSeconds != nil {
		grace = *d.GracePeriodSeconds
	}
	// Logs are unreachable once the pod is gone: read them now.
	if tp.latest != nil && !tp.gone {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s.preDeleteLogs[d.Pod] = s.readLogs(lctx, d.Pod, tp.latest)
		cancel()
	}
	start := time.Now()
	err := s.r.Client.CoreV1().Pods(s.ns).Delete(ctx, d.Pod, metav1.DeleteOptions{GracePeriodSeconds: d.GracePeriodSeconds})
	if err != nil {
		return "error: " + err.Error()
	}
	if _, seen := s.deleteAt[d.Pod]; !seen {
		s.deleteAt[d.Pod] = start
		s.grace[d.Pod] = grace
	}
	return "ok"
}

// readLogs reads the current logs of each of the pod's containers (ephemeral ones included), and
// the previous ones of those that restarted.
func (s *side) readLogs(ctx context.Context, name string, latest *v1.Pod) map[string]*ContainerLogs {
	out := map[string]*ContainerLogs{}
	manifest := s.sc.Pod(name)
	var containers []string
	for _, c := range manifest.Spec.InitContainers {
		containers = append(containers, c.Name)
	}
	for _, c := range manifest.Spec.Containers {
		containers = append(containers, c.Name)
	}
	if latest != nil {
		// Those the scenario added with kubectl debug's update.
		for _, c := range latest.Spec.EphemeralContainers {
			containers = append(containers, c.Name)
		}
	}
	for _, c := range containers {
		cl := &ContainerLogs{Current: s.readLog(ctx, name, c, false)}
		if latest != nil {
			if cs := containerStatus(latest, c); cs != nil && cs.RestartCount > 0 {
				cl.Previous = s.readLog(ctx, name, c, true)
			}
		}
		out[c] = cl
	}
	return out
}

func (s *side) readLog(ctx context.Context, pod, container string, previous bool) *LogResult {
	limit := int64(maxOutput)
	raw, err := s.r.Client.CoreV1().Pods(s.ns).GetLogs(pod, &v1.PodLogOptions{Container: container, Previous: previous, LimitBytes: &limit}).DoRaw(ctx)
	if err != nil {
		msg := err.Error()
		var st apierrors.APIStatus
		if errors.As(err, &st) && st.Status().Message != "" {
			msg = st.Status().Message
		}
		return &LogResult{Error: msg}
	}
	return &LogResult{Text: string(raw)}
}

// collect waits for the pending deletions (until the scenario's deadline), then freezes the
// timelines and reads logs and events.
func (s *side) collect(parent context.Context, deadline time.Time) {
	dctx, cancel := context.WithDeadline(parent, deadline)
	for name := range s.deleteAt {
		_, _, _ = s.pods.until(dctx, name, func(tp trackedPod) (bool, string) { return tp.gone, "" })
	}
	cancel()

	timeout := s.r.CollectTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	s.pods.freeze()
	collectAt := time.Now()
	gone := map[string]bool{}
	for _, p := range s.sc.Pods {
		rec := s.rec.Pods[p.Name]
		tp, _ := s.pods.snapshot(p.Name)
		gone[p.Name] = tp.gone
		rec.Timeline = s.pods.timelineWithDurations(p.Name)
		if rec.Timeline == nil {
			rec.Timeline = []TimelineEntry{}
		}
		if tp.latest != nil {
			rec.Final = ShapeOf(tp.latest)
		}
		if at, ok := s.deleteAt[p.Name]; ok {
			d := &DeletionRecord{GracePeriodSeconds: s.grace[p.Name], Gone: tp.gone, Bucket: "not gone"}
			if tp.gone {
				d.Seconds = roundSeconds(tp.goneAt.Sub(at))
				d.Bucket = DeletionBucket(d.Seconds, d.GracePeriodSeconds)
			}
			rec.Deletion = d
		}
		switch {
		case tp.gone:
			rec.Logs = s.preDeleteLogs[p.Name]
		case rec.CreateError == "":
			rec.Logs = s.readLogs(ctx, p.Name, tp.latest)
		}
	}
	for _, e := range s.pods.errs {
		s.log.Warn(e)
	}

	// Events reach the API server asynchronously (and a node's event client may be rate
	// limited): give them Settle, then more while they keep coming, until a second passes
	// without one (at most 5 × Settle). Only those that first occurred before the collection
	// started are kept, and all those of pods gone from the API (keepEvent).
	settleStart := time.Now()
	quiet := time.Second
	for {
		elapsed := time.Since(settleStart)
		if elapsed >= s.r.Settle && (time.Since(s.events.lastSeen()) >= quiet || elapsed >= 5*s.r.Settle) {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	if el, err := s.r.Client.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range el.Items {
			s.events.put(&el.Items[i])
		}
	} else {
		s.log.Warnf("listing events: %v", err)
	}
	byPod := map[string]map[string]*EventRecord{}
	for _, e := range s.events.all() {
		if e.InvolvedObject.Kind != "Pod" || s.rec.Pods[e.InvolvedObject.Name] == nil {
			continue
		}
		if !keepEvent(eventTime(e), collectAt, gone[e.InvolvedObject.Name]) {
			continue
		}
		m := byPod[e.InvolvedObject.Name]
		if m == nil {
			m = map[string]*EventRecord{}
			byPod[e.InvolvedObject.Name] = m
		}
		r := EventRecord{Type: e.Type, Reason: e.Reason, FieldPath: e.InvolvedObject.FieldPath}
		if old, ok := m[r.Key()]; ok {
			old.Count += eventCount(e)
			old.Message = e.Message
			continue
		}
		r.Count, r.Message = eventCount(e), e.Message
		m[r.Key()] = &r
	}
	for name, m := range byPod {
		rec := s.rec.Pods[name]
		for _, k := range sortedKeys(m) {
			rec.Events = append(rec.Events, *m[k])
		}
		sort.SliceStable(rec.Events, func(i, j int) bool { return rec.Events[i].Key() < rec.Events[j].Key() })
	}
}

// keepEvent reports whether an event that first occurred at first (a time with whole seconds, as
// events carry it) belongs to the record collected at collectAt: one that occurred in a later
// second belongs to a life the scenario did not wait for (a back-off repeating), unless its pod
// was gone from the API by then. The end of a gone pod's termination is recorded after the pod
// object went (the Killing of a grace-0 deletion, a few milliseconds after the removal, on both
// nodes) and nothing of it repeats: the settle wait before the collection is what bounds it.
func keepEvent(first, collectAt time.Time, podGone bool) bool {
	return podGone || !first.Truncate(time.Second).After(collectAt.Truncate(time.Second))
}

func (s *side) deleteNamespace() {
	if s.r.KeepNamespaces {
		s.log.Infof("keeping namespace %s", s.ns)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := s.r.Client.CoreV1().Namespaces().Delete(ctx, s.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.log.Warnf("deleting namespace %s: %v", s.ns, err)
	}
}
