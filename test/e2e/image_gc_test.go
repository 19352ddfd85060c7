//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// The image file system of hack/imagefs-containerd.sh's private containerd.
const imageFsRoot = "/var/lib/vk-cri-gc/root"

// Image GC with the kubelet's thresholds (85 % / 80 %) on a node whose runtime's image file
// system is small and filled past the high threshold: the unused image goes, the image a
// container uses stays, so does the pinned sandbox image; kubelet_image_garbage_collected_total
// counts it and, as freeing 1 MB cannot bring usage to 80 %, FreeDiskSpaceFailed is recorded on
// the node. A private containerd (its own loop-mounted root) keeps the shared one's images
// untouched.
func TestImageGCFreesUnusedImageKeepsUsed(t *testing.T) {
	f := fullImageFs(t)
	ctx, rt, unused, used, base := f.ctx, f.rt, f.unused, f.used, f.base
	started := metav1.Now()
	// The minimum age is the kubelet's setting for how long a new image is safe; 0 lets the
	// collector's first pass, at start, act.
	restartNode(t, base+" --image-minimum-gc-age=0s")
	if err := imageGone(ctx, rt, unused, 90*time.Second); err != nil {
		t.Fatalf("the unused image %s is still there after 90 s", unused)
	}
	for _, ref := range []string{used, s.env["REGISTRY"] + "/vk-cri/pause:3.10"} {
		st, err := rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false)
		if err != nil || st.GetImage() == nil {
			t.Errorf("image %s was removed (in use or pinned): %v", ref, err)
		}
	}
	if n := sample(scrapeMetrics(t), "kubelet_image_garbage_collected_total", map[string]string{"reason": "space"}); n < 1 {
		t.Errorf("kubelet_image_garbage_collected_total{reason=space} = %v, want at least 1", n)
	}
	var msg string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + nodeName + ",reason=FreeDiskSpaceFailed"})
		if err != nil {
			return false, nil
		}
		for _, ev := range evs.Items {
			// Events of earlier runs of the same node name are older.
			if ev.Type == v1.EventTypeWarning && !ev.LastTimestamp.Before(&started) {
				msg = ev.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || !strings.HasPrefix(msg, "Insufficient free disk space on the node's image filesystem (") {
		t.Errorf("no FreeDiskSpaceFailed warning on the node (last message %q)", msg)
	}
	t.Logf("FreeDiskSpaceFailed: %s", msg)
}

// fullImageFsNode is the test node on a private containerd whose image file system holds a pod's
// image (used) and another (unused) and is 90 % full.
type fullImageFsNode struct {
	ctx          context.Context
	rt           *cri.Client
	unused, used string
	// base are the node's flags on that runtime.
	base string
	ns   string
}

func fullImageFs(t *testing.T) fullImageFsNode {
	t.Helper()
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 for the small image file system")
	}
	script := filepath.Join(s.repo, "hack/imagefs-containerd.sh")
	out, err := exec.Command(script, "start").Output()
	if err != nil {
		t.Fatalf("hack/imagefs-containerd.sh start: %v", err)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop").CombinedOutput(); err != nil {
			t.Errorf("hack/imagefs-containerd.sh stop: %v\n%s", err, out)
		}
	})
	endpoint := strings.TrimSpace(string(out))
	ctx := ctxFor(t, 8*time.Minute)
	rt, err := cri.Connect(ctx, endpoint, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The node on the private runtime; no imagefs eviction threshold, so that only image GC
	// frees the image file system.
	base := "--cri-endpoint=" + endpoint + " --eviction-hard=memory.available<100Mi"
	t.Cleanup(func() { restartNode(t, "") })
	restartNode(t, base)

	ns := newNamespace(t)
	createPod(t, ns, basePod("user", busybox("c", "trap 'exit 0' TERM; sleep 3600 & wait")))
	t.Cleanup(func() { deletePodAndWait(t, ns, "user") })
	waitPod(t, ns, "user", 2*time.Minute, "running", isRunningReady)
	unused, used := image("httpd:latest"), image("busybox:latest")
	if _, err := rt.Images.PullImage(ctx, &runtimeapi.ImageSpec{Image: unused}, nil, nil); err != nil {
		t.Fatalf("pulling %s: %v", unused, err)
	}

	// Fill the file system to 90 % used (the kubelet's rounding: 100 - available*100/capacity).
	var st unix.Statfs_t
	if err := unix.Statfs(imageFsRoot, &st); err != nil {
		t.Fatal(err)
	}
	capacity, avail := int64(st.Blocks)*st.Bsize, int64(st.Bavail)*st.Bsize
	fill := avail - capacity/10
	if err := writeZeros(filepath.Join(imageFsRoot, "filler"), fill); err != nil {
		t.Fatalf("filling the image file system: %v", err)
	}
	_ = unix.Statfs(imageFsRoot, &st)
	t.Logf("image fs: %d MiB, %d MiB available after filling", capacity>>20, (int64(st.Bavail)*st.Bsize)>>20)
	return fullImageFsNode{ctx: ctx, rt: rt, unused: unused, used: used, base: base, ns: ns}
}

// imageGone waits until the runtime no longer has ref.
func imageGone(ctx context.Context, rt *cri.Client, ref string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		st, err := rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false)
		return err == nil && st.GetImage() == nil, nil
	})
}

// Under disk pressure on the image file system (a hard imagefs.available threshold), the
// eviction manager first reclaims: dead containers, then unused images (periodic image GC is
// off here); as that is not enough, it then evicts the pod, with the kubelet's message.
func TestEvictionReclaimsImagesBeforeEvicting(t *testing.T) {
	f := fullImageFs(t)
	restartNode(t, strings.Replace(f.base, "--eviction-hard=memory.available<100Mi", "--eviction-hard=imagefs.available<15%", 1)+
		" --image-gc-high-threshold=100 --image-minimum-gc-age=0s")
	evicted := waitPod(t, f.ns, "user", 2*time.Minute, "evicted", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if !strings.HasPrefix(evicted.Status.Message, "The node was low on resource: ephemeral-storage. Threshold quantity: ") || evicted.Status.Reason != "Evicted" {
		t.Errorf("reason %q message %q", evicted.Status.Reason, evicted.Status.Message)
	}
	// The unused image went in the reclaim before the eviction (no periodic image GC runs).
	if err := imageGone(f.ctx, f.rt, f.unused, time.Second); err != nil {
		t.Errorf("the unused image %s is still there after the eviction", f.unused)
	}
	if n := sample(scrapeMetrics(t), "kubelet_image_garbage_collected_total", map[string]string{"reason": "space"}); n < 1 {
		t.Errorf("kubelet_image_garbage_collected_total{reason=space} = %v, want at least 1", n)
	}
	if c := nodeCondition(t, v1.NodeDiskPressure); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("DiskPressure %+v", c)
	}
	t.Logf("evicted: %q", evicted.Status.Message)
}

// writeZeros writes a file of n bytes.
func writeZeros(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return err
		}
		n -= k
	}
	return f.Close()
}
