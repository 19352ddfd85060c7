package cri

import (
	"context"
	"errors"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeremote "k8s.io/cri-api/pkg/apis/testing"
)

type operations map[string][2]int // operation → calls, errors

func (o operations) RuntimeOperation(op string, _ time.Duration, err error) {
	c := o[op]
	c[0]++
	if err != nil {
		c[1]++
	}
	o[op] = c
}

func TestInstrumentRecordsOperations(t *testing.T) {
	rt := fakeremote.NewFakeRuntimeService()
	img := fakeremote.NewFakeImageService()
	c := &Client{Runtime: rt, Images: img}
	ops := operations{}
	c.Instrument(ops)
	ctx := context.Background()

	id, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runtime.ListPodSandbox(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rt.InjectError("StopPodSandbox", errors.New("boom"))
	_ = c.Runtime.StopPodSandbox(ctx, id)
	if _, err := c.Images.PullImage(ctx, &runtimeapi.ImageSpec{Image: "busybox"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := operations{"run_podsandbox": {1, 0}, "list_podsandbox": {1, 0}, "stop_podsandbox": {1, 1}, "pull_image": {1, 0}}
	for op, w := range want {
		if ops[op] != w {
			t.Errorf("%s: calls/errors %v, want %v", op, ops[op], w)
		}
	}
	if len(ops) != len(want) {
		t.Errorf("operations %v", ops)
	}
}
