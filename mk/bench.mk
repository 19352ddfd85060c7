# make bench: vk-cri next to the reference upstream kubelet on the local stack (hack/bench.sh).
# BENCH_ARGS are passed to bin/bench (e.g. BENCH_ARGS='--load 0 --window 10s').
.PHONY: bench

bench:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench.sh

# make bench-stats: vk-cri's CPU and RSS at 50 pods with the embedded cAdvisor on and off.
.PHONY: bench-stats
bench-stats: build
	hack/bench-stats.sh

# make bench-kubelet-api: exec latency and port-forward throughput, vk-cri vs kubelet vs CRI direct.
.PHONY: bench-kubelet-api
bench-kubelet-api:
	BENCH_KAPI_ARGS="$(BENCH_KAPI_ARGS)" hack/bench-kubeletapi.sh
