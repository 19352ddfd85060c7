package main

import (
	"strings"
	"testing"
)

func TestDeclaredCapacityFlag(t *testing.T) {
	o := capacityOptions{Capacity: map[string]string{"cpu": "1.5", "memory": "1Gi", "ephemeral-storage": "20Gi"}}
	got, err := o.declaredCapacity()
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := got["cpu"], got["memory"]
	if cpu.MilliValue() != 1500 || mem.Value() != 1<<30 || len(got) != 3 {
		t.Errorf("got %v", got)
	}
	if got, _ := (&capacityOptions{}).declaredCapacity(); got != nil {
		t.Errorf("none given: %v", got)
	}
	for in, want := range map[string]string{"pods=3": "cannot declare", "memory=lots": "failed to parse", "cpu=0": "must be positive"} {
		k, v, _ := strings.Cut(in, "=")
		if _, err := (&capacityOptions{Capacity: map[string]string{k: v}}).declaredCapacity(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}
