# vk-cri compare: run the behaviour scenarios of test/compare on a vk-cri node and a reference
# node at once and diff what happens (see compare/ and `bin/vk-cri compare --help`).
#   make compare            all scenarios; fails when any differs (known ones included)
#   make compare-matching   scenarios not marked known only; fails when one of them differs
#   make compare-flakes     the matching scenarios FLAKE_RUNS times on a fresh vk-cri node (hack/compare-flakes.sh)
#   make compare-baseline   VK_NODE against the baseline shipped in COMPARE_BASELINE (no reference node)
#   make compare-record     records REF_NODE into COMPARE_BASELINE (BASELINE_RUNS runs of each scenario)
# Settings: VK_NODE, REF_NODE, COMPARE_OUT, COMPARE_SCENARIOS, COMPARE_ARGS (e.g. --run failures/).
VK_NODE ?= vk-demo
REF_NODE ?= ref
COMPARE_OUT ?= compare-result.json
COMPARE_SCENARIOS ?= test/compare
COMPARE_ARGS ?=
COMPARE_STACK_ENV ?= /var/run/vk-cri-stack/env

# KUBECONFIG comes from the local stack's env file.
define compare_run
	@test -f $(COMPARE_STACK_ENV) || { echo "no $(COMPARE_STACK_ENV): bring the stack up first (make stack-up)" >&2; exit 1; }
	set -a; source $(COMPARE_STACK_ENV); set +a; \
	bin/vk-cri compare --kubeconfig $$KUBECONFIG --node-a $(VK_NODE) --node-b $(REF_NODE) \
	  --scenarios $(COMPARE_SCENARIOS) --out $(COMPARE_OUT) $(1) $(COMPARE_ARGS)
endef

FLAKE_RUNS ?= 5
COMPARE_BASELINE ?= test/compare/baselines/kubelet-v1.37.2.json
BASELINE_RUNS ?= 2

.PHONY: compare compare-matching compare-check compare-flakes compare-baseline compare-record

## compare: every scenario on VK_NODE and REF_NODE; the whole record goes to COMPARE_OUT.
compare: build
	$(call compare_run,)

## compare-matching: only the scenarios not marked known; fails only if one of them differs.
compare-matching: build
	$(call compare_run,--only-matching)

## compare-check: validate the scenario files (no cluster needed).
compare-check: build
	bin/vk-cri compare --check --scenarios $(COMPARE_SCENARIOS)

## compare-flakes: the matching scenarios FLAKE_RUNS times (--retries 0), then the flake table.
compare-flakes: build
	hack/compare-flakes.sh $(FLAKE_RUNS)

## compare-baseline: the matching scenarios on VK_NODE against the shipped baseline of the kubelet.
compare-baseline: build
	@test -f $(COMPARE_STACK_ENV) || { echo "no $(COMPARE_STACK_ENV): bring the stack up first (make stack-up)" >&2; exit 1; }
	set -a; source $(COMPARE_STACK_ENV); set +a; \
	bin/vk-cri compare --kubeconfig $$KUBECONFIG --node-a $(VK_NODE) --baseline $(COMPARE_BASELINE) \
	  --scenarios $(COMPARE_SCENARIOS) --only-matching --out $(COMPARE_OUT) $(COMPARE_ARGS)

## compare-record: record REF_NODE (the upstream kubelet) as the baseline COMPARE_BASELINE.
compare-record: build
	@test -f $(COMPARE_STACK_ENV) || { echo "no $(COMPARE_STACK_ENV): bring the stack up first (make stack-up)" >&2; exit 1; }
	@mkdir -p $(dir $(COMPARE_BASELINE))
	set -a; source $(COMPARE_STACK_ENV); set +a; \
	bin/vk-cri compare record --kubeconfig $$KUBECONFIG --node $(REF_NODE) --runs $(BASELINE_RUNS) \
	  --scenarios $(COMPARE_SCENARIOS) --only-matching --parallel 4 --out $(COMPARE_BASELINE) $(COMPARE_ARGS)
