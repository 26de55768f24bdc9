package pipeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

func summary(lane string, v driftcheck.LaneVerdict, noise, est float64) driftcheck.LaneSummary {
	return driftcheck.LaneSummary{Lane: lane, Arm: "cand", FloorPct: 3, Verdict: v, Bounded: true, NoisePct: noise, EstimatePct: est, DF: 5}
}

func TestUndecidable(t *testing.T) {
	huge := summary("Huge", driftcheck.LaneUndecided, 30, 300)
	huge.CILowPct, huge.CIHighPct, huge.MDEPct = 200, 400, 50
	rep := driftcheck.Report{Config: driftcheck.DefaultConfig(), Pooled: []driftcheck.LaneSummary{
		summary("Quiet", driftcheck.LaneUndecided, 0.3, 0.1), // reaches its floor
		summary("Noisy", driftcheck.LaneUndecided, 30, 1),    // cannot, at 20 rounds
		summary("Huge", driftcheck.LaneUndecided, 30, 300),   // noisy, but its effect is far beyond the floor
		summary("Done", driftcheck.LaneNeutral, 30, 0),       // decided already
		summary("Unknown", driftcheck.LaneUndecided, 0, 0),   // no noise estimate
	}}
	b := Budget{Rounds: 2, Elapsed: 2 * time.Minute, MaxPairs: 20, Budget: time.Hour, Collections: 2}
	lanes := laneNamesOf(Undecidable(rep, b))
	if len(lanes) != 1 || lanes[0] != "Noisy" {
		t.Errorf("undecidable %v, want [Noisy]", lanes)
	}
	us := Undecidable(rep, b)
	if sentence := UndecidableNote(us); !strings.HasPrefix(sentence, "1 lane cannot be decided within max-pairs (20 rounds) at this noise: Noisy (MDE ") ||
		!strings.Contains(sentence, "it goes on being measured while the budget lasts") {
		t.Errorf("sentence %q", sentence)
	}
	us[0].Stopped = true
	if sentence := UndecidableNote(us); !strings.Contains(sentence, "Noisy (MDE ") || !strings.Contains(sentence, "it is measured no more") {
		t.Errorf("sentence of a stopped lane %q", sentence)
	}

	// A budget that buys 4 rounds makes a moderately noisy lane undecidable too: one
	// whose floor 20 rounds resolve and 4 do not.
	moderate := 0.0
	for n := 0.5; n < 20 && moderate == 0; n += 0.1 {
		if driftcheck.PowerAt(n, 3, 20, 2, rep.Config).PairsNeeded == 0 && driftcheck.PowerAt(n, 3, 4, 2, rep.Config).PairsNeeded > 4 {
			moderate = n
		}
	}
	if moderate == 0 {
		t.Fatal("no noise whose floor 20 rounds resolve and 4 do not")
	}
	rep.Pooled = append(rep.Pooled, summary("Moderate", driftcheck.LaneUndecided, moderate, 0))
	if lanes := Undecidable(rep, b); len(lanes) != 1 {
		t.Errorf("at 20 rounds: %v, want only Noisy", lanes)
	}
	b.Budget = 4 * time.Minute // 1 minute a round so far
	if b.Reach() != 4 {
		t.Fatalf("reach %d, want 4", b.Reach())
	}
	us = Undecidable(rep, b)
	lanes, sentence := laneNamesOf(us), UndecidableNote(us)
	if len(lanes) != 2 || lanes[1] != "Moderate" || !strings.Contains(sentence, "within the budget (4 rounds)") {
		t.Errorf("at 4 rounds: %v %q, want Noisy and Moderate within the budget", lanes, sentence)
	}
}

// laneNamesOf returns the names of undecidable lanes.
func laneNamesOf(us []receipt.UndecidableLane) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Lane)
	}
	return out
}

