package freshness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// traceScenario is small enough to follow by hand: one worker, runtimes of exactly
// 10 ms (p50 = p99, so the conservative forecast is 11 ms), a frame every 5 ms (load
// 2), transport 1 ms, room for one waiting frame, max_age 16 ms, four frames.
func traceScenario() Scenario {
	return Scenario{Name: "trace", Workers: 1, Variants: []Variant{{Name: "v", P50: 10 * ms1, P99: 10 * ms1}},
		MaxAge: 16 * ms1, Transport: ms1, Load: 2, QueueCap: 1, Duration: 20 * ms1}
}

// TestTrace follows traceScenario event by event. Frames are generated at 0, 5, 10 and
// 15 ms and arrive 1 ms later.
//
//   - 1 ms: f0 starts at once (1 + 11 = 12 <= 16, feasible for every policy); done at 11,
//     age 11: usable.
//   - 11 ms: the worker takes f1 (generated at 5, deadline 21): 11 + 11 = 22 > 21 is
//     infeasible, 11 + 10 = 21 fits. Pessimistic discards it and starts f2, which has
//     just arrived (deadline 26; done at 21, age 11: usable). Optimistic and fifo start
//     f1 (done at 21, age 16: usable); f2 waits.
//   - 16 ms: f3 arrives. Pessimistic: the worker is busy with f2, f3 waits. Optimistic
//     and fifo: the queue is full (f2), f3 supersedes it.
//   - 21 ms: the worker takes f3 (generated at 15, deadline 31): 21 + 11 = 32 > 31,
//     21 + 10 = 31 fits. Pessimistic discards it; optimistic and fifo start it (done at
//     31, age 16: usable).
func TestTrace(t *testing.T) {
	sc := traceScenario()
	if sc.Interval() != 5*ms1 || sc.Frames() != 4 {
		t.Fatalf("interval %v, frames %d; want 5ms and 4", sc.Interval(), sc.Frames())
	}
	want := map[Policy]Stats{
		Pessimistic: {Usable: 2, DiscardedBeforeDispatch: 2, Started: []int{2}, Compute: 20 * ms1,
			Ages: []time.Duration{11 * ms1, 11 * ms1}},
		Optimistic: {Usable: 3, Superseded: 1, Started: []int{3}, Compute: 30 * ms1,
			Ages: []time.Duration{11 * ms1, 16 * ms1, 16 * ms1}},
		FIFO: {Usable: 3, Superseded: 1, Started: []int{3}, Compute: 30 * ms1,
			Ages: []time.Duration{11 * ms1, 16 * ms1, 16 * ms1}},
	}
	for p, w := range want {
		got, err := Simulate(sc, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		w.Scenario, w.Policy, w.Duration, w.Frames = "trace", p, 20*ms1, 4
		if w.Doctor, err = Doctor(sc); err != nil {
			t.Fatal(err)
		}
		got.Checksum = 0
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p, diff)
		}
	}

	// With max_age 15 ms the split at 11 ms is gone (11 + 10 = 21 > 20): optimistic
	// discards f1 like pessimistic, fifo runs it to an obsolete result.
	sc.MaxAge = 15 * ms1
	got, err := Simulate(sc, Optimistic, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Usable != 2 || got.DiscardedBeforeDispatch != 2 || got.CompletedObsolete != 0 {
		t.Errorf("optimistic at max_age 15ms: %+v", got)
	}
	got, err = Simulate(sc, FIFO, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Usable != 1 || got.CompletedObsolete != 2 || got.Superseded != 1 || got.StaleCompute != 20*ms1 {
		t.Errorf("fifo at max_age 15ms: %+v", got)
	}
}

// checkAccounting checks what holds for every run: each frame has exactly one outcome,
// every started frame is delivered, and stale compute is part of compute.
func checkAccounting(t *testing.T, st Stats) {
	t.Helper()
	if sum := st.Usable + st.CompletedObsolete + st.DiscardedBeforeDispatch + st.Superseded; sum != st.Frames {
		t.Errorf("%s/%s: outcomes sum to %d, frames %d: %+v", st.Scenario, st.Policy, sum, st.Frames, st)
	}
	started := 0
	for _, n := range st.Started {
		started += n
	}
	if delivered := st.Usable + st.CompletedObsolete; started != delivered || len(st.Ages) != delivered {
		t.Errorf("%s/%s: %d started, %d delivered, %d ages", st.Scenario, st.Policy, started, delivered, len(st.Ages))
	}
	if st.StaleCompute > st.Compute || (st.StaleCompute == 0) != (st.CompletedObsolete == 0) {
		t.Errorf("%s/%s: stale compute %v of %v with %d obsolete", st.Scenario, st.Policy, st.StaleCompute, st.Compute, st.CompletedObsolete)
	}
}

// TestSimulateDeterministic: the virtual clock gives the same run for the same seed, and
// other frames for another seed.
func TestSimulateDeterministic(t *testing.T) {
	a, err := Simulate(ScenarioA(), Optimistic, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Simulate(ScenarioA(), Optimistic, 7)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs of seed 7 differ (-first +second):\n%s", diff)
	}
	c, _ := Simulate(ScenarioA(), Optimistic, 8)
	if cmp.Equal(a, c) {
		t.Error("seeds 7 and 8 gave the same run")
	}
}

// TestScenarioA reproduces the decision record over twenty seeds of the three-second
// scenario: the pessimistic policy delivers nothing and computes nothing; fifo delivers
// about the record's 282 usable results per run (within 10%); optimistic delivers at
// least as many, with stale compute above zero. With one waiting frame no frame waits
// long enough for its p50 forecast to be stale (wait > 22 ms), so optimistic starts what
// fifo starts.
func TestScenarioA(t *testing.T) {
	const seeds = 20
	total := map[Policy]Stats{}
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, p := range Policies() {
			st, err := Simulate(ScenarioA(), p, seed)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, st)
			if st.Frames != 361 {
				t.Fatalf("scenario A generates %d frames, want 361 (three seconds at 120.1/s)", st.Frames)
			}
			s := total[p]
			s.Usable += st.Usable
			s.Frames += st.Frames
			s.DiscardedBeforeDispatch += st.DiscardedBeforeDispatch
			s.StaleCompute += st.StaleCompute
			s.Compute += st.Compute
			total[p] = s
		}
	}
	pes, opt, fifo := total[Pessimistic], total[Optimistic], total[FIFO]
	if pes.Usable != 0 || pes.Compute != 0 || pes.DiscardedBeforeDispatch != pes.Frames {
		t.Errorf("pessimistic: %d usable, %v compute, %d of %d discarded; want 0, 0, all", pes.Usable, pes.Compute, pes.DiscardedBeforeDispatch, pes.Frames)
	}
	perRun := float64(fifo.Usable) / seeds
	if perRun < 282*0.9 || perRun > 282*1.1 || fifo.DiscardedBeforeDispatch != 0 {
		t.Errorf("fifo: %.1f usable per run, %d discarded; want within 10%% of the record's 282, none discarded", perRun, fifo.DiscardedBeforeDispatch)
	}
	if opt.Usable < fifo.Usable || opt.StaleCompute == 0 {
		t.Errorf("optimistic: %d usable (fifo %d), stale compute %v; want at least fifo's and some", opt.Usable, fifo.Usable, opt.StaleCompute)
	}
	t.Logf("scenario A over %d seeds: fifo %.1f usable/run (%.1f%% of frames), optimistic %.1f, pessimistic %.1f",
		seeds, perRun, 100*float64(fifo.Usable)/float64(fifo.Frames), float64(opt.Usable)/seeds, float64(pes.Usable)/seeds)
}

