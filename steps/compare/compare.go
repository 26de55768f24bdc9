// Package compare is flipbench's first comparison with nothing written: the Go benchmarks
// of a package, measured at a base commit and at a candidate (the working tree, by
// default), with the gate's sequential protocol of order-flipped pass pairs, and shown as
// one table in the manner of benchstat and hyperfine.
//
// The pipeline is the one every measuring verb shares (package pipeline): Experiment makes
// the experiment with no lanes; once the arms are built, Select lists their benchmarks
// through the run's harness.Starter (harness.ListLanes, then one run of each matching
// benchmark at one iteration to find its sub-benchmarks), keeps those matching the
// --bench expression as go test would, and resolves the protocol; Pending keeps measuring
// the lanes whose verdict is not decided; Table renders the receipt as the comparison
// table.
package compare

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// DefaultBenchtime is the -test.benchtime of a comparison that names none: long enough
// that a b.N loop measures its operation, not its setup, and short enough for a few dozen
// processes a minute.
const DefaultBenchtime = "100ms"

// Label names a comparison's receipts: results/<stamp>-exp000-compare.
const Label = "compare"

// DefaultProtocol is a comparison's protocol: 6 samples after 1 warmup per process, 2
// collections, seed 1, and the gate's stopping rule (spec.DefaultGateSequential): rounds
// of one pass pair per collection from 2 to 20, within 10 minutes of measuring. Fewer
// samples than the gate's default: a comparison's lanes run calibrated iteration counts,
// whose noise is between processes, so shorter processes buy more pairs. Overrides drops
// the warmup for a duration benchtime (see CalibratedWarmup).
func DefaultProtocol() spec.Protocol {
	s := spec.DefaultGateSequential()
	return spec.Protocol{Samples: 6, Warmup: 1, Collections: 2, Seed: 1, Sequential: &s}
}

// CalibratedWarmup is the warmup of a comparison whose benchtime is a duration: none.
// Its lanes' iteration counts are calibrated so that a sample takes about the benchtime
// (pipeline.FixIterations), and go test calls the benchmark once at b.N = 1 right before
// every sample, which runs its setup and warms its code; a warmup sample would add a
// seventh of the process to time nothing (at 6 samples). A count benchtime keeps
// DefaultProtocol's warmup sample: its samples may be short enough to run cold.
const CalibratedWarmup = 0

// Options say what to compare.
type Options struct {
	// ID is the experiment number: 0 for a comparison, a page's number when the run is
	// saved as a page.
	ID int
	// Title names the comparison in the receipt.
	Title string
	// Package is the Go package holding the benchmarks, relative to the repository root
	// ("." or "./btree").
	Package string
	// Base is the base commit (a full hash); Candidate a ref or armbuild.WorktreeRef.
	Base, Candidate string
	// Benchtime is the lanes' -test.benchtime; "" means DefaultBenchtime.
	Benchtime string
	// Date is the day of the comparison, YYYY-MM-DD.
	Date string
}

// Experiment returns the experiment a comparison runs, without lanes (Select adds them):
// a gotest harness over the package, the base arm at the base commit and the cand arm at
// the candidate, and DefaultProtocol (Overrides adjusts its warmup).
func Experiment(o Options) *spec.Experiment {
	bt := o.Benchtime
	if bt == "" {
		bt = DefaultBenchtime
	}
	return &spec.Experiment{
		ID:       o.ID,
		Title:    o.Title,
		Date:     o.Date,
		Status:   spec.StatusRunning,
		Category: spec.CategoryMeasurement,
		// Each lane by its on-CPU time where its processes never wait, so that a busy
		// host's time slices do not pose as the code's (docs/busy-host.md).
		Harness:  spec.Harness{Kind: lanekind.Gotest, Package: o.Package, Benchtime: bt, Metric: lanekind.MetricAuto},
		Arms:     []spec.Arm{{Name: spec.BaseArm, Ref: o.Base}, {Name: CandArm, Ref: o.Candidate}},
		Protocol: DefaultProtocol(),
	}
}

// Overrides returns the command line's overrides ov with the warmup a comparison of e
// runs: CalibratedWarmup for a duration benchtime, unless ov sets a warmup.
func Overrides(e *spec.Experiment, ov spec.Overrides) spec.Overrides {
	if ov.Warmup == nil && lanekind.IsDuration(e.Harness.Benchtime) {
		w := CalibratedWarmup
		ov.Warmup = &w
	}
	return ov
}

// CandArm is the name of a comparison's candidate arm.
const CandArm = "cand"

