package lanekind

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/flipbench/flipbench/model/receipt"
)

// Lane metrics: what a lane's samples measure.
const (
	// MetricWall is the default: the lane's own output, usually the wall time it reads
	// from its clock.
	MetricWall = "wall"
	// MetricInstructions is the number of instructions one operation executes, counted
	// under Valgrind's callgrind (see Counted).
	MetricInstructions = "instructions"
	// MetricCPU is the lane's time per operation less the time a neighbour took its CPU:
	// each sample's wall time scaled by the share of the sample's interval the process ran
	// on a CPU, as the kernel counted it (docs/busy-host.md). Only for lanes that never
	// wait (CPU-bound in both arms); the analysis refuses a run whose process was blocked.
	MetricCPU = "cpu"
	// MetricAuto is MetricCPU for a lane whose processes never wait, in either arm, and
	// MetricWall for one that does (a lock, I/O, parked goroutines), from the kernel's
	// counts of the run so far: compare's and the gate's default.
	MetricAuto = "auto"
)

// CountedFloorPct is the default effect floor of a counted lane (metric instructions): a
// count repeats to a few hundredths of a percent, so the 3% floor of timed lanes would call
// a 1% change in work neutral.
const CountedFloorPct = 0.5

// DefaultFloorPct returns the effect floor a lane of the given metric takes when neither
// the lane nor the spec's drift section sets one: CountedFloorPct for counted lanes, 0
// (the drift check's default) otherwise.
func DefaultFloorPct(metric string) float64 {
	if metric == MetricInstructions {
		return CountedFloorPct
	}
	return 0
}

// NoiseGroup returns the noise group of a lane of the given metric: lanes borrow noise
// only from lanes of their group (driftcheck.Lane.Group), so a counted lane never borrows a
// timed lane's noise. Timed lanes are the group "".
func NoiseGroup(metric string) string {
	if metric == MetricInstructions {
		return MetricInstructions
	}
	return ""
}

// Metrics returns the allowed values of a metric field.
func Metrics() []string { return []string{MetricWall, MetricInstructions, MetricCPU, MetricAuto} }

// InstructionsUnit is the unit of an instruction-count lane's samples, in receipts and
// .bench files.
const InstructionsUnit = "instructions/op"

// CounterTool is the Valgrind tool that counts.
const CounterTool = "callgrind"

// ForLane returns the kind that runs lane of an arm of kind name: the kind itself, or, for
// a lane that counts instructions, the kind wrapped in the counter.
func ForLane(name string, lane receipt.Lane) (Kind, error) {
	k, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if lane.Metric != MetricInstructions {
		return k, nil
	}
	if lane.Counter == nil {
		return nil, fmt.Errorf("lane %s counts instructions but the plan says nothing of how (no counter)", lane.Name)
	}
	return Counted(k, *lane.Counter), nil
}

// PinnedEnv returns the environment an instruction-count lane's processes run with, given
// the arm's env (KEY=VALUE). Go programs need them under callgrind:
//
//   - GOMAXPROCS=1: Valgrind runs one thread at a time, in an order that depends on
//     timing; with one P every goroutine's work is on one thread, in the program's own
//     order, and no idle thread spins looking for work.
//   - GODEBUG=asyncpreemptoff=1 (added to the arm's GODEBUG): callgrind aborts on the
//     signals Go uses to preempt goroutines.
//   - GODEBUG=cpu.rdtscp=off (added too): on hosts whose CPU hides RDTSCP from the guest
//     (an AMD EPYC virtual machine here), Valgrind 3.19 still reports it to the program
//     and then cannot execute it, so a Go runtime that reads the clock in a contended
//     lock (runtime.cputicks) dies with SIGILL in some runs; without RDTSCP the runtime
//     reads the clock with RDTSC behind fences, which Valgrind runs.
//   - GODEBUG=memprofilerate=0 (added too, unless the arm's GODEBUG sets memprofilerate):
//     a binary that can write a heap profile (every test binary) records the call stack
//     of one allocation in about 512 KiB, chosen at random, and each record unwinds the
//     stack in thousands of instructions, so the same operation counted one, two or
//     three records (FeedJSON: up to 0.5% between samples, measured under callgrind).
//   - GOGC=off, unless the arm sets GOGC: when the collector runs is decided from timings,
//     so with it on, the same operation counts a collection in one sample and not in the
//     next (a map-building loop varied by 6% between samples with GOGC=100). With it off an
//     allocation counts its malloc path, not the collection it would cause later.
func PinnedEnv(armEnv []string) []string {
	var godebug []string
	gogc, profile := "off", "memprofilerate=0"
	for _, kv := range armEnv {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GODEBUG":
			godebug = nil
			if v != "" {
				godebug = append(godebug, v)
			}
			for s := range strings.SplitSeq(v, ",") {
				if strings.HasPrefix(s, "memprofilerate=") {
					profile = ""
				}
			}
		case "GOGC":
			gogc = v
		}
	}
	godebug = append(godebug, "asyncpreemptoff=1", "cpu.rdtscp=off")
	if profile != "" {
		godebug = append(godebug, profile)
	}
	return []string{"GOMAXPROCS=1", "GODEBUG=" + strings.Join(godebug, ","), "GOGC=" + gogc}
}

