package logrotate

import (
	"reflect"
	"testing"
	"time"
)

func TestPlanRotation(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 42, 49, 0, time.UTC)
	const log = "/logs/ns_pod_uid/c/0.log"
	rotated := func(ts string) string { return log + "." + ts }
	cases := []struct {
		name     string
		policy   Policy
		siblings []string
		want     plan
	}{{
		name:   "first rotation",
		policy: Policy{MaxSize: 100, MaxFiles: 5},
		want:   plan{RotateTo: rotated("20261130-084249")},
	}, {
		name:     "the newest rotated file is compressed before the current one is rotated",
		policy:   Policy{MaxSize: 100, MaxFiles: 5},
		siblings: []string{rotated("20261130-084000")},
		want:     plan{Compress: []string{rotated("20261130-084000")}, RotateTo: rotated("20261130-084249")},
	}, {
		name:   "at most MaxFiles-2 older files are kept, the oldest go",
		policy: Policy{MaxSize: 100, MaxFiles: 3},
		siblings: []string{
			rotated("20261130-084200"), rotated("20261130-084000.gz"), rotated("20261130-084100.gz"),
		},
		want: plan{
			Remove:   []string{rotated("20261130-084000.gz"), rotated("20261130-084100.gz")},
			Compress: []string{rotated("20261130-084200")},
			RotateTo: rotated("20261130-084249"),
		},
	}, {
		name:   "left-overs of an interrupted compression are removed first",
		policy: Policy{MaxSize: 100, MaxFiles: 5},
		siblings: []string{
			rotated("20261130-084000"), rotated("20261130-084000.gz"), rotated("20261130-084100.tmp"), rotated("20261130-084100"),
		},
		want: plan{
			Remove:   []string{rotated("20261130-084000"), rotated("20261130-084100.tmp")},
			Compress: []string{rotated("20261130-084100")},
			RotateTo: rotated("20261130-084249"),
		},
	}, {
		name:     "two files: only the current one and the one just rotated remain",
		policy:   Policy{MaxSize: 100, MaxFiles: 2},
		siblings: []string{rotated("20261130-084000.gz"), rotated("20261130-084100")},
		want: plan{
			Remove:   []string{rotated("20261130-084000.gz"), rotated("20261130-084100")},
			RotateTo: rotated("20261130-084249"),
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := planRotation(log, c.siblings, c.policy, now)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("planRotation:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestNeedsRotation(t *testing.T) {
	cases := []struct {
		policy Policy
		size   int64
		want   bool
	}{
		{Policy{MaxSize: 100, MaxFiles: 5}, 99, false},
		{Policy{MaxSize: 100, MaxFiles: 5}, 100, true},
		{Policy{MaxSize: 100, MaxFiles: 5}, 5000, true},
		{Policy{MaxSize: -1, MaxFiles: 5}, 1 << 40, false},
	}
	for _, c := range cases {
		if got := c.policy.needsRotation(c.size); got != c.want {
			t.Errorf("%+v.needsRotation(%d) = %v, want %v", c.policy, c.size, got, c.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := (Policy{MaxSize: 10, MaxFiles: 1}).Validate(); err == nil {
		t.Error("MaxFiles 1 accepted; the kubelet refuses fewer than 2")
	}
	if err := DefaultPolicy.Validate(); err != nil {
		t.Errorf("default policy: %v", err)
	}
}