func TestBudgetReach(t *testing.T) {
	for _, c := range []struct {
		b    Budget
		want int
	}{
		{Budget{MaxPairs: 20}, 20},
		{Budget{Rounds: 1, Elapsed: 7 * time.Minute, MaxPairs: 20, Budget: 10 * time.Minute}, 1},
		{Budget{Rounds: 2, Elapsed: time.Minute, MaxPairs: 20, Budget: 10 * time.Minute}, 20},
		{Budget{Rounds: 2, Elapsed: 2 * time.Minute, MaxPairs: 20, Budget: 10 * time.Minute}, 10},
		// The next round is cheaper than the mean (lanes stopped): 2 rounds + 8m / 30s.
		{Budget{Rounds: 2, Elapsed: 2 * time.Minute, PerRound: 30 * time.Second, MaxPairs: 40, Budget: 10 * time.Minute}, 18},
	} {
		if got := c.b.Reach(); got != c.want {
			t.Errorf("%+v: reach %d, want %d", c.b, got, c.want)
		}
	}
}

// TestForecast checks the plan before round 1 from the iteration calibration: the time
// per round is every lane's processes in both passes of every collection, the budget
// buys what it can, and the advice says to select benchmarks or raise the budget; and
// the plan after round 1 has each lane's MDE from the round's noise.
func TestForecast(t *testing.T) {
	plan := gotestPlan("100ms", "A", "B")
	plan.Protocol.Sequential = &receipt.Sequential{MinPairs: 2, MaxPairs: 20, Budget: 10 * time.Second}
	plan.Protocol.Passes = 40
	for i := range plan.Lanes {
		plan.Lanes[i].Iterations = 1000
	}
	cal := func(lane string) LaneCalibration {
		return LaneCalibration{Lane: lane, Iterations: 1000, Target: 100 * time.Millisecond, Overhead: 50 * time.Millisecond,
			PerOp: map[string]float64{"base": 100e-6, "cand": 100e-6}}
	}
	f := forecast(plan, []LaneCalibration{cal("A"), cal("B")}, 2*time.Second, nil, nil, 0, 0)
	// A process: 50ms + 7 samples x 100ms = 750ms; 2 lanes x 2 arms x 2 passes x 2
	// collections = 16 processes.
	if f.PerRound != 12*time.Second {
		t.Errorf("per round %s, want 12s", f.PerRound)
	}
	if f.Rounds != 1 || f.Known() {
		t.Errorf("rounds %d, known %v: want 1 round, noise unknown", f.Rounds, f.Known())
	}
	text := strings.Join(f.Lines(), "\n")
	for _, want := range []string{
		"plan: 2 lanes x 2 arms, 6 samples after 1 warmup per process, 2 collections; iteration counts fixed in 2s",
		"about 12s per round (from the iteration calibration); the 10s budget buys 1 of at most 20 rounds of all 2 lanes; lanes decided early leave more to the rest (each look says how many)",
		"  lanes: A (1000x), B (1000x); MDE known after round 2",
		"advice: the 10s budget buys 1 of 20 rounds: select fewer benchmarks (--bench; each lane costs about 6s a round) or raise the budget (--budget 4m0s runs all 20)",
		// 16 processes of 50ms + 7 samples x 20ms.
		"advice: a benchtime of 20ms (--benchtime, harness.benchtime) makes a round about 3s, so the budget buys 3 rounds;",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("forecast lacks %q:\n%s", want, text)
		}
	}

	plan.Protocol.Sequential.Budget = time.Hour
	rep := &driftcheck.Report{Pooled: []driftcheck.LaneSummary{
		{Lane: "A", Arm: "cand", NoisePct: 0.5, BetweenPct: 0.3, WithinCVPct: 0.2, DF: 1},
		{Lane: "B", Arm: "cand", NoisePct: 20, BetweenPct: 1, WithinCVPct: 30, DF: 1},
	}}
	// After round 1 of two collections a lane has 1 degree of freedom of its own: its
	// moderated noise is the lanes' shared prior, which gives no lane an MDE.
	f = forecast(plan, nil, 0, nil, rep, 1, 12*time.Second)
	if f.NoiseKnown() || f.OwnAfter != 2 || f.PerRound != 12*time.Second {
		t.Fatalf("after round 1 with shared noise: noise known %v, own after round %d, per round %s", f.NoiseKnown(), f.OwnAfter, f.PerRound)
	}
	if text := strings.Join(f.Lines(), "\n"); !strings.Contains(text, "  lanes: A (1000x), B (1000x); MDE known after round 2 (round 1 gives a lane too few pairs of its own; the noise the lanes share so far is 0.5%-20.0%)") {
		t.Errorf("forecast with shared noise:\n%s", text)
	}
	for i := range rep.Pooled {
		rep.Pooled[i].DF = 5
	}
	mdeA := driftcheck.PowerAt(0.5, 3, 20, 2, plan.Drift).MDEPct
	needB := driftcheck.PowerAt(20, 3, 20, 2, plan.Drift).PairsNeeded
	f = forecast(plan, nil, 0, nil, rep, 1, 12*time.Second)
	if f.Rounds != 20 || !f.Known() {
		t.Fatalf("after round 1: rounds %d, known %v", f.Rounds, f.Known())
	}
	text = strings.Join(f.Lines(), "\n")
	for _, want := range []string{
		"plan after round 1: ",
		"about 12s per round (measured in round 1); the 1h0m0s budget buys 20 of at most 20 rounds",
		fmt.Sprintf("  A (1000x): MDE %.1f%% at 20 rounds (noise 0.5%% from round 1), floor 3%%", mdeA),
		fmt.Sprintf("advice: 1 of 2 lanes cannot reach their floor in 20 rounds at this noise; the noisiest of them would need about %d rounds (", needB),
		"advice: B: most of the noise is within a process: more samples per process (--samples 12)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("forecast lacks %q:\n%s", want, text)
		}
	}
}

