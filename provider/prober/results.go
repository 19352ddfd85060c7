package prober

import "sync"

// resultCache holds one kind of probe's latest verdict per container instance (runtime
// container ID), and reports each change.
type resultCache struct {
	mu       sync.RWMutex
	byID     map[string]Result
	onChange func(podUID, containerID string)
}

func newResultCache(onChange func(podUID, containerID string)) *resultCache {
	return &resultCache{byID: map[string]Result{}, onChange: onChange}
}

func (c *resultCache) get(containerID string) (Result, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, ok := c.byID[containerID]
	return r, ok
}

// set records r and calls onChange (outside the lock) when it differs from what was there.
func (c *resultCache) set(podUID, containerID string, r Result) {
	c.mu.Lock()
	old, ok := c.byID[containerID]
	c.byID[containerID] = r
	c.mu.Unlock()
	if (!ok || old != r) && c.onChange != nil {
		c.onChange(podUID, containerID)
	}
}

func (c *resultCache) remove(containerID string) {
	c.mu.Lock()
	delete(c.byID, containerID)
	c.mu.Unlock()
}