// countedKind is a kind whose lanes are counted: Counted.
type countedKind struct {
	Kind
	c receipt.Counter
}

// Counted wraps k so that each run of a lane executes twice: first natively, with the
// counter's pinned environment (its wall time is what counting is compared with), then
// under callgrind, which counts every instruction the process executes, on every thread,
// but for the Go runtime's work paced by the clock (its monitor and its scavenger; see
// pacedFns), and dumps its counts at each entry of the functions
// that delimit a measured call (c.Start and c.End; see measuredCalls). What happens
// outside measured calls (process start, set-up before the first call, printing between
// an exec lane's operations) is left out; system calls, I/O and waiting execute no
// instructions of the program and are not counted at all. Only entries of small
// functions that never block are used, never returns nor the entry of the benchmark
// itself: Go runs goroutines on one thread with stacks of their own and moves them, and
// callgrind, which follows one call stack per thread, then loses returns and some calls.
//
// Each sample is the instructions of one operation: for a gotest lane, the difference
// between its call with b.N = Iterations and the call with b.N = 1 that precedes it in
// the same repetition, over Iterations-1 (set-up inside the benchmark function and the
// testing package's work around each call cancel), or one call over Iterations where
// there is one call per repetition (benchtime 1x, or b.Loop); for an exec lane, one
// measured call.
//
// A lane whose cost is waiting is refused, since instructions do not measure waiting: one
// that changes GOMAXPROCS inside a measured call (its cost is concurrency), or one during
// whose operations the process has nothing to run in at least half of the samples
// (waiting on a timer, I/O or another thread).
func Counted(k Kind, c receipt.Counter) Kind { return countedKind{Kind: k, c: c} }

// Prepare starts the lane natively, then under callgrind, both with the pinned
// environment.
func (k countedKind) Prepare(r Run) []Proc {
	env := append(append([]string(nil), r.Env...), PinnedEnv(r.Env)...)
	vg := []string{"valgrind", "--tool=" + CounterTool, "-q", "--callgrind-out-file=" + filepath.Join(r.Scratch, profileBase)}
	if k.c.Start != "" {
		vg = append(vg, "--dump-before="+k.c.Start)
	}
	vg = append(vg, "--dump-before="+k.c.End, "--compress-strings=no", "--compress-pos=no", "--")
	return []Proc{{Argv: r.Argv, Env: env}, {Argv: append(vg, r.Argv...), Env: env}}
}

