package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// benchBinary answers gotest lane commands as a test binary would: a duration benchtime
// runs the lane until a sample takes the benchtime, Nx runs N iterations; every
// operation of arm takes perOp[arm], every sample setup outside the timer, and every
// process start-up on top.
type benchBinary struct {
	perOp   map[string]time.Duration
	startup time.Duration
	setup   time.Duration
	// untimed is time outside the timer per operation (a timer stopped inside the loop).
	untimed time.Duration
	seen    [][]string
}

func (b *benchBinary) Start(_ context.Context, c harness.Command) harness.Process {
	b.seen = append(b.seen, c.Argv)
	arm := strings.TrimSuffix(c.Argv[0], ".test")
	flag := func(name string) string {
		i := slices.Index(c.Argv, name)
		if i < 0 || i+1 >= len(c.Argv) {
			return ""
		}
		return c.Argv[i+1]
	}
	op := b.perOp[arm]
	bt := flag("-test.benchtime")
	n := 0
	if s, ok := strings.CutSuffix(bt, "x"); ok {
		n, _ = strconv.Atoi(s)
	} else {
		d, _ := time.ParseDuration(bt)
		n = int(d / op)
	}
	count, _ := strconv.Atoi(flag("-test.count"))
	name := strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(flag("-test.bench"), "$/^", "/"), "^"), "$")
	var out strings.Builder
	for range count {
		fmt.Fprintf(&out, "%s-2\t%d\t%d ns/op\n", name, n, op.Nanoseconds())
	}
	start := time.Unix(1000, 0)
	wall := b.startup + time.Duration(count*n)*(op+b.untimed) + time.Duration(count)*b.setup
	return harness.Process{Stdout: []byte(out.String()), Started: start, Ended: start.Add(wall)}
}

func gotestPlan(benchtime string, lanes ...string) *receipt.Plan {
	kind, _ := lanekind.Lookup(lanekind.Gotest)
	cmd := kind.Command(lanekind.Harness{Kind: lanekind.Gotest, Benchtime: benchtime})
	p := &receipt.Plan{Protocol: receipt.Protocol{Samples: 6, Warmup: 1, Passes: 4, Collections: 2},
		Arms: []receipt.Arm{{Name: "base", Bin: "base.test", Kind: lanekind.Gotest, Command: cmd}, {Name: "cand", Bin: "cand.test", Kind: lanekind.Gotest, Command: cmd}}}
	for _, l := range lanes {
		p.Lanes = append(p.Lanes, receipt.Lane{Name: l, Benchtime: benchtime})
	}
	return p
}

func TestFixIterations(t *testing.T) {
	fixed := clock.Fixed(time.Unix(0, 0))
	for _, tc := range []struct {
		name      string
		base      time.Duration
		cand      time.Duration
		benchtime string
		wantN     int
		replanned bool
	}{
		{"same speed", 10 * time.Microsecond, 10 * time.Microsecond, "100ms", 10_000, false},
		{"cand 1.5x slower stays", 10 * time.Microsecond, 15 * time.Microsecond, "100ms", 10_000, false},
		// At the base's N a candidate sample takes 3x the benchtime: N comes from the
		// geometric mean, 100ms / sqrt(10µs x 30µs).
		{"cand 3x slower is re-planned", 10 * time.Microsecond, 30 * time.Microsecond, "100ms", 5774, true},
		{"cand 3x faster is re-planned", 30 * time.Microsecond, 10 * time.Microsecond, "100ms", 5774, true},
		{"an operation longer than the benchtime runs once", 300 * time.Millisecond, 300 * time.Millisecond, "100ms", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := &benchBinary{perOp: map[string]time.Duration{"base": tc.base, "cand": tc.cand}, startup: 20 * time.Millisecond}
			plan := gotestPlan(tc.benchtime, "Sub/small")
			it, err := FixIterations(context.Background(), plan, bin, fixed)
			if err != nil {
				t.Fatal(err)
			}
			cals := it.Lanes
			l := plan.Lanes[0]
			if l.Iterations != tc.wantN {
				t.Errorf("iterations %d, want %d", l.Iterations, tc.wantN)
			}
			if got := l.Replanned != ""; got != tc.replanned {
				t.Errorf("replanned %q, want re-planned %v", l.Replanned, tc.replanned)
			}
			// A re-planned N is a note, not a warning.
			if len(it.Warnings) > 0 {
				t.Errorf("warnings %v, want none", it.Warnings)
			}
			if got := strings.HasPrefix(it.Note(), "iteration counts re-planned for 1 of 1 lanes"); got != tc.replanned {
				t.Errorf("note %q, want one: %v", it.Note(), tc.replanned)
			}
			if len(cals) != 1 || cals[0].Overhead != 20*time.Millisecond {
				t.Errorf("calibrations %+v, want one with 20ms overhead", cals)
			}
			if l.Lengthened != "" || cals[0].PerSample != 0 {
				t.Errorf("lengthened %q, time outside the timer %s: want none", l.Lengthened, cals[0].PerSample)
			}
			// One calibration at the benchtime in base, one check at N in cand, both of
			// exactly the lane's benchmark.
			if len(bin.seen) != 2 {
				t.Fatalf("%d processes, want 2", len(bin.seen))
			}
			for i, want := range []string{tc.benchtime, fmt.Sprintf("%dx", cals[0].Iterations)} {
				if i == 1 && tc.replanned {
					continue // checked at the base's N, then re-planned
				}
				argv := strings.Join(bin.seen[i], " ")
				if !strings.Contains(argv, "-test.bench ^BenchmarkSub$/^small$ -test.benchtime "+want+" -test.count 1") {
					t.Errorf("process %d: %s, want benchtime %s, count 1", i, argv, want)
				}
			}
		})
	}
}