// Select lists the benchmarks of the built arms, starting the processes through st, and
// returns the experiment with a lane for
// every benchmark that every arm has and that bench (a go test -bench expression, ""
// for every benchmark) selects, with the protocol resolved under ov. A benchmark with
// sub-benchmarks becomes one lane per sub-benchmark, found by running it once at one
// iteration in the base arm. notes says what was left out and why.
func Select(ctx context.Context, st harness.Starter, e *spec.Experiment, arms []receipt.Arm, bench string, role spec.Role, ov spec.Overrides) (exp *spec.Experiment, res spec.Resolved, notes []string, err error) {
	match, err := Matcher(bench)
	if err != nil {
		return nil, spec.Resolved{}, nil, err
	}
	var common []string
	for i, a := range arms {
		names, listed, err := harness.ListLanes(ctx, st, a)
		if err != nil {
			return nil, spec.Resolved{}, nil, err
		}
		if !listed {
			return nil, spec.Resolved{}, nil, fmt.Errorf("arm %s: its benchmarks cannot be listed", a.Name)
		}
		if i == 0 {
			common = names
			continue
		}
		for _, n := range common {
			if !slices.Contains(names, n) {
				notes = append(notes, fmt.Sprintf("Benchmark%s is not in arm %s: left out", n, a.Name))
			}
		}
		common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(names, n) })
	}
	var lanes []string
	for _, top := range common {
		if !match.Top("Benchmark" + top) {
			continue
		}
		subs, err := subBenchmarks(ctx, st, arms[0], top)
		if err != nil {
			return nil, spec.Resolved{}, nil, err
		}
		if len(subs) == 0 {
			notes = append(notes, fmt.Sprintf("Benchmark%s printed no result in one run at one iteration (it skips, or fails): left out", top))
		}
		for _, name := range subs {
			switch {
			case !match.Full("Benchmark" + name):
			case strings.ContainsAny(name, `\^$*+?()[]{}|`) || !lanePattern.MatchString(name):
				notes = append(notes, fmt.Sprintf("Benchmark%s: a name with regular expression or other special characters cannot be selected alone: left out", name))
			default:
				lanes = append(lanes, name)
			}
		}
	}
	if len(lanes) == 0 {
		what := "no benchmarks"
		if len(common) > 0 {
			what = "benchmarks " + strings.Join(prefixed(common), ", ")
		}
		if bench != "" {
			return nil, spec.Resolved{}, notes, fmt.Errorf("--bench %q selects no benchmark of %s (it has %s)", bench, e.Harness.Package, what)
		}
		return nil, spec.Resolved{}, notes, fmt.Errorf("package %s has no benchmarks to compare (it has %s)", e.Harness.Package, what)
	}
	out := *e
	out.Lanes = nil
	for _, l := range lanes {
		sl := spec.Lane{Name: l, Role: role}
		if role == spec.RolePrimary {
			sl.Expect = spec.ExpectFaster
		}
		out.Lanes = append(out.Lanes, sl)
	}
	res, err = out.Resolve(ov)
	if err != nil {
		return nil, spec.Resolved{}, notes, err
	}
	return &out, res, notes, nil
}

// prefixed puts Benchmark before every name.
func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "Benchmark" + n
	}
	return out
}

// dryRunTimeout bounds the one-iteration run that finds a benchmark's sub-benchmarks.
const dryRunTimeout = 2 * time.Minute

// subBenchmarks runs benchmark top of arm a once at one iteration, through st, and returns
// the names of the results it printed, without the Benchmark prefix and the GOMAXPROCS
// suffix: top itself, or its sub-benchmarks ("Get/size=10").
func subBenchmarks(ctx context.Context, st harness.Starter, a receipt.Arm, top string) ([]string, error) {
	p := st.Start(ctx, harness.Command{Argv: []string{a.Bin, "-test.run", "^$", "-test.bench", "^Benchmark" + regexp.QuoteMeta(top) + "$",
		"-test.benchtime", "1x", "-test.count", "1"}, Env: a.Env, Dir: a.Dir, Timeout: dryRunTimeout})
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("listing the sub-benchmarks of Benchmark%s in arm %s: %w", top, a.Name, ctx.Err())
	case p.TimedOut:
		return nil, fmt.Errorf("listing the sub-benchmarks of Benchmark%s in arm %s: %w", top, a.Name, p.Err)
	case p.Err != nil:
		// A benchmark that fails is reported by the runs; here it has no results.
		return nil, nil
	}
	var names []string
	r := benchfmt.NewReader(bytes.NewReader(p.Stdout), a.Bin)
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			n := gomaxprocs.ReplaceAllString(string(res.Name.Full()), "")
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names, nil
}

// lanePattern is what a lane name must look like (spec.LanePattern).
var lanePattern = regexp.MustCompile(spec.LanePattern)

// gomaxprocs matches the -N suffix go test adds to a benchmark's name.
var gomaxprocs = regexp.MustCompile(`-[0-9]+$`)

// Match selects benchmarks as go test -bench does: the expression is split at slashes
// into one expression per level of the name (BenchmarkGet/size=10 has two), each matched,
// unanchored, against its level; a name with more levels than the expression matches on
// the levels it has.
type Match struct {
	levels []*regexp.Regexp // nil: every benchmark
}

// Matcher compiles a go test -bench expression; "" matches every benchmark.
func Matcher(expr string) (Match, error) {
	if expr == "" {
		return Match{}, nil
	}
	var m Match
	for _, part := range splitLevels(expr) {
		re, err := regexp.Compile(part)
		if err != nil {
			return Match{}, fmt.Errorf("--bench %q: %v", expr, err)
		}
		m.levels = append(m.levels, re)
	}
	return m, nil
}

// Top reports whether a top-level benchmark ("BenchmarkGet") may have matching results:
// its name matches the first level.
func (m Match) Top(name string) bool {
	return len(m.levels) == 0 || m.levels[0].MatchString(name)
}

// Full reports whether a result's full name ("BenchmarkGet/size=10") matches every level.
func (m Match) Full(name string) bool {
	parts := strings.Split(name, "/")
	for i, re := range m.levels {
		if i < len(parts) && !re.MatchString(parts[i]) {
			return false
		}
	}
	return true
}

// splitLevels splits a -bench expression at the slashes outside brackets and parentheses,
// as the testing package does.
func splitLevels(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '/':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// Pending returns the lanes whose verdict pooled over collections is not decided yet:
// what the next round of a comparison measures.
func Pending(rep driftcheck.Report) []string {
	var out []string
	for _, p := range rep.Pooled {
		if !p.Verdict.Decided() && !slices.Contains(out, p.Lane) {
			out = append(out, p.Lane)
		}
	}
	return out
}