// TestQueueDepth pins why scenario A waits with one frame: with a deeper queue, fifo's
// frames wait about a runtime each and arrive too old, far from the record's 282.
func TestQueueDepth(t *testing.T) {
	usable := func(capacity int) int {
		sc := ScenarioA()
		sc.QueueCap = capacity
		n := 0
		for seed := uint64(1); seed <= 10; seed++ {
			st, err := Simulate(sc, FIFO, seed)
			if err != nil {
				t.Fatal(err)
			}
			n += st.Usable
		}
		return n / 10
	}
	one, four, open := usable(1), usable(4), usable(1000)
	if !(one > 250 && four < 150 && open < 30) {
		t.Errorf("fifo usable per run with 1, 4 and 1000 waiting frames: %d, %d, %d; want about 276, 100, 12", one, four, open)
	}
}

// TestVariants: with several variants, a promise apart from max_age and hysteresis, the
// optimistic policy starts the fastest variant for frames no variant can promise and
// delivers more usable results than the pessimistic one; the promise is judged by the
// deadline, so some frames are started by feasibility although their conservative
// forecast is past max_age; hysteresis switches variants less and delivers more.
func TestVariants(t *testing.T) {
	sum := func(sc Scenario, p Policy) Stats {
		var all Stats
		for seed := uint64(1); seed <= 20; seed++ {
			st, err := Simulate(sc, p, seed)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, st)
			all.Usable += st.Usable
			all.Switches += st.Switches
			all.DiscardedBeforeDispatch += st.DiscardedBeforeDispatch
			all.CompletedObsolete += st.CompletedObsolete
			all.Started = append(all.Started, st.Started...)
		}
		return all
	}
	sc := Variants()
	opt, pes := sum(sc, Optimistic), sum(sc, Pessimistic)
	if opt.Usable <= pes.Usable*11/10 || opt.DiscardedBeforeDispatch != 0 || pes.DiscardedBeforeDispatch == 0 {
		t.Errorf("variants: optimistic %d usable (%d discarded), pessimistic %d (%d discarded); want optimistic >10%% more, and only pessimistic discarding",
			opt.Usable, opt.DiscardedBeforeDispatch, pes.Usable, pes.DiscardedBeforeDispatch)
	}
	fastStarts := 0
	for i, n := range pes.Started {
		if i%2 == 1 {
			fastStarts += n
		}
	}
	if fastStarts == 0 {
		t.Error("pessimistic never started fast: the promise (55 ms) must allow it where max_age (50 ms) by p99 x 1.10 would not")
	}
	flat := sc
	flat.Hysteresis = nil
	noHyst := sum(flat, Optimistic)
	if !(opt.Switches*2 < noHyst.Switches && opt.Usable > noHyst.Usable) {
		t.Errorf("hysteresis: %d switches and %d usable, without it %d and %d; want fewer than half the switches and more usable",
			opt.Switches, opt.Usable, noHyst.Switches, noHyst.Usable)
	}
	t.Logf("variants over 20 seeds: optimistic %d usable, %d switches; pessimistic %d usable, %d discarded; without hysteresis optimistic %d usable, %d switches",
		opt.Usable, opt.Switches, pes.Usable, pes.DiscardedBeforeDispatch, noHyst.Usable, noHyst.Switches)
}