// A lane whose setup outside the timer takes more than a third of the benchtime per
// sample gets longer samples: the setup is then a third of a sample, and a sample at
// most 4x the benchtime.
func TestFixIterationsLengthens(t *testing.T) {
	fixed := clock.Fixed(time.Unix(0, 0))
	for _, tc := range []struct {
		setup, untimed time.Duration
		wantN          int
	}{
		{20 * time.Millisecond, 0, 10_000},  // a fifth of the 100ms benchtime: kept
		{60 * time.Millisecond, 0, 18_000},  // a 180ms sample makes it a third
		{500 * time.Millisecond, 0, 40_000}, // at most 4 x 100ms
		// Time outside the timer that grows with N: a longer sample does not spread it.
		{0, 10 * time.Microsecond, 10_000},
	} {
		bin := &benchBinary{perOp: map[string]time.Duration{"base": 10 * time.Microsecond, "cand": 10 * time.Microsecond},
			startup: 20 * time.Millisecond, setup: tc.setup, untimed: tc.untimed}
		plan := gotestPlan("100ms", "Seek")
		it, err := FixIterations(context.Background(), plan, bin, fixed)
		if err != nil {
			t.Fatal(err)
		}
		l := plan.Lanes[0]
		if l.Iterations != tc.wantN || it.Lanes[0].PerSample != tc.setup+time.Duration(10_000)*tc.untimed {
			t.Errorf("setup %s: %dx with %s outside the timer per sample, want %dx", tc.setup, l.Iterations, it.Lanes[0].PerSample, tc.wantN)
		}
		lengthened := tc.wantN != 10_000
		if (l.Lengthened != "") != lengthened || strings.Contains(it.Note(), "samples lengthened for 1 of 1 lanes") != lengthened {
			t.Errorf("setup %s: lengthened %q, note %q; want lengthened %v", tc.setup, l.Lengthened, it.Note(), lengthened)
		}
		// A calibration, a check, two processes that measure the time outside the timer
		// (every case's overhead is above a third of the benchtime), and one at the
		// longer N when it was considered.
		if want := 4 + map[bool]int{true: 1}[lengthened || tc.untimed > 0]; len(bin.seen) != want {
			t.Errorf("setup %s: %d processes, want %d", tc.setup, len(bin.seen), want)
		}
		if tc.untimed > 0 {
			continue
		}
		// The forecast's process: start-up and one setup, then a setup per further sample.
		if got, want := it.Lanes[0].ProcessTime("base", 6, 1), 20*time.Millisecond+tc.setup+7*time.Duration(tc.wantN)*10*time.Microsecond+6*tc.setup; got != want {
			t.Errorf("setup %s: process time %s, want %s", tc.setup, got, want)
		}
	}
}

