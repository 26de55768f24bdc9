package driftcheck_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
	"github.com/flipbench/flipbench/driftcheck"
)

// side is one run's samples; nil means the observation is missing.
type side []float64

// rep returns n copies of x.
func rep(x float64, n int) side {
	s := make(side, n)
	for i := range s {
		s[i] = x
	}
	return s
}

// spread returns n samples around x with a robust CV of about cvPct percent: x times
// 1 +- cv/1.4826 alternating, with x itself in the middle.
func spread(x, cvPct float64, n int) side {
	s := make(side, n)
	d := cvPct / 100 / 1.4826
	for i := range s {
		switch i % 3 {
		case 0:
			s[i] = x
		case 1:
			s[i] = x * (1 + d)
		default:
			s[i] = x * (1 - d)
		}
	}
	return s
}

// handInput builds a one-lane, one-collection input; passes[i] is {base, cand} of pass i+1.
func handInput(lane driftcheck.Lane, passes ...[2]side) driftcheck.Input {
	in := driftcheck.Input{Base: "base", Candidates: []string{"cand"}, Lanes: []driftcheck.Lane{lane},
		Collections: 1, Passes: len(passes)}
	for p, pass := range passes {
		for i, arm := range []string{"base", "cand"} {
			if pass[i] == nil {
				continue
			}
			in.Observations = append(in.Observations, driftcheck.Observation{
				Collection: 1, Pass: p + 1, Lane: lane.Name, Arm: arm, Samples: pass[i]})
		}
	}
	return in
}

var laneL = driftcheck.Lane{Name: "L"}

func analyze(t *testing.T, in driftcheck.Input, cfg driftcheck.Config) driftcheck.Report {
	t.Helper()
	r, err := driftcheck.Analyze(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("report does not encode: %v", err)
	}
	return r
}

// TestPairVerdicts checks every pass-pair rule and its exact reason on handmade data
// whose lane noise is below the floor, so a pass is material beyond the floor.
func TestPairVerdicts(t *testing.T) {
	quiet := spread(100, 2, 9)
	tests := []struct {
		name      string
		p1, p2    [2]side
		verdict   driftcheck.Verdict
		direction string
		reason    string
	}{
		{name: "both faster", p1: [2]side{rep(100, 5), rep(88, 5)}, p2: [2]side{rep(100, 5), rep(90, 5)},
			verdict: driftcheck.Reproduced, direction: "faster",
			reason: "both passes faster beyond the 3% floor: -12.0% then -10.0%"},
		{name: "both slower", p1: [2]side{rep(100, 5), rep(105, 5)}, p2: [2]side{rep(100, 5), rep(110, 5)},
			verdict: driftcheck.Reproduced, direction: "slower",
			reason: "both passes slower beyond the 3% floor: +5.0% then +10.0%"},
		{name: "sign flips", p1: [2]side{rep(100, 5), rep(90, 5)}, p2: [2]side{rep(100, 5), rep(110, 5)},
			verdict: driftcheck.DriftSuspected,
			reason:  "order flip reverses the sign, both beyond the 3% floor: -10.0% then +10.0%"},
		{name: "one sided", p1: [2]side{rep(100, 5), rep(90, 5)}, p2: [2]side{rep(100, 5), rep(99, 5)},
			verdict: driftcheck.OneSided, reason: "one pass material, one not: -10.0% then -1.0% (3% floor)"},
		{name: "neutral", p1: [2]side{rep(100, 5), rep(101, 5)}, p2: [2]side{rep(100, 5), rep(99, 5)},
			verdict: driftcheck.Neutral, reason: "both passes within the 3% floor: +1.0% then -1.0%"},
		{name: "missing side", p1: [2]side{rep(100, 5), nil}, p2: [2]side{rep(100, 5), rep(99, 5)},
			verdict: driftcheck.Insufficient, reason: "pass 1: no cand observation"},
		{name: "one sample", p1: [2]side{rep(100, 5), side{90}}, p2: [2]side{rep(100, 5), rep(99, 5)},
			verdict: driftcheck.Insufficient, reason: "pass 1: only 1 cand sample (need 2)"},
		{name: "contaminated: a noisy side whose spread explains the delta",
			p1: [2]side{quiet, spread(110, 30, 9)}, p2: [2]side{rep(100, 5), rep(99, 5)},
			verdict: driftcheck.DriftSuspected,
			reason:  "set aside: a run of this pair was contaminated (see the set-aside runs); pass 1 contaminated: cand CV 30% vs base 2.0%, enough spread to explain its delta (deltas +10.0% then -1.0%)"},
		{name: "a noisy side cannot explain a huge delta",
			p1: [2]side{quiet, spread(18000, 18, 9)}, p2: [2]side{quiet, spread(21000, 18, 9)},
			verdict: driftcheck.Reproduced, direction: "slower",
			reason: "both passes slower beyond the 3% floor: +17900% (180x slower) then +20900% (210x slower)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(t, handInput(laneL, tc.p1, tc.p2), driftcheck.DefaultConfig())
			p := r.Pairs[0]
			if p.Verdict != tc.verdict || p.Direction != tc.direction || p.Reason != tc.reason {
				t.Errorf("got %s %q %q\nwant %s %q %q", p.Verdict, p.Direction, p.Reason, tc.verdict, tc.direction, tc.reason)
			}
		})
	}
}

