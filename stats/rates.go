package stats

import (
	"sync"

	cadvisorapi "github.com/google/cadvisor/lib/model"
)

// rateCache keeps each cgroup's previous CPU reading, to turn cumulative usage into a rate
// (cgroups read on demand have no history in cAdvisor).
type rateCache struct {
	mu   sync.Mutex
	last map[string]*cadvisorapi.ContainerStats
}

func newRateCache() *rateCache {
	return &rateCache{last: map[string]*cadvisorapi.ContainerStats{}}
}

// update records st and returns the CPU rate in nanocores since the previous reading of the
// same cgroup, nil on the first one.
func (r *rateCache) update(name string, st *cadvisorapi.ContainerStats) *uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.last[name]
	r.last[name] = st
	if prev == nil {
		return nil
	}
	inst, err := cadvisorapi.InstCpuStats(prev, st)
	if err != nil || inst == nil {
		return nil
	}
	v := inst.Usage.Total
	return &v
}

// prune forgets the cgroups not read in the last collection.
func (r *rateCache) prune(seen map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.last {
		if !seen[name] {
			delete(r.last, name)
		}
	}
}
