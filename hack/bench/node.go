// One node: its namespace, the pods the run creates on it and waits for.

package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

type nodeBench struct {
	o      options
	kube   kubernetes.Interface
	image  string
	res    *NodeResult
	ns     string
	tr     *tracker
	pid    int
	runID  string
	cancel context.CancelFunc // stops the watch
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nodeReady(ctx context.Context, kube kubernetes.Interface, name string) (bool, string) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("node %s: %v", name, err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			if c.Status == v1.ConditionTrue {
				return true, ""
			}
			return false, fmt.Sprintf("node %s is not Ready (%s: %s)", name, c.Reason, c.Message)
		}
	}
	return false, fmt.Sprintf("node %s has no Ready condition", name)
}

func (b *nodeBench) pod(name string, restart v1.RestartPolicy) *v1.Pod {
	no := false
	grace := gracePeriod
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nsLabel: b.runID}},
		Spec: v1.PodSpec{
			NodeName:                      b.res.Node,
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			RestartPolicy:                 restart,
			Containers: []v1.Container{{
				Name:            containerName,
				Image:           b.image,
				Args:            []string{"serve", "--port", strconv.Itoa(httpPort)},
				ImagePullPolicy: v1.PullIfNotPresent,
			}},
		},
	}
}

// createAll creates the pods at once (one goroutine each) and returns the names created.
func (b *nodeBench) createAll(ctx context.Context, pods []*v1.Pod) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var names []string
	var errs []string
	release := make(chan struct{})
	for _, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			b.tr.update(p.Name, func(r *podRec) { r.createSent = time.Now() })
			_, err := b.kube.CoreV1().Pods(b.ns).Create(ctx, p, metav1.CreateOptions{})
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", p.Name, err))
				return
			}
			b.tr.update(p.Name, func(r *podRec) { r.created = now })
			names = append(names, p.Name)
		}()
	}
	close(release)
	wg.Wait()
	if len(errs) > 0 {
		b.res.note("%d pod creations failed, first: %s", len(errs), errs[0])
	}
	sort.Strings(names)
	return names
}

// deleteAll deletes the pods at once with the 5 s grace period, recording when each call was sent.
func (b *nodeBench) deleteAll(ctx context.Context, names []string) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	grace := gracePeriod
	var mu sync.Mutex
	var errs []string
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			b.tr.update(name, func(r *podRec) { r.deleteSent = time.Now() })
			err := b.kube.CoreV1().Pods(b.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			if err != nil && !apierrors.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
				mu.Unlock()
			}
		}()
	}
	close(release)
	wg.Wait()
	if len(errs) > 0 {
		b.res.note("%d pod deletions failed, first: %s", len(errs), errs[0])
	}
}

func (b *nodeBench) waitAll(ctx context.Context, names []string, timeout time.Duration, what string, f func(r *podRec) bool) bool {
	ok := b.tr.wait(ctx, timeout, func(pods map[string]*podRec) bool { return count(pods, names, f) == len(names) })
	switch {
	case ok:
	case ctx.Err() != nil:
		b.res.note("%s: %d of %d pods when the run was stopped (%v)", what, b.tr.countNow(names, f), len(names), context.Cause(ctx))
	default:
		b.res.note("%s: only %d of %d pods after %v", what, b.tr.countNow(names, f), len(names), timeout)
	}
	return ok
}

func isRunning(r *podRec) bool { return !r.running.IsZero() }
func isReady(r *podRec) bool   { return !r.ready.IsZero() }
func isGone(r *podRec) bool    { return !r.deleted.IsZero() }
func hasIP(r *podRec) bool     { return !r.running.IsZero() && r.ip != "" }

func podNames(prefix string, n int) []string {
	width := len(strconv.Itoa(n - 1))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%0*d", prefix, width, i)
	}
	return names
}

func (b *nodeBench) pods(names []string, restart v1.RestartPolicy) []*v1.Pod {
	ps := make([]*v1.Pod, len(names))
	for i, n := range names {
		ps[i] = b.pod(n, restart)
	}
	return ps
}

func (b *nodeBench) setup(ctx context.Context) error {
	b.ns = fmt.Sprintf("bench-%s-%s", b.res.Node, b.runID)
	if len(b.ns) > 63 {
		b.ns = b.ns[:63]
	}
	b.res.Namespace = b.ns
	_, err := b.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: b.ns, Labels: map[string]string{nsLabel: b.runID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", b.ns, err)
	}
	// Pods are admitted only once the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := b.kube.CoreV1().ServiceAccounts(b.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("default service account of %s: %w", b.ns, err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	ready := make(chan error, 1)
	go b.tr.run(wctx, b.kube, b.ns, ready)
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("watching pods of %s: %w", b.ns, err)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (b *nodeBench) prepull(ctx context.Context) bool {
	logf("%s: pre-pulling %s with one pod", b.res.Node, b.image)
	names := b.createAll(ctx, []*v1.Pod{b.pod("prepull", v1.RestartPolicyAlways)})
	if len(names) == 0 {
		return false
	}
	ok := b.waitAll(ctx, names, 3*time.Minute, "pre-pull pod Running", isRunning)
	b.deleteAll(ctx, names)
	b.waitAll(ctx, names, 2*time.Minute, "pre-pull pod deleted", isGone)
	return ok
}