// TestMaterialFollowsNoise checks that in a noisy lane a pass is material only beyond the
// lane's scaled noise, so two same-sign deltas inside the noise are not REPRODUCED.
func TestMaterialFollowsNoise(t *testing.T) {
	// Pair means spread by about +-8%: the noise of one pass delta is about 11%.
	in := handInput(laneL,
		[2]side{rep(100, 6), rep(105, 6)}, [2]side{rep(100, 6), rep(104, 6)},
		[2]side{rep(100, 6), rep(90, 6)}, [2]side{rep(100, 6), rep(88, 6)},
		[2]side{rep(100, 6), rep(112, 6)}, [2]side{rep(100, 6), rep(96, 6)},
	)
	r := analyze(t, in, driftcheck.DefaultConfig())
	p := r.Pairs[0]
	if p.MaterialPct <= 3 {
		t.Fatalf("material %.1f%%, want above the floor in a noisy lane", p.MaterialPct)
	}
	if p.Verdict != driftcheck.Neutral {
		t.Errorf("pair 1 (+5%% then +4%%): %s %q, want neutral inside the noise", p.Verdict, p.Reason)
	}
	if !strings.Contains(p.Reason, "material threshold") {
		t.Errorf("reason %q does not name the material threshold", p.Reason)
	}
	if r.Lanes[0].Verdict != driftcheck.LaneUndecided {
		t.Errorf("lane %s: %s", r.Lanes[0].Verdict, r.Lanes[0].Reason)
	}
}

// TestHugeEffectNoisyCandidate: a 100x slowdown measured with a noisy candidate side is
// REPRODUCED in every pair and never drift-suspected.
func TestHugeEffectNoisyCandidate(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 3, Samples: 15, Within: 0.03, Between: 0.02, Effect: 99}
	in := w.Input(sim.NewRand(7))
	for i, o := range in.Observations {
		if o.Arm == sim.Cand { // the candidate's own samples spread 18%
			for j := range o.Samples {
				in.Observations[i].Samples[j] *= 1 + 0.18*float64(j%3-1)/1.4826*1.7
			}
		}
	}
	r := analyze(t, in, driftcheck.DefaultConfig())
	for _, p := range r.Pairs {
		if p.Verdict != driftcheck.Reproduced || p.Direction != driftcheck.DirectionSlower {
			t.Errorf("collection %d pair %d: %s %q", p.Collection, p.Pair, p.Verdict, p.Reason)
		}
	}
	for _, s := range append(r.Lanes, r.Pooled...) {
		if s.Verdict != driftcheck.LaneReproducedSlower {
			t.Errorf("collection %d: %s %q", s.Collection, s.Verdict, s.Reason)
		}
	}
	if len(r.Pooled) != 1 || r.Pooled[0].EstimatePct < 8000 {
		t.Errorf("pooled %+v", r.Pooled)
	}
}

