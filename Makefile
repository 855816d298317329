# pact developer targets. Everything runs on loopback; nothing here needs the network.
GO ?= go

# Fuzz targets as package:Target. `make fuzz-smoke` runs each for FUZZTIME;
# `make fuzz FUZZTIME=5m` is the long run (one target at a time, one worker).
FUZZ_TARGETS := \
	./discovery:FuzzCardURL \
	./discovery:FuzzParse \
	./discovery:FuzzA2A_8_4_Verify \
	./discovery:FuzzA2A_8_4_VerifyWithKeys \
	./a2aclient:FuzzParseReply \
	./a2aclient:FuzzEnvelopeReasonOf \
	./a2aclient:FuzzSSE \
	./deviceflow:FuzzFetchMetadata \
	./deviceflow:FuzzTokenResponse \
	./receipts:FuzzVerifyOffline \
	./jwks:FuzzParse \
	./iostreams:FuzzSanitize \
	./iostreams:FuzzSanitizeLine \
	./profile:FuzzCheckEndpoint \
	./reply:FuzzMarkdown
FUZZTIME ?= 3s

.PHONY: fuzz-smoke fuzz e2e e2e-long bench mutate

fuzz-smoke: FUZZTIME = 3s
fuzz-smoke: fuzz

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel 1; \
	done

# The hostile-Provider and durability suites against the real binary.
e2e:
	$(GO) test ./e2e/ -count=1 -timeout 3m

# Comparative benchmarks: prints ratios against their targets and fails when one is missed.
# BENCHFLAGS picks rows, e.g. `make bench BENCHFLAGS=-startup` (pact send and pact version
# vs curl) or `make bench BENCHFLAGS=-breakdown` (where one send's time goes); see BENCHMARKS.md.
BENCHFLAGS ?=
bench:
	$(GO) run ./bench/cmd/benchrun $(BENCHFLAGS)

# Breaks ~20 named rules one at a time in a temporary copy of the tree and
# requires the owning package's tests to fail for each (docs/testing.md).
# MUTATE=card- runs the rules whose name matches.
MUTATE ?=
mutate:
	$(GO) run ./internal/mutate -rule '$(MUTATE)'
