package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestNodeImages(t *testing.T) {
	imgs := []*runtimeapi.Image{
		{Id: "sha256:a", Size: 10, RepoTags: []string{"a:1"}},
		{Id: "sha256:b", Size: 30, RepoTags: []string{"b:1", "b:latest"}, RepoDigests: []string{"b@sha256:bb"}},
		{Id: "sha256:c", Size: 10, RepoTags: []string{"c:1"}},
		{Id: "sha256:d", Size: 20, RepoTags: []string{"t1", "t2", "t3", "t4"}, RepoDigests: []string{"d1", "d2"}},
		{Id: "sha256:e", Size: 5},
	}
	want := []v1.ContainerImage{
		{Names: []string{"b@sha256:bb", "b:1", "b:latest"}, SizeBytes: 30},
		{Names: []string{"d1", "d2", "t1", "t2", "t3"}, SizeBytes: 20},
		{Names: []string{"c:1"}, SizeBytes: 10},
		{Names: []string{"a:1"}, SizeBytes: 10},
	}
	if diff := cmp.Diff(want, nodeImages(imgs, 4)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var many []*runtimeapi.Image
	for i := 0; i < 70; i++ {
		many = append(many, &runtimeapi.Image{Id: fmt.Sprint(i), Size: uint64(i)})
	}
	if got := nodeImages(many, nodeStatusMaxImages); len(got) != 50 || got[0].SizeBytes != 69 {
		t.Errorf("%d images, first of size %d; want the 50 largest", len(got), got[0].SizeBytes)
	}
}

func TestPullSlots(t *testing.T) {
	if pullSlots(false, 0) != nil {
		t.Error("parallel without a limit: want no slots")
	}
	if s := pullSlots(true, 0); cap(s) != 1 {
		t.Errorf("serialized: %d slots", cap(s))
	}
	if s := pullSlots(false, 3); cap(s) != 3 {
		t.Errorf("parallel up to 3: %d slots", cap(s))
	}
	p := &Provider{pullSlots: pullSlots(true, 0)}
	release, err := p.acquirePullSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.acquirePullSlot(ctx); err == nil {
		t.Error("a second pull got the only slot while the first held it")
	}
	release()
	again, err := p.acquirePullSlot(context.Background())
	if err != nil {
		t.Fatalf("slot not freed: %v", err)
	}
	again()
}
