package provider

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// NodeSource gives the node's object as the API has it: the labels and taints others set on it
// count for admission, as for the kubelet, which admits against its cached Node.
type NodeSource interface {
	// Node is the node from a watch (cached) or read from the API now (!cached).
	Node(ctx context.Context, cached bool) (*v1.Node, error)
}

// nodeReadTimeout bounds the read of the node from the API during an admission.
const nodeReadTimeout = 10 * time.Second

// apiNode follows one Node with a watch restricted to it.
type apiNode struct {
	name   string
	client kubernetes.Interface
	lister corelisters.NodeLister
	synced cache.InformerSynced
}

// NewAPINode starts a watch of the named node (it runs until ctx ends).
func NewAPINode(ctx context.Context, client kubernetes.Interface, name string) NodeSource {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}))
	inf := factory.Core().V1().Nodes()
	n := &apiNode{name: name, client: client, lister: inf.Lister(), synced: inf.Informer().HasSynced}
	factory.Start(ctx.Done())
	return n
}

func (n *apiNode) Node(ctx context.Context, cached bool) (*v1.Node, error) {
	if cached {
		if !n.synced() {
			return nil, fmt.Errorf("node %s not yet read from the API", n.name)
		}
		return n.lister.Get(n.name)
	}
	ctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
	defer cancel()
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %w", n.name, err)
	}
	return node, nil
}

// setDescribedNode records the node as vk-cri describes it, what admission uses until the API
// has it (the kubelet's initial node).
func (p *Provider) setDescribedNode(node *v1.Node) {
	p.describedNode.Store(node.DeepCopy())
}

// admissionNode is the node admission checks pods against: the API's (cached, or read now),
// else the one vk-cri registers; nil when neither is known yet.
func (p *Provider) admissionNode(ctx context.Context, cached bool) (*v1.Node, error) {
	if p.cfg.Node != nil {
		node, err := p.cfg.Node.Node(ctx, cached)
		if err == nil {
			return node, nil
		}
		if !cached {
			return nil, err
		}
		p.log.WithError(err).Debug("admission: using the node as described locally")
	}
	if n := p.describedNode.Load(); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("node %s is not described yet", p.cfg.NodeName)
}