// TestOrderDependent: a lane whose value depends only on run order (the second run of a
// pass is 20% slower) has its order effect measured and cancelled by the pair means: it
// reads neutral pooled, with the order effect named in the reason; a lane whose order
// effect outweighs an effect it cannot decide reads order-dependent.
func TestOrderDependent(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 4, Samples: 15, Within: 0.02, Order: 0.2}
	r := analyze(t, w.Input(sim.NewRand(3)), driftcheck.DefaultConfig())
	p := r.Pooled[0]
	if p.Verdict != driftcheck.LaneNeutral || !strings.Contains(p.Reason, "an order effect of") {
		t.Errorf("pooled %s %q, want neutral naming the order effect", p.Verdict, p.Reason)
	}
	if p.OrderEffectPct < 15 || p.OrderLowPct <= 0 || math.Abs(p.EstimatePct) > 2 {
		t.Errorf("order %+.1f%% [%+.1f, %+.1f], effect %+.1f%%", p.OrderEffectPct, p.OrderLowPct, p.OrderHighPct, p.EstimatePct)
	}
	noisy := sim.World{Lanes: 1, Collections: 2, Pairs: 4, Samples: 15, Within: 0.02, Between: 0.06, Order: 0.3}
	r = analyze(t, noisy.Input(sim.NewRand(3)), driftcheck.DefaultConfig())
	if p := r.Pooled[0]; p.Verdict != driftcheck.LaneOrderDependent {
		t.Errorf("noisy pooled %s %q, want order-dependent", p.Verdict, p.Reason)
	}
}

// TestLaneVerdicts checks neutral by equivalence, undecided with what it rules out, its
// MDE and the pairs it needs, reproduced, and insufficient, each with its reason.
func TestLaneVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		w      sim.World
		want   driftcheck.LaneVerdict
		reason string // a substring of the pooled reason
	}{
		{name: "quiet A/A is shown neutral", w: sim.World{Lanes: 1, Collections: 2, Pairs: 4, Samples: 15, Within: 0.02, Between: 0.005},
			want: driftcheck.LaneNeutral, reason: "lies inside the +-3% floor"},
		{name: "noisy A/A is undecided, with what it rules out and the pairs it needs", w: sim.World{Lanes: 1, Collections: 2, Pairs: 3, Samples: 15, Within: 0.2, Between: 0.15},
			want: driftcheck.LaneUndecided, reason: "more pairs per collection would decide it"},
		{name: "a 20% gain reproduces", w: sim.World{Lanes: 1, Collections: 2, Pairs: 3, Samples: 15, Within: 0.03, Between: 0.02, Effect: -0.2},
			want: driftcheck.LaneReproducedFaster, reason: "reproduced faster in every collection, the estimate past the 3% floor"},
		{name: "one pair per collection has no noise estimate", w: sim.World{Lanes: 1, Collections: 1, Pairs: 1, Samples: 15, Within: 0.03, Effect: -0.2},
			want: driftcheck.LaneInsufficient, reason: "no noise estimate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(t, tc.w.Input(sim.NewRand(5)), driftcheck.DefaultConfig())
			s := r.Pooled[0]
			if s.Verdict != tc.want || !strings.Contains(s.Reason, tc.reason) {
				t.Errorf("pooled: %s %q, want %s with %q", s.Verdict, s.Reason, tc.want, tc.reason)
			}
			if tc.want == driftcheck.LaneUndecided && !(s.MDEPct > 3 && s.PairsNeeded > tc.w.Pairs && strings.Contains(s.Reason, "no regression beyond")) {
				t.Errorf("undecided: MDE %.1f%%, pairs needed %d, %q", s.MDEPct, s.PairsNeeded, s.Reason)
			}
			if tc.want == driftcheck.LaneReproducedFaster {
				for _, c := range r.Lanes {
					if c.Verdict != driftcheck.LaneReproducedFaster {
						t.Errorf("collection %d: %s %q", c.Collection, c.Verdict, c.Reason)
					}
				}
			}
		})
	}
}

