package provider

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// pullSlots is the limit of concurrent image pulls: one when pulls are serialized (the
// kubelet's default), max when parallel pulls are limited, none otherwise.
func pullSlots(serialize bool, max int) chan struct{} {
	switch {
	case serialize:
		return make(chan struct{}, 1)
	case max > 0:
		return make(chan struct{}, max)
	}
	return nil
}

// acquirePullSlot waits for a free pull slot; the returned func frees it.
func (p *Provider) acquirePullSlot(ctx context.Context) (func(), error) {
	if p.pullSlots == nil {
		return func() {}, nil
	}
	select {
	case p.pullSlots <- struct{}{}:
		return func() { <-p.pullSlots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pullImage pulls an image for a pod, one pull slot at a time: with each credential of the
// pod's pull secrets that applies to the image's registry until one works, or without
// credentials when none applies. Pull secrets that cannot be read are reported with the
// kubelet's FailedToRetrieveImagePullSecret event and the pull is tried anyway.
func (p *Provider) pullImage(ctx context.Context, pod *v1.Pod, image string, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	secrets := p.pullSecrets(ctx, pod)
	release, err := p.acquirePullSlot(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	creds := cri.PullCredentials(secrets, image)
	if len(creds) == 0 {
		return p.rt.PullImage(ctx, image, nil, sbCfg)
	}
	var errs []error
	for _, auth := range creds {
		ref, err := p.rt.PullImage(ctx, image, auth, sbCfg)
		if err == nil {
			return ref, nil
		}
		errs = append(errs, err)
	}
	return "", utilerrors.NewAggregate(errs)
}

// pullSecrets reads the pod's imagePullSecrets; missing ones are reported, not fatal.
func (p *Provider) pullSecrets(ctx context.Context, pod *v1.Pod) []v1.Secret {
	var out []v1.Secret
	var missing []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		if p.cfg.Objects == nil {
			missing = append(missing, ref.Name)
			continue
		}
		s, err := p.cfg.Objects.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			p.podLog(pod).WithError(err).WithField("secret", ref.Name).Info("unable to retrieve pull secret, the image pull may not succeed")
			missing = append(missing, ref.Name)
			continue
		}
		out = append(out, *s)
	}
	if len(missing) > 0 {
		p.podEvent(pod, v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
	}
	return out
}
