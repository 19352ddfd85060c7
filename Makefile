# vk-cri: the two commands are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= v0.1.0+$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
E2E_TIMEOUT ?= 60m
# 1: after the whole e2e suite (on the default containerd 2.x lane), a smoke subset on containerd 1.6
# (hack/e2e.sh). VKCRI_CONTAINERD=1.6 in the environment runs everything on 1.6 instead.
E2E_SMOKE_1_6 ?= 0

# Feature makefiles (reference node, compare, conformance, bench) add their targets here.
.DEFAULT_GOAL := all
-include mk/*.mk

.PHONY: all build test test-unit test-e2e stack-up stack-down demo demo-down clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/vk-cri ./cmd/vk-cri

## test: unit tests, then end-to-end tests on the real local stack (installs and builds what it needs);
## ends with how long each phase took (hack/phases.sh summary), also when it fails.
test:
	@hack/phases.sh reset
	@rc=0; hack/phases.sh run "unit tests" $(MAKE) --no-print-directory test-unit || rc=$$?; \
	if [ $$rc -eq 0 ]; then hack/phases.sh run "build bin/vk-cri" $(MAKE) --no-print-directory build || rc=$$?; fi; \
	if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory test-e2e || rc=$$?; fi; \
	echo; hack/phases.sh summary; exit $$rc

test-unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

## test-e2e: brings the stack up if it is not, runs test/e2e against a fresh vk-cri node, and
## takes down again what it brought up.
test-e2e: build
	E2E_TIMEOUT=$(E2E_TIMEOUT) E2E_SMOKE_1_6=$(E2E_SMOKE_1_6) hack/e2e.sh

stack-up:
	hack/stack-up.sh

stack-down:
	hack/stack-down.sh

## demo: the local stack, a vk-cri node and example pods; prints what to try. Left running.
demo: build
	hack/demo.sh up

demo-down:
	hack/demo.sh down

clean: demo-down
	rm -rf bin