// TestEvidenceFields checks the interval arithmetic on hand-made pair means: with deltas
// that make the pair means +10% and +14% and the order effects 0 and +2% (log scale, near
// enough), the noise, interval and MDE follow the formulas of the package doc.
func TestEvidenceFields(t *testing.T) {
	in := handInput(laneL,
		[2]side{rep(100, 6), rep(110, 6)}, [2]side{rep(100, 6), rep(110, 6)},
		[2]side{rep(100, 6), rep(116, 6)}, [2]side{rep(100, 6), rep(112, 6)},
	)
	r := analyze(t, in, driftcheck.DefaultConfig())
	s := r.Lanes[0]
	l := func(x float64) float64 { return math.Log(x) }
	m1, m2 := l(1.1), (l(1.16)+l(1.12))/2
	o1, o2 := 0.0, (l(1.16)-l(1.12))/2
	mm, mo := (m1+m2)/2, (o1+o2)/2
	sigma := math.Sqrt((m1-mm)*(m1-mm) + (m2-mm)*(m2-mm) + (o1-mo)*(o1-mo) + (o2-mo)*(o2-mo)) // / (K-1) = 1
	se := sigma / 2                                                                           // sigma / sqrt(2K), K = 2
	q := 4.302652729911275                                                                    // t(0.975, 2)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6*math.Max(1, math.Abs(want)) }
	checks := []struct {
		name      string
		got, want float64
	}{
		{"df", float64(s.DF), 2},
		{"estimate", s.EstimateLog, mm},
		{"se", s.SELog, se},
		{"noise", s.NoisePct, sigma * 100},
		{"ci low", s.CILowPct, (math.Exp(mm-q*se) - 1) * 100},
		{"ci high", s.CIHighPct, (math.Exp(mm+q*se) - 1) * 100},
		{"order", s.OrderEffectPct, (math.Exp(mo) - 1) * 100},
	}
	// The MDE is the effect the rule reproduces with 80% probability: this collection's
	// replication test and the estimate past the 3% floor.
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	theta := math.Log1p(s.MDEPct / 100)
	if got := phi(theta/se-q) * phi((theta-math.Log(1.03))/se); math.Abs(got-0.8) > 1e-6 {
		t.Errorf("power at the MDE %.2f%% = %v, want 0.8", s.MDEPct, got)
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Verdict != driftcheck.LaneReproducedSlower {
		t.Errorf("verdict %s %q", s.Verdict, s.Reason)
	}
}

// TestLooks checks that a look early in a sequential rule is judged at a stricter level
// than a fixed protocol of the same pairs, and the last look almost at the fixed level
// (error spending): the interval is wider at look 6 of 40 than at 6 of 6.
func TestLooks(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 6, Samples: 15, Within: 0.05, Between: 0.03, Effect: -0.1}
	in := w.Input(sim.NewRand(9))
	one := analyze(t, in, driftcheck.DefaultConfig())
	cfg := driftcheck.DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 2, 40
	many := analyze(t, in, cfg)
	last := cfg
	last.MaxPairs = 6
	end := analyze(t, in, last)
	a, b, c := one.Pooled[0], many.Pooled[0], end.Pooled[0]
	if !(b.CILowPct < a.CILowPct && b.CIHighPct > a.CIHighPct && b.MDEPct > a.MDEPct) || !(b.Confidence > a.Confidence) {
		t.Errorf("fixed [%v, %v] MDE %v at %v; look 6 of 40 [%v, %v] MDE %v at %v", a.CILowPct, a.CIHighPct, a.MDEPct, a.Confidence, b.CILowPct, b.CIHighPct, b.MDEPct, b.Confidence)
	}
	if !(c.Confidence > a.Confidence && c.Confidence < b.Confidence) {
		t.Errorf("look 6 of 6 at %v: want between the fixed %v and look 6 of 40 %v", c.Confidence, a.Confidence, b.Confidence)
	}
}

// TestZeroMedian: a higher-is-better lane whose base delivers nothing and candidate
// something is better in every pass, with the ratio capped and said so.
func TestZeroMedian(t *testing.T) {
	lane := driftcheck.Lane{Name: "usable", HigherIsBetter: true}
	var passes [][2]side
	for range 4 {
		passes = append(passes, [2]side{rep(0, 8), spread(280, 5, 8)})
	}
	r := analyze(t, handInput(lane, passes...), driftcheck.DefaultConfig())
	if s := r.Lanes[0]; s.Verdict != driftcheck.LaneReproducedFaster {
		t.Errorf("lane %s %q", s.Verdict, s.Reason)
	}
	if n := r.Passes[0].Note; !strings.Contains(n, "capped") {
		t.Errorf("pass note %q", n)
	}
	// Both sides zero: equal, not undefined.
	r = analyze(t, handInput(lane, [2]side{rep(0, 8), rep(0, 8)}, [2]side{rep(0, 8), rep(0, 8)}, [2]side{rep(0, 8), rep(0, 8)}, [2]side{rep(0, 8), rep(0, 8)}), driftcheck.DefaultConfig())
	if s := r.Pooled[0]; s.Verdict != driftcheck.LaneNeutral {
		t.Errorf("all zero: %s %q", s.Verdict, s.Reason)
	}
}

