# make bench-probes: probe scheduling lag and agent CPU, 100 pods × 3 probes at 1 s (hack/probe-bench.sh).
.PHONY: bench-probes
bench-probes:
	hack/probe-bench.sh
