package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// UninstallTaint is the taint `vk-cri drain-nodes` puts on the nodes it empties: nothing new is
// scheduled there (NoSchedule would do for that; NoExecute also has the taint eviction
// controller evict pods that do not tolerate it, as kubectl drain's cordon does not).
const UninstallTaint = "vk-cri.io/uninstalling"

// newDrainNodesCommand is the chart's pre-delete hook: before `helm uninstall` deletes vk-cri's
// DaemonSet or Deployments, every pod bound to the release's nodes is deleted through the API
// (with its own grace period) and the command waits until they are gone. Each node's vk-cri
// stops their containers, runs their preStop hooks, removes their sandboxes, volumes and
// cgroups, as the kubelet does for a deleted pod; the runtime is then empty, and the bundled
// runtime's entrypoint removes the rest when its container stops.
func newDrainNodesCommand() *cobra.Command {
	var kubeconfig, selector string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain-nodes",
		Short: "Taint the nodes matching --selector NoExecute and delete their pods, waiting until they are gone",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if selector == "" {
				return errors.New("--selector is required")
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return drainNodes(ctx, client, selector, time.Second, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster)")
	cmd.Flags().StringVar(&selector, "selector", "", "label selector of the nodes to drain")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the pods to go")
	return cmd
}

// drainNodes taints the selected nodes, then deletes their pods until none is left (pods a
// controller makes again and that tolerate the taint are deleted again at each poll).
func drainNodes(ctx context.Context, client kubernetes.Interface, selector string, poll time.Duration, out io.Writer) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing nodes %q: %w", selector, err)
	}
	names := make([]string, 0, len(nodes.Items))
	for i := range nodes.Items {
		n := &nodes.Items[i]
		names = append(names, n.Name)
		if err := taintNode(ctx, client, n); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "draining %d nodes: %v\n", len(names), names)
	var left []string
	err = wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, name := range names {
			pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String(),
			})
			if err != nil {
				return false, nil
			}
			for i := range pods.Items {
				p := &pods.Items[i]
				left = append(left, p.Namespace+"/"+p.Name)
				if p.DeletionTimestamp != nil {
					continue
				}
				err := client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					fmt.Fprintf(out, "deleting pod %s/%s: %v\n", p.Namespace, p.Name, err)
				}
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods still on nodes %v: %v (%w)", names, left, err)
	}
	fmt.Fprintf(out, "no pod left on %v\n", names)
	return nil
}

// taintNode adds UninstallTaint (NoExecute) unless the node has it.
func taintNode(ctx context.Context, client kubernetes.Interface, n *v1.Node) error {
	if slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == UninstallTaint }) {
		return nil
	}
	n = n.DeepCopy()
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: UninstallTaint, Effect: v1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: time.Now()}})
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("tainting node %s: %w", n.Name, err)
	}
	return nil
}
