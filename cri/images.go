package cri

import (
	"context"
	"fmt"
	"strings"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Waiting reasons the kubelet gives a container whose image cannot be had.
const (
	ReasonErrImagePull      = "ErrImagePull"
	ReasonImagePullBackOff  = "ImagePullBackOff"
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	ReasonInvalidImageName  = "InvalidImageName"
	ReasonImageInspectError = "ImageInspectError"
)

// ImageError is a failure to make an image available, with the kubelet's waiting reason.
type ImageError struct {
	Reason  string
	Message string
	Err     error
}

func (e *ImageError) Error() string { return e.Message }
func (e *ImageError) Unwrap() error { return e.Err }

// ImagePresence reports whether image is in the runtime's store and, if so, its ID (the imageRef
// containers are created from) and the digest-qualified reference for status.imageID.
func (c *Client) ImagePresence(ctx context.Context, image string) (*runtimeapi.Image, error) {
	resp, err := c.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		return nil, fmt.Errorf("image status of %q: %w", image, err)
	}
	return resp.GetImage(), nil
}

// PullImage pulls image and returns the runtime's reference to it.
func (c *Client) PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	ref, err := c.Images.PullImage(ctx, &runtimeapi.ImageSpec{Image: image}, auth, sandbox)
	if err != nil {
		return "", fmt.Errorf("pull %q: %w", image, err)
	}
	return ref, nil
}

// DefaultPullPolicy is the policy the API server defaults to when a container gives none:
// Always for an untagged or :latest image, IfNotPresent otherwise.
func DefaultPullPolicy(image string) v1.PullPolicy {
	name, _, hasDigest := strings.Cut(image, "@")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "latest" || (tag == "" && !hasDigest) {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// NeedsPull decides from the pull policy and whether the image is present.
func NeedsPull(policy v1.PullPolicy, present bool) bool {
	switch policy {
	case v1.PullAlways:
		return true
	case v1.PullNever:
		return false
	default:
		return !present
	}
}

// ImageDigestRef returns the repo digest to report as imageID, falling back to the image ID.
func ImageDigestRef(img *runtimeapi.Image) string {
	if img == nil {
		return ""
	}
	if len(img.RepoDigests) > 0 {
		return img.RepoDigests[0]
	}
	return img.Id
}

// WithDefaultTag checks an image reference as the kubelet does (docker's normalised reference
// grammar) and adds the ":latest" tag an untagged, undigested reference implies. The error is
// the kubelet's InvalidImageName message.
func WithDefaultTag(image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("couldn't parse image name %q: %v", image, err)
	}
	_, tagged := named.(reference.Tagged)
	_, digested := named.(reference.Digested)
	if !tagged && !digested {
		return image + ":latest", nil
	}
	return image, nil
}
