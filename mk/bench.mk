# make bench: vk-cri next to the reference upstream kubelet on the local stack (hack/bench.sh).
# BENCH_ARGS are passed to bin/bench (e.g. BENCH_ARGS='--load 0 --window 10s').
.PHONY: bench

bench:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench.sh