// Collect checks both processes' output with the wrapped kind, reads callgrind's dumps
// and returns instructions per operation, one value per sample.
func (k countedKind) Collect(r Run, outs []Output) (Samples, error) {
	if len(outs) != 2 {
		return Samples{}, fmt.Errorf("internal error: %d process outputs for a counted run, want 2", len(outs))
	}
	own := r
	own.Unit = "" // the lane prints its own metrics; the count is the samples
	if _, err := k.Kind.Collect(own, outs[:1]); err != nil {
		return Samples{}, fmt.Errorf("native run: %w", err)
	}
	printed, err := k.Kind.Collect(own, outs[1:])
	if err != nil {
		return Samples{}, fmt.Errorf("run under callgrind: %w", err)
	}
	prof, err := readProfile(r.Scratch)
	if err != nil {
		return Samples{}, err
	}
	if len(prof.parts) == 1 {
		return Samples{}, fmt.Errorf("callgrind saw no measured call (%s): it finds functions by the binary's symbol table, so the binary must keep it (not built with -ldflags=-s, nor a go run or go test temporary binary)", k.c.Span())
	}
	calls, err := measuredCalls(prof.parts, k.c)
	if err != nil {
		return Samples{}, err
	}
	vals, measured, err := perOperation(calls, k.c, r.Warmup, r.Samples)
	if err != nil {
		return Samples{}, err
	}
	if err := refuseWaiting(calls, measured); err != nil {
		return Samples{}, err
	}
	s := Samples{Values: vals, Unit: InstructionsUnit, Counting: &receipt.Counting{
		Tool:           prof.creator,
		Calls:          len(calls),
		NativeSeconds:  outs[0].Ended.Sub(outs[0].Started).Seconds(),
		CountedSeconds: outs[1].Ended.Sub(outs[1].Started).Seconds(),
	}}
	// The lane's own metrics are kept, but not its clock: under callgrind it reads a
	// slowed-down time.
	for unit, v := range printed.Metrics {
		if !timeUnit(unit) {
			if s.Metrics == nil {
				s.Metrics = map[string][]float64{}
			}
			s.Metrics[unit] = v
		}
	}
	if !timeUnit(printed.Unit) {
		if s.Metrics == nil {
			s.Metrics = map[string][]float64{}
		}
		s.Metrics[printed.Unit] = printed.Values
	}
	return s, nil
}

// timeUnit reports whether a metric is read from the clock: a time or a rate.
func timeUnit(unit string) bool {
	return strings.HasPrefix(unit, "ns/") || strings.HasPrefix(unit, "sec/") || strings.HasSuffix(unit, "/s")
}

// call is one measured call: the instructions counted from its start to its end, and the
// calls made meanwhile that show waiting.
type call struct {
	ir       float64
	idle     int // the scheduler found nothing to run and gave up its P
	maxprocs int // GOMAXPROCS changed the number of Ps
	gcs      int // garbage collections started (the testing package runs one before every call)
	ops      int // the operations a recorded sample's call (or difference of calls) holds
}

// measuredCalls turns the dumps of one process, in order, into its measured calls. Every
// dump holds what was counted since the previous one and names the entry that triggered
// it. With c.Start, a call runs from an entry of c.Start to the next entry of c.End;
// further entries of c.Start in between (the function restarted after growing its stack)
// belong to the same call, and entries of c.End outside a call are not ends. Without it,
// a call runs from one entry of c.End to the next, less the c.Frame first and last
// entries, which the framework makes.
func measuredCalls(parts []part, c receipt.Counter) ([]call, error) {
	if c.Start == "" {
		return framedCalls(parts, c)
	}
	var calls []call
	var cur call
	inside := false
	for _, p := range parts {
		if inside {
			cur.add(p)
		}
		switch {
		case p.trigger == "":
			if inside {
				return nil, fmt.Errorf("the process ended inside a measured call (an entry of %s with no entry of %s after it)", c.Start, c.End)
			}
		case matchFunction(c.Start, p.trigger):
			if !inside {
				inside, cur = true, call{}
			}
		case matchFunction(c.End, p.trigger):
			if inside {
				calls = append(calls, cur)
			}
			inside = false
		}
	}
	return calls, nil
}

// framedCalls is measuredCalls without a start function: the calls between consecutive
// entries of c.End, less the framework's c.Frame at either end.
func framedCalls(parts []part, c receipt.Counter) ([]call, error) {
	var segs []call
	var cur call
	ends := 0
	for _, p := range parts {
		if ends > 0 {
			cur.add(p)
		}
		if p.trigger != "" && matchFunction(c.End, p.trigger) {
			if ends > 0 {
				segs = append(segs, cur)
			}
			ends++
			cur = call{}
		}
	}
	// Entries e1..em make m-1 segments, the j-th ending at e(j+1); the calls end at
	// e(Frame+1)..e(m-Frame).
	lo, hi := max(c.Frame-1, 0), len(segs)-c.Frame
	if hi <= lo {
		return nil, nil
	}
	return segs[lo:hi], nil
}