// TestHysteresisSteps follows the hysteresis on hand-made decisions: a frame that needs
// the fast variant moves the level down at once; After decisions in a row with the
// reserve to spare move it back up one; a decision without the reserve restarts the count.
func TestHysteresisSteps(t *testing.T) {
	sc := Variants()
	sc.Hysteresis = &Hysteresis{Reserve: 3 * ms1, After: 2}
	s := &scheduler{sc: sc, last: -1}
	f := &frame{gen: 0}
	// at 20 ms no variant keeps the 55 ms promise: down to fast (index 1)
	s.hysteresis(f, 20*ms1, sc.DecideFrom(Optimistic, 0, 20*ms1, s.level))
	if s.level != 1 {
		t.Fatalf("level %d after a frame that needed fast, want 1", s.level)
	}
	young := func(wait time.Duration) { // a frame generated 3 ms before now+wait
		now := 100*ms1 + wait
		g := now - 3*ms1 - wait
		s.hysteresis(&frame{gen: g}, now, sc.DecideFrom(Optimistic, g, now, s.level))
	}
	young(0) // full would fit: 3 + 44 + 3 reserve <= 55
	if s.level != 1 || s.stable != 1 {
		t.Fatalf("after one stable decision: level %d stable %d, want 1 and 1", s.level, s.stable)
	}
	young(6 * ms1) // 3 + 6 + 44 + 3 = 56 > 55: no reserve, the count restarts
	if s.level != 1 || s.stable != 0 {
		t.Fatalf("after a decision without reserve: level %d stable %d, want 1 and 0", s.level, s.stable)
	}
	young(0)
	young(0)
	if s.level != 0 {
		t.Fatalf("after two stable decisions: level %d, want 0 (full)", s.level)
	}
}

// TestDoctorBeforeRun: every run carries the doctor's diagnosis of its scenario, made
// before it ran.
func TestDoctorBeforeRun(t *testing.T) {
	for _, sc := range Scenarios() {
		st, err := Simulate(sc, Optimistic, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Doctor(sc)
		if diff := cmp.Diff(want, st.Doctor); diff != "" || len(st.Doctor.Findings) == 0 {
			t.Errorf("%s: the run's diagnosis differs from the doctor's (-doctor +run):\n%s", sc.Name, diff)
		}
	}
	bad := ScenarioA()
	bad.Workers = 0
	if _, err := Simulate(bad, FIFO, 1); err == nil || !strings.Contains(err.Error(), "workers 0") {
		t.Errorf("a scenario the doctor cannot check: %v", err)
	}
}

// TestComfortable: in the comfortable scenario every policy serves every frame, with the
// same variants, the same work and the same ages.
func TestComfortable(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		base, err := Simulate(Comfortable(), Pessimistic, seed)
		if err != nil {
			t.Fatal(err)
		}
		checkAccounting(t, base)
		if base.Usable != base.Frames {
			t.Errorf("seed %d: %d of %d usable", seed, base.Usable, base.Frames)
		}
		for _, p := range []Policy{FIFO, Optimistic} {
			st, _ := Simulate(Comfortable(), p, seed)
			st.Policy = Pessimistic
			if diff := cmp.Diff(base, st); diff != "" {
				t.Errorf("seed %d: %s differs from pessimistic (-pessimistic +%s):\n%s", seed, p, p, diff)
			}
		}
	}
}

