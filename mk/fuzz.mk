# make fuzz: runs each fuzz target in turn for FUZZTIME (go test -fuzz), starting from its seed
# corpus in testdata/fuzz/<target>; `make test` runs only the seeds (go test ./...). A failure
# stops the run and leaves the input that broke the target in that package's testdata/fuzz.
FUZZTIME ?= 60s
FUZZ_TARGETS := \
	./provider/translate:FuzzPodTranslation \
	./provider:FuzzDecodeAllocationCheckpoint \
	./provider/volumes:FuzzSubPath \
	./streaming:FuzzLogQuery \
	./server:FuzzRequestAttributes

.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "== $$fn ($$pkg) for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done