// add counts part p into the call.
func (cl *call) add(p part) {
	cl.ir += p.ir
	cl.idle += p.idle
	cl.maxprocs += p.maxprocs
	cl.gcs += p.gcs
}

// perOperation turns the measured calls of a run into instructions per operation, one per
// sample after the warmup ones, and returns the calls of the recorded samples.
func perOperation(calls []call, c receipt.Counter, warmup, samples int) ([]float64, []call, error) {
	n := max(c.Iterations, 1)
	reps := warmup + samples
	var vals []float64
	var measured []call
	switch {
	case len(calls) == 2*reps && n > 1:
		// b.N loops: testing calls the benchmark with b.N = 1, then with b.N = n.
		for i := warmup; i < reps; i++ {
			one, all := calls[2*i], calls[2*i+1]
			v := (all.ir - one.ir) / float64(n-1)
			if v <= 0 {
				return nil, nil, fmt.Errorf("sample %d: the call with b.N=%d counted %.0f instructions, the one with b.N=1 %.0f: the work does not grow with b.N", i-warmup+1, n, all.ir, one.ir)
			}
			vals = append(vals, v)
			measured = append(measured, call{ir: all.ir - one.ir, idle: all.idle - one.idle, gcs: all.gcs - one.gcs, maxprocs: all.maxprocs + one.maxprocs, ops: n - 1})
		}
	case len(calls) == reps:
		for i := warmup; i < reps; i++ {
			if calls[i].ir <= 0 {
				return nil, nil, fmt.Errorf("sample %d: no instructions counted (%s)", i-warmup+1, c.Span())
			}
			vals = append(vals, calls[i].ir/float64(n))
			m := calls[i]
			m.ops = n
			measured = append(measured, m)
		}
	default:
		want := fmt.Sprintf("%d (one per operation)", reps)
		if n > 1 {
			want = fmt.Sprintf("%d (b.N=1 then b.N=%d, per repetition) or %d (b.Loop)", 2*reps, n, reps)
		}
		return nil, nil, fmt.Errorf("callgrind saw %d measured calls (%s), want %s", len(calls), c.Span(), want)
	}
	return vals, measured, nil
}

// refuseWaiting returns an error when the calls show that the lane's cost is waiting,
// which instructions do not measure: GOMAXPROCS changed in any call (a warmup call that
// raises it makes the recorded ones concurrent too), or, in at least half of the
// recorded samples (measured), the scheduler idle at least once per operation and once
// per million instructions, not counting once per garbage collection in the sample (the
// one the testing package runs before every benchmark call leaves the scheduler idle for
// a moment). The second bound keeps a CPU-bound lane whose work makes a few short
// system calls (SQLite locking its file) from being taken for one that waits.
func refuseWaiting(all, measured []call) error {
	for _, m := range all {
		if m.maxprocs > 0 {
			return errors.New("instructions do not measure waiting: the lane changes GOMAXPROCS inside its measured calls, so its cost is concurrency and waiting for other threads; measure it by wall time (metric: wall)")
		}
	}
	waits, idle, ops := 0, 0, 0
	for _, m := range measured {
		if idle := m.idle - m.gcs; m.ops > 0 && idle >= m.ops && float64(idle)*1e6 >= m.ir {
			waits++
		}
		idle += max(m.idle-m.gcs, 0)
		ops += m.ops
	}
	if len(measured) > 0 && 2*waits >= len(measured) {
		return fmt.Errorf("instructions do not measure waiting: the process had nothing to run at least once per operation (and per million instructions) in %d of %d samples (%s times per operation), so the lane waits on a timer, I/O or another thread; measure it by wall time (metric: wall)",
			waits, len(measured), formatRate(float64(idle)/float64(max(ops, 1))))
	}
	return nil
}

// formatRate prints a rate with two significant digits.
func formatRate(x float64) string {
	if x >= 10 || x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2g", x)
}