func TestFixIterationsLeavesOtherLanes(t *testing.T) {
	fixed := clock.Fixed(time.Unix(0, 0))
	for _, bt := range []string{"1x", "500x", ""} {
		bin := &benchBinary{perOp: map[string]time.Duration{"base": time.Microsecond, "cand": time.Microsecond}}
		plan := gotestPlan(bt, "Get")
		if _, err := FixIterations(context.Background(), plan, bin, fixed); err != nil {
			t.Fatal(err)
		}
		if plan.Lanes[0].Iterations != 0 || len(bin.seen) != 0 {
			t.Errorf("benchtime %q: iterations %d after %d processes, want none", bt, plan.Lanes[0].Iterations, len(bin.seen))
		}
	}
}

// A lane with fixed iterations runs them in every process, whatever the command says.
func TestRunOnceFixedIterations(t *testing.T) {
	bin := &benchBinary{perOp: map[string]time.Duration{"base": time.Microsecond}}
	plan := gotestPlan("100ms", "Get")
	lane := plan.Lanes[0]
	lane.Iterations = 777
	rec := harness.RunOnce(context.Background(), bin, receipt.Run{Lane: "Get", Arm: "base"}, plan.Arms[0], lane, plan.Protocol)
	if !rec.OK() || !slices.Equal(rec.Iters, []int{777, 777, 777, 777, 777, 777}) {
		t.Fatalf("record %+v, want 6 samples of 777 iterations", rec)
	}
}

// failing answers every process with an error.
type failing struct{}

func (failing) Start(context.Context, harness.Command) harness.Process {
	return harness.Process{Exit: 2, Err: fmt.Errorf("exit status 2")}
}

// A lane whose calibration fails keeps its benchtime and says so in a warning.
func TestFixIterationsFailure(t *testing.T) {
	plan := gotestPlan("100ms", "Get")
	it, err := FixIterations(context.Background(), plan, failing{}, clock.Fixed(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Lanes[0].Iterations != 0 || len(it.Lanes) != 0 {
		t.Errorf("iterations %d, calibrations %v: want none", plan.Lanes[0].Iterations, it.Lanes)
	}
	if len(it.Warnings) != 1 || !strings.Contains(it.Warnings[0].Text, "lane Get: the iteration calibration failed (arm base: ") ||
		!strings.Contains(it.Warnings[0].Text, "it runs at benchtime 100ms") {
		t.Errorf("warnings %v", it.Warnings)
	}
}

// A calibration process whose sample waited for a CPU is measured again, at most
// quietAttempts times, and the quietest kept; a lane that waits about as much again (its
// own threads wait for each other) is not repeated further.
func TestQuietProbe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		waits    []float64
		calls    int
		kept     float64
		repeated int
		busy     bool
	}{
		{"a quiet sample runs once", []float64{0.05}, 1, 0.05, 0, false},
		{"a busy sample, then a quiet one", []float64{0.5, 0.05}, 2, 0.05, 1, false},
		{"waiting alike twice is the lane's own", []float64{0.5, 0.45}, 2, 0.45, 1, true},
		{"at most three processes", []float64{0.9, 0.6, 0.3, 0.01}, 3, 0.3, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			run := func(receipt.Arm, receipt.Lane, int, time.Duration) (probe, error) {
				p := probe{perOp: float64(calls), wait: tc.waits[calls]}
				calls++
				return p, nil
			}
			var repeated int
			var busy bool
			p, err := quietProbe(run, &repeated, &busy)(receipt.Arm{}, receipt.Lane{}, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.calls || p.wait != tc.kept || repeated != tc.repeated || busy != tc.busy {
				t.Errorf("%d processes, kept wait %g, %d repeated, busy %v; want %d, %g, %d, %v",
					calls, p.wait, repeated, busy, tc.calls, tc.kept, tc.repeated, tc.busy)
			}
		})
	}
}

