package provider

import (
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// The pod's user namespace reaches both the sandbox and its containers; a pod that asks for one
// on a handler that has none is refused before anything runs.
func TestPodUsernsOptions(t *testing.T) {
	f := newWorkerFixture(t, nil, podRuntime{})
	f.p.userns = newUsernsAllocator(t.TempDir(), nil)
	f.p.observeRuntimeStatus(containerd2Status())
	classes := fakeRuntimeClasses{"fast": "crun", "secure": "runc"}
	f.p.cfg.RuntimeClasses = classes

	pod := testPod()
	if got, err := f.p.podUsernsOptions(pod); err != nil || !proto.Equal(got, translate.NodeUserns()) {
		t.Fatalf("plain pod: %v, %v; want NODE", got, err)
	}
	pod.Spec.HostUsers = ptrTo(false)
	got, err := f.p.podUsernsOptions(pod)
	if err != nil || got.Mode != runtimeapi.NamespaceMode_POD || got.Uids[0].HostId != usernsIDsPerPod {
		t.Fatalf("hostUsers false: %v, %v; want POD from the first range", got, err)
	}
	again, _ := f.p.podUsernsOptions(pod)
	if !proto.Equal(got, again) {
		t.Errorf("second call: %v, want the same range %v", again, got)
	}
	pod.Spec.RuntimeClassName = ptrTo("secure")
	if got, err := f.p.podUsernsOptions(pod); err != nil || got.Mode != runtimeapi.NamespaceMode_POD {
		t.Errorf("hostUsers false with runc: %v, %v", got, err)
	}

	other := testPod()
	other.UID = "other"
	other.Spec.HostUsers = ptrTo(false)
	other.Spec.RuntimeClassName = ptrTo("fast")
	if _, err := f.p.podUsernsOptions(other); errString(err) != "can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces" {
		t.Errorf("crun: err %v", err)
	}
	other.Spec.RuntimeClassName = ptrTo("gone")
	if _, err := f.p.podUsernsOptions(other); errString(err) != `runtimeclass.node.k8s.io "gone" not found` {
		t.Errorf("missing RuntimeClass: err %v", err)
	}
	if n := f.p.userns.allocated(); n != 1 {
		t.Errorf("%d ranges allocated, want 1 (refused pods get none)", n)
	}
}
