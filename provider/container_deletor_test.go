package provider

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// blockingRemover is a RemoveContainer that records its calls and returns only when released.
type blockingRemover struct {
	mu      sync.Mutex
	removed []string
	calls   chan string
	release chan struct{}
}

func newBlockingRemover() *blockingRemover {
	return &blockingRemover{calls: make(chan string, 100), release: make(chan struct{})}
}

func (b *blockingRemover) remove(ctx context.Context, id string) error {
	b.calls <- id
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	b.removed = append(b.removed, id)
	b.mu.Unlock()
	return nil
}

func deadInst(id string) deadInstance {
	return deadInstance{ID: id, Container: "c", Log: logrus.NewEntry(logrus.New())}
}

// A removal that blocks never blocks the caller: requests return at once, the same instance is
// not queued twice while it waits or is being removed, a full queue drops the request, and once
// the removal is done the instance may be requested again.
func TestContainerDeletorNeverBlocksTheSync(t *testing.T) {
	b := newBlockingRemover()
	d := newContainerDeletor(b.remove, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.run(ctx)

	if !d.request(deadInst("a")) {
		t.Fatal("first request for a refused")
	}
	select {
	case id := <-b.calls:
		if id != "a" {
			t.Fatalf("removing %q, want a", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the deletor never called RemoveContainer")
	}
	// a is being removed (blocked): asking again is a no-op.
	if d.request(deadInst("a")) {
		t.Error("a queued again while its removal runs")
	}
	// The queue takes the buffer's worth, then refuses without blocking.
	for i := 0; i < containerDeletorBuffer; i++ {
		if !d.request(deadInst(fmt.Sprint("b", i))) {
			t.Fatalf("request %d refused below the buffer limit", i)
		}
	}
	if d.request(deadInst("c")) {
		t.Error("request accepted past the buffer limit")
	}
	if d.request(deadInst("b0")) {
		t.Error("b0 queued twice")
	}
	close(b.release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		n := len(b.removed)
		b.mu.Unlock()
		if n == containerDeletorBuffer+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d removals done, want %d", n, containerDeletorBuffer+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Done with a: a new request for it is taken (the runtime may list it again).
	deadline = time.Now().Add(10 * time.Second)
	for !d.request(deadInst("a")) {
		if time.Now().After(deadline) {
			t.Fatal("a not accepted again after its removal")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