// A rerun of the same binaries on the same host and placement reuses the newest earlier
// receipt's iteration counts and runs no calibration process; other binaries, another
// host, another benchtime or a calibration that stayed busy reuse nothing.
func TestReuseIterations(t *testing.T) {
	host := receipt.Snapshot{CPUModel: "cpu", CPUs: 2, Kernel: "6.1", GoVersion: "go1.26"}
	newPlan := func() *receipt.Plan {
		p := gotestPlan("100ms", "Sub/small", "Top")
		p.Arms[0].SHA256, p.Arms[1].SHA256 = "aaa", "bbb"
		return p
	}
	write := func(t *testing.T, results, name string, mutate func(*receipt.Plan), snap receipt.Snapshot) {
		p := newPlan()
		p.Lanes[0].Iterations = 7000
		p.Lanes[0].Timing = &receipt.IterationTiming{PerOpNs: map[string]float64{"base": 14000, "cand": 15000}, OverheadNs: 2e7}
		if mutate != nil {
			mutate(p)
		}
		f := receipt.Folder(filepath.Join(results, name))
		if err := os.MkdirAll(string(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := f.WritePlan(p); err != nil {
			t.Fatal(err)
		}
		if err := f.WriteEnv(receipt.Env{Snapshots: []receipt.Snapshot{snap}}); err != nil {
			t.Fatal(err)
		}
	}
	h := calibrate.HostOf(host)
	t.Run("the same binaries", func(t *testing.T) {
		results := t.TempDir()
		write(t, results, "2026-12-01T00-00-00Z-exp000-old", func(p *receipt.Plan) { p.Lanes[0].Iterations = 5000 }, host)
		write(t, results, "2026-12-02T00-00-00Z-exp000-new", nil, host)
		plan := newPlan()
		cals := ReuseIterations(results, plan, h)
		if len(cals) != 1 || plan.Lanes[0].Iterations != 7000 || plan.Lanes[0].Timing.ReusedFrom != "2026-12-02T00-00-00Z-exp000-new" {
			t.Fatalf("reused %+v, lane %+v: want Sub/small at 7000x from the newer receipt", cals, plan.Lanes[0])
		}
		if cals[0].PerOp["cand"] != 15e-6 || cals[0].Overhead != 20*time.Millisecond {
			t.Errorf("calibration %+v: want cand 15µs per operation, 20ms overhead", cals[0])
		}
		if plan.Lanes[1].Iterations != 0 {
			t.Errorf("Top was never calibrated, yet has %dx", plan.Lanes[1].Iterations)
		}
		// FixIterations calibrates only the lane left: one base process and one check.
		bin := &benchBinary{perOp: map[string]time.Duration{"base": 10 * time.Microsecond, "cand": 10 * time.Microsecond}}
		it, err := FixIterations(context.Background(), plan, bin, clock.Fixed(time.Unix(0, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if len(bin.seen) != 2 || len(it.Lanes) != 1 || it.Lanes[0].Lane != "Top" || plan.Lanes[0].Iterations != 7000 {
			t.Errorf("%d processes for %+v; want 2 for Top only", len(bin.seen), it.Lanes)
		}
		it.Lanes = append(cals, it.Lanes...)
		if !strings.Contains(it.Note(), "iteration counts reused from an earlier run of the same binaries on this host and placement (--recalibrate measures them again): Sub/small 7000x from 2026-12-02T00-00-00Z-exp000-new") {
			t.Errorf("note %q", it.Note())
		}
	})
	for _, tc := range []struct {
		name   string
		mutate func(*receipt.Plan)
		snap   receipt.Snapshot
	}{
		{"another candidate binary", func(p *receipt.Plan) { p.Arms[1].SHA256 = "ccc" }, host},
		{"another benchtime", func(p *receipt.Plan) { p.Lanes[0].Benchtime = "1s" }, host},
		{"other CPUs", func(p *receipt.Plan) { p.Protocol.CPUs = []int{1} }, host},
		{"a calibration that stayed busy", func(p *receipt.Plan) { p.Lanes[0].Timing.Busy = true }, host},
		{"another host", nil, receipt.Snapshot{CPUModel: "cpu", CPUs: 4, Kernel: "6.1", GoVersion: "go1.26"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := t.TempDir()
			write(t, results, "2026-12-02T00-00-00Z-exp000-new", tc.mutate, tc.snap)
			plan := newPlan()
			if cals := ReuseIterations(results, plan, h); len(cals) != 0 || plan.Lanes[0].Iterations != 0 {
				t.Errorf("reused %+v", cals)
			}
		})
	}
}
