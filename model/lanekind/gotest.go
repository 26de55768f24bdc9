package lanekind

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
)

// gotestKind runs Go benchmarks compiled with go test -c: one fresh test binary process
// per run, Warmup+Samples repetitions of exactly the lane's benchmark (-test.count), of
// which the first Warmup are dropped.
type gotestKind struct{}

func (gotestKind) Name() string { return Gotest }

func (gotestKind) Check(h Harness, _ bool) []Problem {
	var ps []Problem
	if h.Package == "" {
		ps = append(ps, Problem{"package", "is required for kind gotest"})
	}
	if len(h.Command) > 0 {
		ps = append(ps, Problem{"command", "only for kind exec"})
	}
	if len(h.Build) > 0 {
		ps = append(ps, Problem{"build", "only for kind exec"})
	}
	for _, f := range []struct{ name, v string }{{"op-start", h.OpStart}, {"op-end", h.OpEnd}} {
		if f.v != "" {
			ps = append(ps, Problem{f.name, "only for kind exec: a gotest lane counts its benchmark function"})
		}
	}
	if h.Benchtime != "" && !ValidBenchtime(h.Benchtime) {
		ps = append(ps, Problem{"benchtime", "must be a duration like 100ms or a count like 1000x; got " + strconv.Quote(h.Benchtime)})
	}
	return ps
}

// ValidBenchtime reports whether s is a go test -benchtime value: a count "Nx" or a
// positive duration.
func ValidBenchtime(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		i, err := strconv.Atoi(n)
		return err == nil && i > 0
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}

// Build is go test -c. Flags whose value is empty are left out when it is expanded;
// -trimpath keeps the worktree's (random) path out of the binary, so the same source
// builds the same bytes.
func (gotestKind) Build(h Harness) (Build, *Problem) {
	bin := path.Base(path.Clean(filepath.ToSlash(h.Package)))
	if bin == "." || bin == ".." || bin == "/" {
		bin = "harness"
	}
	return Build{
		Template:  []string{"go", "test", "-c", "-trimpath", "-o", "{out}", "-tags", "{tags}", "-ldflags", "{ldflags}", "{pkg}"},
		Bin:       bin + ".test",
		NeedsGo:   true,
		TestsOnly: true,
		Testdata:  true,
	}, nil
}

// DefaultBenchtime is the -test.benchtime of gotest lanes when the harness sets none: one
// operation per sample. Lanes run with -test.benchmem, so their samples carry B/op and
// allocs/op, as go test -bench -benchmem prints them.
const DefaultBenchtime = "1x"

func (gotestKind) Command(h Harness) []string {
	bt := h.Benchtime
	if bt == "" {
		bt = DefaultBenchtime
	}
	return []string{"{bin}", "-test.run", "^$", "-test.bench", "{bench}", "-test.benchtime", bt, "-test.count", "{count}", "-test.benchmem"}
}

// BenchPattern returns the go test -bench expression that selects exactly the benchmark
// lane: every level of its name quoted and anchored, "^BenchmarkGet$/^size=10$" for the
// lane "Get/size=10". go test matches each slash-separated level of the expression
// against its level of a name, unanchored: "^BenchmarkGet/size=10$" would also run
// BenchmarkGetAll/size=10.
func BenchPattern(lane string) string {
	levels := strings.Split("Benchmark"+lane, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	return strings.Join(levels, "/")
}

func (gotestKind) ListArgs(bin string) []string { return []string{bin, "-test.list", "^Benchmark"} }

// Lanes returns the benchmarks of -test.list output without their Benchmark prefix.
func (gotestKind) Lanes(listing []byte) []string {
	var lanes []string
	for l := range strings.SplitSeq(string(listing), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "Benchmark"); ok && name != "" {
			lanes = append(lanes, name)
		}
	}
	return lanes
}

// Offers looks for the lane's top-level benchmark: a sub-benchmark lane ("Get/size=10")
// needs BenchmarkGet, since -test.list does not list sub-benchmarks.
func (gotestKind) Offers(listed []string, lane string) bool {
	top, _, _ := strings.Cut(lane, "/")
	return slices.Contains(listed, top)
}

// Benchtime reads -test.benchtime from command; without it go test runs 1s.
func (gotestKind) Benchtime(command []string) (string, bool) {
	for i, a := range command {
		if (a == "-test.benchtime" || a == "-benchtime") && i+1 < len(command) {
			return command[i+1], true
		}
	}
	return "1s", true
}

// Prepare runs the lane's command in one process; a run with fixed Iterations gets
// -test.benchtime Nx instead of the command's benchtime.
func (gotestKind) Prepare(r Run) []Proc {
	if r.Iterations > 0 {
		r.Argv = WithIterations(r.Argv, r.Iterations)
	}
	return runOnce(r)
}

// WithIterations returns a copy of a gotest lane command whose -test.benchtime is n
// iterations per sample ("Nx"), added when the command has none.
func WithIterations(argv []string, n int) []string {
	out := slices.Clone(argv)
	bt := strconv.Itoa(n) + "x"
	for i, a := range out {
		if (a == "-test.benchtime" || a == "-benchtime") && i+1 < len(out) {
			out[i+1] = bt
			return out
		}
		if v, ok := strings.CutPrefix(a, "-test.benchtime="); ok && v != "" {
			out[i] = "-test.benchtime=" + bt
			return out
		}
	}
	return append(out, "-test.benchtime", bt)
}

// IsDuration reports whether a benchtime is a duration ("100ms"), which go test turns
// into a b.N ramp-up in every sample, rather than a count ("1000x").
func IsDuration(benchtime string) bool {
	d, err := time.ParseDuration(benchtime)
	return err == nil && d > 0
}

// Collect drops the warmup repetitions, which the test binary prints like the others.
func (gotestKind) Collect(r Run, outs []Output) (Samples, error) {
	out, err := one(outs)
	if err != nil {
		return Samples{}, err
	}
	return ParseOutput(out.Stdout, r.Lane, r.Samples, r.Warmup, r.Unit)
}

// runCleanup is the testing package's function that runs right after every call of a
// benchmark function returns, and once before the first (the tests' cleanup) and after
// the last (the top-level benchmark's): from one entry to the next is a measured call.
// The benchmark function's own entry is not used: testing calls every benchmark on a
// new goroutine after a garbage collection, and callgrind, following one call stack per
// thread, then often fails to see the call.
const runCleanup = "testing.(*common).runCleanup"

// Counter counts the calls of the lane's benchmark function, from one entry of
// runCleanup to the next. It needs a top-level benchmark (a sub-benchmark's calls are
// not delimited by the top-level cleanups) and a benchtime that fixes b.N.
func (gotestKind) Counter(h Harness, lane string) (receipt.Counter, *Problem) {
	if strings.Contains(lane, "/") {
		return receipt.Counter{}, &Problem{"", "a sub-benchmark lane cannot count instructions (metric: instructions): its function is a closure callgrind cannot name; make it a top-level benchmark"}
	}
	bt := h.Benchtime
	if bt == "" {
		bt = DefaultBenchtime
	}
	n, err := strconv.Atoi(strings.TrimSuffix(bt, "x"))
	if !strings.HasSuffix(bt, "x") || err != nil || n < 1 {
		return receipt.Counter{}, &Problem{"benchtime", fmt.Sprintf("must be a count like 100x for lanes that count instructions (metric: instructions), got %q: a duration lets b.N depend on how fast the lane runs, and under callgrind it runs some 50 times slower", bt)}
	}
	return receipt.Counter{Tool: CounterTool, End: runCleanup, Frame: 1, Iterations: n}, nil
}
