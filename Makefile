# flipbench: the two commands that matter are `make ab EXP=NNN` and `make test`.
GO      ?= go
EXP     ?= 275
PROFILE ?= quick
BIN     := bin

export CGO_ENABLED ?= 0

BASE    ?= origin/main

# VERSION is what flipbench --version prints: git describe of the clone (a tag, or a tag,
# the commits since and the commit, or the commit alone; -dirty with uncommitted changes),
# linked in so that it holds even when the build records no VCS data (-buildvcs=false).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X github.com/flipbench/flipbench/cmd/flipbench/cli.buildVersion=$(VERSION)

.PHONY: all build install lanes neighbour ab gate test vet fmt-check sim valgrind chromium cc clean

all: build

## build: the flipbench binary and the bundled lane programs
build: lanes
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/flipbench ./cmd/flipbench

## install: flipbench into GOBIN (else $(go env GOPATH)/bin), from this clone: the way to
##     use it in another repository without the module proxy (docs/adopt.md)
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/flipbench
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; \
		echo "installed $$bin/flipbench: $$("$$bin/flipbench" --version)"

lanes:
	$(GO) build -o $(BIN)/demo ./lanes/demo

## neighbour: the seeded bursty spinner every busy-host measurement names as its load
##     (docs/busy-host.md), e.g. bin/neighbour -procs 3 -demand 2 -seed 1 -for 30m
neighbour:
	$(GO) build -o $(BIN)/neighbour ./cmd/neighbour

## ab: run experiment EXP with profile PROFILE (quick by default; full is the spec's own
##     protocol), then finalize its page and the ledger index from the receipt
##     (e.g. make ab EXP=266 PROFILE=full)
ab: build
	@out=$$(mktemp); \
	$(BIN)/flipbench ab $(EXP) --profile $(PROFILE) > $$out; code=$$?; cat $$out; \
	receipt=$$(tail -n 1 $$out); rm -f $$out; \
	case "$$receipt" in *.md) \
		$(BIN)/flipbench finalize $(EXP) --receipt "$$receipt" && $(BIN)/flipbench ledger || code=1;; \
	esac; exit $$code

## gate: the CI regression gate against BASE (e.g. make gate BASE=origin/main); its
## instruction lanes need Valgrind
gate: build valgrind
	$(BIN)/flipbench gate --base $(BASE)

## valgrind: install Valgrind when it is missing (apt-get, as root or through sudo): lanes
## with metric: instructions are counted under it, and make test runs such lanes
valgrind:
	@command -v valgrind >/dev/null 2>&1 || { \
		echo "installing valgrind: apt-get update && apt-get install -y valgrind"; \
		if [ "$$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi; \
		$$sudo apt-get update && $$sudo apt-get install -y valgrind; }
	@valgrind --version

## cc: install a C compiler when there is none (apt-get's gcc, as root or through sudo): a
## test builds an exec harness whose lane program is C (gitarms_exec), and make test runs it
cc:
	@command -v cc >/dev/null 2>&1 || { \
		echo "installing a C compiler: apt-get update && apt-get install -y gcc"; \
		if [ "$$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi; \
		$$sudo apt-get update && $$sudo apt-get install -y gcc; }
	@cc --version | head -n 1

## chromium: install Debian's chromium when it is missing (apt-get, as root or through
## sudo): the site's layout and screenshot tests render pages in it, and make test runs
## them, so a fresh machine gets it here rather than skipping them
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium: apt-get update && apt-get install -y chromium"; \
		if [ "$$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi; \
		$$sudo apt-get update && $$sudo apt-get install -y chromium; }
	@chromium --version

## test: format check, vet, and every test (the probe package and the code it counts in
## both builds: without and with the flipbench_probe tag; the freshness lanes in every
## arm's build: no tag, freshness_optimistic, freshness_fifo; the plugin scheduler and its
## lanes also with pluginhost_fair, the build of experiment 40's candidate arm). The
## instruction-count tests run lanes under Valgrind, the site's layout test pages in
## Chromium, and one exec-harness test builds a C lane program; it installs all three
## when missing, and a script that needs a program that is missing fails (need PROG), it
## never skips.
test: fmt-check vet valgrind chromium cc
	$(GO) test -timeout 25m ./...
	$(GO) test -tags flipbench_probe ./probe/ ./examples/readerpool/ ./examples/freshness/ ./lanes/release/ ./examples/pluginhost/ ./lanes/tenantmix/
	$(GO) test -tags freshness_optimistic ./lanes/freshness/
	$(GO) test -tags freshness_fifo ./lanes/freshness/
	$(GO) test -tags pluginhost_fair ./examples/pluginhost/ ./lanes/pluginhost/

## sim: the seeded simulations behind docs/methodology.md (error rates of the verdicts,
##      TRIALS experiments per cell and outcome); rewrites the page's generated tables
TRIALS ?= 1000
sim:
	$(GO) run ./cmd/simtables -trials $(TRIALS)

## fuzz: every fuzz target for FUZZTIME each (make test runs their seed corpora only),
## printing the executions each made; a crash stops it and is kept in testdata/fuzz/
FUZZTIME ?= 60s
FUZZ_TARGETS := model/spec:FuzzParse model/spec:FuzzParseGate model/lanekind:FuzzParseOutput \
	model/receipt:FuzzParseRecords model/receipt:FuzzPlan model/receipt:FuzzManifest \
	driftcheck:FuzzParseScenarios verbs/ledger:FuzzParsePage verbs/ledger:FuzzParseDirections
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; out=$$(mktemp); \
		if ! $(GO) test ./$$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) > $$out 2>&1; then \
			cat $$out; rm -f $$out; echo "fuzz: $$fn ($$pkg) failed"; exit 1; fi; \
		echo "$$fn ($$pkg): $$(grep -o 'execs: [0-9]*' $$out | tail -n 1 | cut -d' ' -f2) execs in $(FUZZTIME), no crash"; \
		rm -f $$out; done

## sweep: kill -9 of ab at SWEEP_POINTS seeded random points (during builds, runs and the
## finish phase), each followed by --resume; checks that no run is lost or repeated and
## that no process or temporary file of the runs is left (make test runs 4 points)
SWEEP_POINTS ?= 20
SWEEP_SEED   ?= 1
sweep:
	$(GO) test ./cmd/flipbench/cli -run '^TestKillSweep$$' -count=1 -v -timeout 30m -args -sweep-points=$(SWEEP_POINTS) -sweep-seed=$(SWEEP_SEED)

vet:
	$(GO) vet ./...
	$(GO) vet -tags freshness_optimistic ./lanes/freshness/
	$(GO) vet -tags freshness_fifo ./lanes/freshness/
	$(GO) vet -tags pluginhost_fair ./examples/pluginhost/ ./lanes/pluginhost/

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)