// TestHigherIsBetter checks that a throughput gain reads faster, with percentages of the
// reciprocal (time per unit of throughput).
func TestHigherIsBetter(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 3, Samples: 15, Within: 0.02, Effect: -0.2, HigherIsBetter: true}
	r := analyze(t, w.Input(sim.NewRand(4)), driftcheck.DefaultConfig())
	s := r.Pooled[0]
	// 25% more throughput is 20% less time per unit: shown as -20% (negative is better).
	if s.Verdict != driftcheck.LaneReproducedFaster || s.EstimatePct > -18 || s.EstimatePct < -22 {
		t.Errorf("pooled %s %+.1f%%: %s", s.Verdict, s.EstimatePct, s.Reason)
	}
}

// TestUnrunPairs: pairs a lane did not run (a sequential run stopped it) are not
// reported; partly missing pairs are insufficient with a warning.
func TestUnrunPairs(t *testing.T) {
	w := sim.World{Lanes: 2, Collections: 2, Pairs: 4, Samples: 10, Within: 0.03, Effect: -0.2}
	in := w.Input(sim.NewRand(10))
	in.Observations = slices.DeleteFunc(in.Observations, func(o driftcheck.Observation) bool {
		return o.Lane == "L1" && o.Pass > 4 || // L1 stopped after two pairs
			o.Lane == "L2" && o.Collection == 1 && o.Pass == 4 && o.Arm == sim.Base // one lost run
	})
	r := analyze(t, in, driftcheck.DefaultConfig())
	got := map[string]int{}
	for _, p := range r.Pairs {
		got[fmt.Sprintf("%s/%d", p.Lane, p.Collection)]++
	}
	if d := cmp.Diff(map[string]int{"L1/1": 2, "L1/2": 2, "L2/1": 4, "L2/2": 4}, got); d != "" {
		t.Errorf("pairs per lane and collection (-want +got):\n%s", d)
	}
	for _, pd := range r.Passes {
		if pd.Lane == "L1" && pd.Pass > 4 {
			t.Errorf("pass %+v of an unrun pair reported", pd)
		}
	}
	want := "lane L2, cand vs base, collection 1, pair 2: insufficient: pass 4: no base observation; rerun that pass-pair with at least 2 samples per side"
	if !slices.Contains(r.Warnings, want) {
		t.Errorf("missing warning %q in %q", want, r.Warnings)
	}
	for _, s := range r.Lanes {
		if s.Verdict != driftcheck.LaneReproducedFaster {
			t.Errorf("%s/%d: %s %q", s.Lane, s.Collection, s.Verdict, s.Reason)
		}
	}
}