// TestUnderload: where the conservative forecast fits with little room, the optimistic
// policy never delivers fewer usable results than the pessimistic one.
func TestUnderload(t *testing.T) {
	gained := 0
	for seed := uint64(1); seed <= 20; seed++ {
		pes, err := Simulate(Underload(), Pessimistic, seed)
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := Simulate(Underload(), Optimistic, seed)
		checkAccounting(t, pes)
		checkAccounting(t, opt)
		if opt.Usable < pes.Usable {
			t.Errorf("seed %d: optimistic %d usable, pessimistic %d", seed, opt.Usable, pes.Usable)
		}
		gained += opt.Usable - pes.Usable
	}
	if gained == 0 {
		t.Error("optimistic never served a frame pessimistic discarded: the scenario does not exercise stage B")
	}
}

// TestRealClock runs every scenario on real goroutines and timers, fast (one scenario
// second in 50 ms), and checks what holds whatever the host's timing: the accounting,
// and that the pessimistic policy delivers nothing in scenario A, where its forecast
// misses by arithmetic alone.
func TestRealClock(t *testing.T) {
	for _, sc := range Scenarios() {
		for _, p := range Policies() {
			c, err := NewRealClock(0.05)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Run(context.Background(), c, sc, p, 3)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, st)
			if st.Frames != sc.Frames() {
				t.Errorf("%s/%s: %d frames, want %d", sc.Name, p, st.Frames, sc.Frames())
			}
			if sc.Name == "A" && p == Pessimistic && (st.Usable != 0 || st.DiscardedBeforeDispatch != st.Frames) {
				t.Errorf("A/pessimistic on a real clock: %+v", st)
			}
		}
	}
	// Real and virtual runs compute the same frames: where every frame is served, the
	// digests agree.
	c, _ := NewRealClock(0.05)
	live, err := Run(context.Background(), c, Comfortable(), FIFO, 5)
	if err != nil {
		t.Fatal(err)
	}
	virtual, _ := Simulate(Comfortable(), FIFO, 5)
	if live.Usable == live.Frames && live.Checksum != virtual.Checksum {
		t.Errorf("real and virtual runs of the same frames computed different digests: %x, %x", live.Checksum, virtual.Checksum)
	}
}

func TestRealClockErrors(t *testing.T) {
	for _, scale := range []float64{0, -1, 2e6} {
		if _, err := NewRealClock(scale); err == nil {
			t.Errorf("NewRealClock(%v) accepted", scale)
		}
	}
	c, _ := NewRealClock(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, c, ScenarioA(), FIFO, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled run returned %v", err)
	}
	if err := c.Run(context.Background()); err == nil {
		t.Error("a real clock ran twice")
	}
	if _, err := Run(context.Background(), NewVirtualClock(), Scenario{Name: "empty"}, FIFO, 1); err == nil {
		t.Error("an invalid scenario ran")
	}
}

// TestVirtualClock: events run in time order, ties in the order they were arranged,
// work at once and its done after its duration.
func TestVirtualClock(t *testing.T) {
	c := NewVirtualClock()
	var got []string
	at := func(name string) func() {
		return func() { got = append(got, name+"@"+c.Now().String()) }
	}
	c.AfterFunc(5*ms1, at("b"))
	c.AfterFunc(2*ms1, at("a"))
	c.AfterFunc(5*ms1, at("c"))
	c.Work(0, 3*ms1, at("work"), func() {
		at("done")()
		c.AfterFunc(-ms1, at("late")) // a negative delay runs now
	})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"work@0s", "a@2ms", "done@3ms", "late@3ms", "b@5ms", "c@5ms"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
}

func TestAgeQuantile(t *testing.T) {
	var st Stats
	if _, ok := st.AgeQuantile(0.5); ok {
		t.Error("an empty run has an age quantile")
	}
	for i := 1; i <= 100; i++ {
		st.Ages = append(st.Ages, time.Duration(i)*ms1)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * ms1, 0.99: 99 * ms1, 1: 100 * ms1, 0.001: ms1} {
		if got, _ := st.AgeQuantile(q); got != want {
			t.Errorf("AgeQuantile(%v) = %v, want %v", q, got, want)
		}
	}
	st.Duration = 2 * time.Second
	st.Usable = 90
	if got := st.UsablePerSecond(); got != 45 {
		t.Errorf("UsablePerSecond = %v, want 45", got)
	}
}