// TestUndecidableRoughNoise: a lane whose noise comes from few degrees of freedom is judged
// at the optimistic end of that estimate, so a lane that its point estimate calls
// undecidable goes on being measured while a rough estimate could be much too high; with
// many degrees of freedom the same noise stops it.
func TestUndecidableRoughNoise(t *testing.T) {
	cfg := driftcheck.DefaultConfig()
	// A noise whose floor 20 rounds fail to resolve even at 90% of it, and resolve at 60%.
	noise := 0.0
	for n := 0.5; n < 30 && noise == 0; n += 0.05 {
		if driftcheck.PowerAt(0.9*n, 3, 20, 2, cfg).PairsNeeded > 20 && driftcheck.PowerAt(0.6*n, 3, 20, 2, cfg).PairsNeeded == 0 {
			noise = n
		}
	}
	if noise == 0 {
		t.Fatal("no noise between")
	}
	b := Budget{Rounds: 2, Elapsed: 2 * time.Minute, MaxPairs: 20, Budget: time.Hour, Collections: 2}
	for _, tt := range []struct {
		df   float64
		want int
	}{{2, 0}, {200, 1}} {
		s := summary("Lane", driftcheck.LaneUndecided, noise, 0)
		s.DFUsed = tt.df
		rep := driftcheck.Report{Config: cfg, Pooled: []driftcheck.LaneSummary{s}}
		if got := Undecidable(rep, b); len(got) != tt.want {
			t.Errorf("noise %.2f%% from %g degrees of freedom: %d undecidable, want %d", noise, tt.df, len(got), tt.want)
		}
	}
}

// A plan printed after round 1 that still knows no lane's noise says when it will, not
// "after round 1".
func TestForecastLinesAfterRound1WithoutNoise(t *testing.T) {
	f := Forecast{After: 1, Sequential: true, MaxPairs: 20, Arms: 2, Collections: 2, Samples: 6,
		Lanes: []LaneForecast{{Lane: "A"}, {Lane: "B"}}}
	text := strings.Join(f.Lines(), "\n")
	if !strings.Contains(text, "  lanes: A, B; MDE known after round 2") || strings.Contains(text, "after round 1;") {
		t.Errorf("lines:\n%s", text)
	}
}