// TestSampleWarnings checks the few-samples and non-finite warnings.
func TestSampleWarnings(t *testing.T) {
	in := handInput(laneL,
		[2]side{side{100, 101, 99, 100}, side{90, 91, 89, math.NaN(), 90, math.Inf(1)}},
		[2]side{rep(100, 8), rep(90, 8)})
	r := analyze(t, in, driftcheck.DefaultConfig())
	want := []string{
		"lane L, arm cand, collection 1, pass 1: dropped 2 non-finite samples (NaN or Inf); check the lane's output",
		"lane L: runs have as few as 4 samples (arm base, collection 1, pass 1); per-pass medians and CVs from so few samples are shaky, " +
			"and every pass delta and pair verdict rests on them: use at least 6 samples per run (10-20 recommended)",
	}
	if d := cmp.Diff(want, r.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if r.Passes[0].CandN != 4 || r.Pairs[0].Verdict != driftcheck.Reproduced {
		t.Errorf("pass 1 cand n %d, pair %s", r.Passes[0].CandN, r.Pairs[0].Verdict)
	}
}

// TestMalformed checks the errors for input that no run could have produced.
func TestMalformed(t *testing.T) {
	good := func() driftcheck.Input {
		return handInput(laneL, [2]side{rep(1, 3), rep(1, 3)}, [2]side{rep(1, 3), rep(1, 3)})
	}
	tests := []struct {
		name   string
		edit   func(*driftcheck.Input)
		cfg    driftcheck.Config
		errMsg string
	}{
		{name: "unknown lane", edit: func(in *driftcheck.Input) { in.Observations[1].Lane = "M" },
			errMsg: `observation 1: unknown lane "M"`},
		{name: "unknown arm", edit: func(in *driftcheck.Input) { in.Observations[2].Arm = "candB" },
			errMsg: `observation 2: unknown arm "candB"`},
		{name: "pass out of range", edit: func(in *driftcheck.Input) { in.Observations[3].Pass = 3 },
			errMsg: `observation 3: pass 3 out of range 1..2`},
		{name: "collection out of range", edit: func(in *driftcheck.Input) { in.Observations[0].Collection = 2 },
			errMsg: `observation 0: collection 2 out of range 1..1`},
		{name: "duplicate", edit: func(in *driftcheck.Input) { in.Observations[2].Pass = 1 },
			errMsg: `observation 2: duplicate of observation 0 (collection 1, pass 1, lane "L", arm "base")`},
		{name: "odd passes", edit: func(in *driftcheck.Input) { in.Passes = 3 },
			errMsg: `passes: 3 per collection: want an even number >= 2`},
		{name: "absurd protocol", edit: func(in *driftcheck.Input) { in.Collections = 1 << 40 },
			errMsg: `protocol of 4.398046511104e+12 runs (collections x passes x lanes x arms): want at most 10000000`},
		{name: "no candidates", edit: func(in *driftcheck.Input) { in.Candidates = nil },
			errMsg: `no candidate arms`},
		{name: "candidate named like the base", edit: func(in *driftcheck.Input) { in.Candidates = []string{"base"} },
			errMsg: `candidates[0]: arm "base" listed twice`},
		{name: "negative lane floor", edit: func(in *driftcheck.Input) { in.Lanes[0].FloorPct = -2 },
			errMsg: `lane "L": floor_pct -2: want a positive number`},
		{name: "negative floor", cfg: driftcheck.Config{EffectFloorPct: -1},
			errMsg: `config: effect_floor_pct -1: want a positive number`},
		{name: "asymmetry below one", cfg: driftcheck.Config{CVAsymmetry: 0.5},
			errMsg: `config: cv_asymmetry 0.5: want a ratio >= 1`},
		{name: "alpha of one", cfg: driftcheck.Config{Alpha: 1},
			errMsg: `config: alpha 1: want a probability between 0 and 1`},
		{name: "min beyond max", cfg: driftcheck.Config{MinPairs: 5, MaxPairs: 3},
			errMsg: `config: min_pairs 5, max_pairs 3: want 1 <= min <= max <= 100000, or both 0 for a fixed protocol`},
		{name: "unknown spending", cfg: driftcheck.Config{Spending: "bonferroni"},
			errMsg: `config: spending "bonferroni": want one of [obrien-fleming pocock power hsd]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := good()
			if tc.edit != nil {
				tc.edit(&in)
			}
			_, err := driftcheck.Analyze(in, tc.cfg)
			if err == nil || err.Error() != tc.errMsg {
				t.Errorf("error %v, want %q", err, tc.errMsg)
			}
		})
	}
}

// TestConfigDefaults checks that zero thresholds take the defaults and others are kept.
func TestConfigDefaults(t *testing.T) {
	in := handInput(laneL, [2]side{rep(100, 3), rep(96, 3)}, [2]side{rep(100, 3), rep(96, 3)})
	r := analyze(t, in, driftcheck.Config{EffectFloorPct: 5})
	want := driftcheck.DefaultConfig()
	want.EffectFloorPct = 5
	want.Spending = driftcheck.DefaultSpending
	if r.Config != want {
		t.Errorf("config %+v, want %+v", r.Config, want)
	}
	if p := r.Pairs[0]; p.Verdict != driftcheck.Neutral || p.Reason != "both passes within the 5% floor: -4.0% then -4.0%" {
		t.Errorf("pair %s %q", p.Verdict, p.Reason)
	}
}

// TestReportJSON pins the JSON field names that scripts and other packages rely on
// (docs/json.md documents each).
func TestReportJSON(t *testing.T) {
	in := handInput(laneL, [2]side{rep(100, 3), rep(90, 3)}, [2]side{rep(100, 3), rep(91, 3)}, [2]side{rep(100, 3), rep(89, 3)}, [2]side{rep(100, 3), rep(90, 3)})
	r := analyze(t, in, driftcheck.DefaultConfig())
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema int              `json:"schema_version"`
		Config map[string]any   `json:"config"`
		Pairs  []map[string]any `json:"pairs"`
		Lanes  []map[string]any `json:"lanes"`
		Pooled []map[string]any `json:"pooled"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != driftcheck.SchemaVersion {
		t.Errorf("schema_version %d", doc.Schema)
	}
	for _, k := range []string{"effect_floor_pct", "clean_cv_pct", "cv_asymmetry", "alpha", "power", "spending"} {
		if _, ok := doc.Config[k]; !ok {
			t.Errorf("config has no %q: %v", k, doc.Config)
		}
	}
	for _, k := range []string{"lane", "arm", "collection", "pair", "verdict", "delta1_pct", "delta2_pct", "mean_pct", "order_pct", "material_pct", "reason"} {
		if _, ok := doc.Pairs[0][k]; !ok {
			t.Errorf("pairs[0] has no %q: %v", k, doc.Pairs[0])
		}
	}
	for _, k := range []string{"lane", "arm", "collection", "verdict", "reason", "estimate_pct", "ci_low_pct", "ci_high_pct",
		"mde_pct", "noise_pct", "order_effect_pct", "pairs_needed", "median_delta_pct", "counts"} {
		for _, l := range append(doc.Lanes, doc.Pooled...) {
			if _, ok := l[k]; !ok {
				t.Errorf("lane summary has no %q: %v", k, l)
			}
		}
	}
	if doc.Lanes[0]["verdict"] != "reproduced-faster" || doc.Pooled[0]["collection"] != 0.0 {
		t.Errorf("lane %v, pooled %v", doc.Lanes[0]["verdict"], doc.Pooled[0]["collection"])
	}
}

// TestPairCounts checks the pair counts that lane verdict reasons, receipts and results
// blocks all show.
func TestPairCounts(t *testing.T) {
	tests := []struct {
		name string
		s    driftcheck.LaneSummary
		want string
	}{
		{"none", driftcheck.LaneSummary{}, ""},
		{"REPRODUCED split by direction, then the other verdicts in order", driftcheck.LaneSummary{
			ReproducedFaster: 2, ReproducedSlower: 1,
			Counts: map[driftcheck.Verdict]int{driftcheck.Reproduced: 3, driftcheck.Insufficient: 1, driftcheck.Neutral: 2, driftcheck.DriftSuspected: 1},
		}, "2 REPRODUCED faster, 1 REPRODUCED slower, 1 drift-suspected, 2 neutral, 1 insufficient"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := driftcheck.PairCounts(tt.s); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHostBlip checks that one pass far outside the lane's spread is flagged and warned.
func TestHostBlip(t *testing.T) {
	var passes [][2]side
	for p := range 8 {
		d := 90.0 + float64(p%3)
		if p == 4 {
			d = 145
		}
		passes = append(passes, [2]side{rep(100, 6), rep(d, 6)})
	}
	r := analyze(t, handInput(laneL, passes...), driftcheck.DefaultConfig())
	if b := r.Lanes[0].HostBlips; !slices.Equal(b, []int{5}) {
		t.Errorf("host blips %v, want [5]", b)
	}
	want := "lane L, cand vs base, collection 1, pass 5: host blip: delta "
	if !slices.ContainsFunc(r.Warnings, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("no host blip warning in %q", r.Warnings)
	}
	// The pooled summary gives the Hodges-Lehmann estimate of the pair means beside their
	// mean: here both near -9% (the blip's pair is set aside as an outlier).
	if p := r.Pooled[0]; p.HodgesLehmannPct < -10 || p.HodgesLehmannPct > -8.5 {
		t.Errorf("Hodges-Lehmann %.2f%% (mean %.2f%%), want about -9%%", p.HodgesLehmannPct, p.EstimatePct)
	}
}
