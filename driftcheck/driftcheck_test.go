package driftcheck_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

var laneL = driftcheck.Lane{Name: "L", Role: driftcheck.RolePrimary}

// qps is a higher-is-better lane (a rate).
var qps = driftcheck.Lane{Name: "qps", Role: driftcheck.RolePrimary, HigherIsBetter: true}

// TestPairVerdicts checks every pass-pair rule and its exact reason on handmade data.
func TestPairVerdicts(t *testing.T) {
	quiet := side{98, 100, 102} // median 100, robust CV 2.9652%
	tests := []struct {
		name      string
		lane      driftcheck.Lane
		p1, p2    [2]side
		verdict   driftcheck.Verdict
		direction string
		reason    string
		d1, d2    float64
	}{
		{
			name: "both faster", lane: laneL,
			p1: [2]side{rep(100, 5), rep(88, 5)}, p2: [2]side{rep(100, 5), rep(90.2, 5)},
			verdict: driftcheck.Reproduced, direction: "faster", d1: -12, d2: -9.8,
			reason: "both passes faster beyond the 3% floor: -12.0% then -9.8%",
		},
		{
			name: "both slower", lane: laneL,
			p1: [2]side{rep(100, 5), rep(106, 5)}, p2: [2]side{rep(200, 5), rep(210.2, 5)},
			verdict: driftcheck.Reproduced, direction: "slower", d1: 6, d2: 5.1,
			reason: "both passes slower beyond the 3% floor: +6.0% then +5.1%",
		},
		{
			name: "exactly at the floor counts", lane: laneL,
			p1: [2]side{rep(100, 5), rep(97, 5)}, p2: [2]side{rep(100, 5), rep(97, 5)},
			verdict: driftcheck.Reproduced, direction: "faster", d1: -3, d2: -3,
			reason: "both passes faster beyond the 3% floor: -3.0% then -3.0%",
		},
		{
			name: "order flip reverses the sign", lane: laneL,
			p1: [2]side{rep(100, 5), rep(108.2, 5)}, p2: [2]side{rep(100, 5), rep(92.1, 5)},
			verdict: driftcheck.DriftSuspected, d1: 8.2, d2: -7.9,
			reason: "order flip reverses the sign, both beyond the 3% floor: +8.2% then -7.9%",
		},
		{
			name: "one pass material, one not", lane: laneL,
			p1: [2]side{rep(100, 5), rep(78, 5)}, p2: [2]side{rep(100, 5), rep(99.6, 5)},
			verdict: driftcheck.OneSided, d1: -22, d2: -0.4,
			reason: "one pass material, one not: -22.0% then -0.4% (3% floor)",
		},
		{
			name: "both within the floor", lane: laneL,
			p1: [2]side{rep(100, 5), rep(100.4, 5)}, p2: [2]side{rep(100, 5), rep(98.9, 5)},
			verdict: driftcheck.Neutral, d1: 0.4, d2: -1.1,
			reason: "both passes within the 3% floor: +0.4% then -1.1%",
		},
		{
			// cand {85,104,125}: median 104, MAD 19, CV 1.4826*19/104 = 27%; base CV 3.0%.
			name: "candidate contaminated in pass 2", lane: laneL,
			p1: [2]side{quiet, side{87, 88, 89}}, p2: [2]side{quiet, side{85, 104, 125}},
			verdict: driftcheck.DriftSuspected, d1: -12, d2: 4,
			reason: "pass 2 contaminated: cand CV 27% vs base 3.0% (deltas -12.0% then +4.0%)",
		},
		{
			// base {85,100,125}: MAD 15, CV 22%; the candidate is faster, so the base is flagged.
			name: "base contaminated in pass 1 against a zero-CV candidate", lane: laneL,
			p1: [2]side{side{85, 100, 125}, rep(90, 3)}, p2: [2]side{quiet, side{89, 90, 91}},
			verdict: driftcheck.DriftSuspected, d1: -10, d2: -10,
			reason: "pass 1 contaminated: base CV 22% vs cand 0% (deltas -10.0% then -10.0%)",
		},
		{
			name: "both passes contaminated", lane: laneL,
			p1: [2]side{side{85, 100, 125}, rep(90, 3)}, p2: [2]side{quiet, side{85, 104, 125}},
			verdict: driftcheck.DriftSuspected, d1: -10, d2: 4,
			reason: "pass 1 contaminated: base CV 22% vs cand 0%; pass 2 contaminated: cand CV 27% vs base 3.0% (deltas -10.0% then +4.0%)",
		},
		{
			// cand CV 27%, base {90,100,110} CV 14.8%: ratio 1.8 < 4, both sides noisy.
			name: "noisy on both sides is not contamination", lane: laneL,
			p1: [2]side{side{90, 100, 110}, side{85, 104, 125}}, p2: [2]side{side{90, 100, 110}, side{85, 104, 125}},
			verdict: driftcheck.Reproduced, direction: "slower", d1: 4, d2: 4,
			reason: "both passes slower beyond the 3% floor: +4.0% then +4.0%",
		},
		{
			// Flagged CV 7.4% is not above the 8% clean-CV threshold even though the base has 0.
			name: "asymmetric but under the clean threshold", lane: laneL,
			p1: [2]side{rep(100, 3), side{95, 100, 105}}, p2: [2]side{rep(100, 3), rep(100, 3)},
			verdict: driftcheck.Neutral, d1: 0, d2: 0,
			reason: "both passes within the 3% floor: +0.0% then +0.0%",
		},
		{
			// 1000/s -> 1250/s is 1 ms -> 0.8 ms per result: -20%; 1000/s -> 2000/s is -50%.
			name: "higher is better: the delta of the reciprocal",
			lane: qps,
			p1:   [2]side{rep(1000, 5), rep(1250, 5)}, p2: [2]side{rep(1000, 5), rep(2000, 5)},
			verdict: driftcheck.Reproduced, direction: "faster", d1: -20, d2: -50,
			reason: "both passes faster beyond the 3% floor: -20.0% then -50.0%",
		},
		{
			name: "higher is better, slower", lane: qps,
			p1: [2]side{rep(1000, 5), rep(800, 5)}, p2: [2]side{rep(1000, 5), rep(500, 5)},
			verdict: driftcheck.Reproduced, direction: "slower", d1: 25, d2: 100,
			reason: "both passes slower beyond the 3% floor: +25.0% then +100.0%",
		},
		{
			// A base that delivers nothing against a candidate that delivers.
			name: "higher is better, zero base median", lane: qps,
			p1: [2]side{rep(0, 5), rep(60, 5)}, p2: [2]side{rep(0, 5), rep(70, 5)},
			verdict: driftcheck.Reproduced, direction: "faster", d1: -100, d2: -100,
			reason: "both passes faster beyond the 3% floor: -100.0% then -100.0%",
		},
		{
			name: "higher is better, zero candidate median", lane: qps,
			p1: [2]side{rep(60, 5), rep(0, 5)}, p2: [2]side{rep(60, 5), rep(30, 5)},
			verdict: driftcheck.Insufficient, d2: 100,
			reason: "pass 1: cand median is 0 (delta undefined)",
		},
		{
			name: "both medians zero is no change", lane: qps,
			p1: [2]side{rep(0, 5), rep(0, 5)}, p2: [2]side{rep(0, 5), rep(0, 5)},
			verdict: driftcheck.Neutral,
			reason:  "both passes within the 3% floor: +0.0% then +0.0%",
		},
		{
			// 5 allocations to none: -100%; a zero median without spread has a CV of 0.
			name: "zero candidate median on a lower-is-better lane", lane: laneL,
			p1: [2]side{rep(5, 5), rep(0, 5)}, p2: [2]side{rep(5, 5), rep(0, 5)},
			verdict: driftcheck.Reproduced, direction: "faster", d1: -100, d2: -100,
			reason: "both passes faster beyond the 3% floor: -100.0% then -100.0%",
		},
		{
			name: "zero median with spread", lane: laneL,
			p1: [2]side{rep(100, 5), side{-2, -1, 0, 1, 2}}, p2: [2]side{rep(100, 5), rep(90, 5)},
			verdict: driftcheck.Insufficient, d2: -10,
			reason: "pass 1: cand median is 0 with samples spread around it (CV undefined)",
		},
		{
			name: "missing base observation", lane: laneL,
			p1: [2]side{rep(100, 5), rep(90, 5)}, p2: [2]side{nil, rep(90, 5)},
			verdict: driftcheck.Insufficient, d1: -10,
			reason: "pass 2: no base observation",
		},
		{
			name: "one sample on the base, failed candidate run", lane: laneL,
			p1: [2]side{side{100}, side{}}, p2: [2]side{rep(100, 5), rep(90, 5)},
			verdict: driftcheck.Insufficient, d2: -10,
			reason: "pass 1: only 1 base sample (need 2); no cand samples",
		},
		{
			name: "zero base median", lane: laneL,
			p1: [2]side{rep(0, 5), rep(90, 5)}, p2: [2]side{rep(100, 5), rep(90, 5)},
			verdict: driftcheck.Insufficient, d2: -10,
			reason: "pass 1: base median is 0 (delta undefined)",
		},
		{
			name: "insufficient wins over contamination", lane: laneL,
			p1: [2]side{side{85, 100, 125}, rep(90, 3)}, p2: [2]side{rep(100, 3), nil},
			verdict: driftcheck.Insufficient, d1: -10,
			reason: "pass 2: no cand observation",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := driftcheck.Analyze(handInput(tc.lane, tc.p1, tc.p2), driftcheck.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Pairs) != 1 {
				t.Fatalf("got %d pairs, want 1", len(r.Pairs))
			}
			p := r.Pairs[0]
			if p.Verdict != tc.verdict || p.Direction != tc.direction || p.Reason != tc.reason {
				t.Errorf("got %s %q %q\nwant %s %q %q", p.Verdict, p.Direction, p.Reason, tc.verdict, tc.direction, tc.reason)
			}
			if math.Abs(p.Delta1Pct-tc.d1) > 1e-9 || math.Abs(p.Delta2Pct-tc.d2) > 1e-9 {
				t.Errorf("deltas %v, %v; want %v, %v", p.Delta1Pct, p.Delta2Pct, tc.d1, tc.d2)
			}
			insufficientWarned := slices.ContainsFunc(r.Warnings, func(w string) bool {
				return strings.Contains(w, "pair 1: insufficient: "+tc.reason+"; rerun")
			})
			if insufficientWarned != (tc.verdict == driftcheck.Insufficient) {
				t.Errorf("insufficient warning present = %v; warnings %q", insufficientWarned, r.Warnings)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("report does not encode: %v", err)
			}
		})
	}
}

// TestPassDeltaFields checks the per-pass numbers: medians, robust CVs, order and flags.
func TestPassDeltaFields(t *testing.T) {
	in := handInput(laneL,
		[2]side{side{98, 100, 102}, side{85, 104, 125}},
		[2]side{side{102, 100, 98, 100}, side{90, 90, 90, 91}})
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := []driftcheck.PassDelta{
		{Lane: "L", Arm: "cand", Collection: 1, Pass: 1, Order: "forward", BaseN: 3, CandN: 3, Usable: true,
			BaseMedian: 100, CandMedian: 104, DeltaPct: 4, BaseCVPct: 1.4826 * 2, CandCVPct: 1.4826 * 19 / 104 * 100,
			Flagged: "candidate", Contaminated: true},
		{Lane: "L", Arm: "cand", Collection: 1, Pass: 2, Order: "reverse", BaseN: 4, CandN: 4, Usable: true,
			BaseMedian: 100, CandMedian: 90, DeltaPct: -10, BaseCVPct: 1.4826 * 1, CandCVPct: 0,
			Flagged: "base"},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
	if d := cmp.Diff(want, r.Passes, approx); d != "" {
		t.Errorf("passes (-want +got):\n%s", d)
	}
}

// TestLaneVerdicts checks the lane rule and its exact reasons on handmade pairs.
func TestLaneVerdicts(t *testing.T) {
	fast := [2]side{rep(100, 5), rep(90, 5)}
	slow := [2]side{rep(100, 5), rep(110, 5)}
	same := [2]side{rep(100, 5), rep(100, 5)}
	gone := [2]side{rep(100, 5), nil}
	tests := []struct {
		name    string
		passes  [][2]side
		verdict driftcheck.LaneVerdict
		reason  string
	}{
		{
			name:    "majority reproduced faster",
			passes:  [][2]side{fast, fast, fast, fast, same, same},
			verdict: driftcheck.LaneReproducedFaster,
			reason:  "2 of 3 pairs REPRODUCED faster, none slower; median pass delta -10.0% (mean -6.7%) beyond the 3% floor",
		},
		{
			name:    "half is not a majority",
			passes:  [][2]side{fast, fast, fast, fast, same, same, same, same},
			verdict: driftcheck.LaneMixed,
			reason:  "median pass delta -5.0% (mean -5.0%) beyond the 3% floor, but the pairs do not reproduce it in one direction; pairs: 2 REPRODUCED faster, 2 neutral of 4",
		},
		{
			name:    "majority reproduced slower",
			passes:  [][2]side{slow, slow, slow, slow, slow, slow},
			verdict: driftcheck.LaneReproducedSlower,
			reason:  "3 of 3 pairs REPRODUCED slower, none faster; median pass delta +10.0% (mean +10.0%) beyond the 3% floor",
		},
		{
			name:    "one pair the other way makes it mixed",
			passes:  [][2]side{fast, fast, fast, fast, fast, fast, slow, slow},
			verdict: driftcheck.LaneMixed,
			reason:  "median pass delta -10.0% (mean -5.0%) beyond the 3% floor, but the pairs do not reproduce it in one direction; pairs: 3 REPRODUCED faster, 1 REPRODUCED slower of 4",
		},
		{
			name:    "drift-suspected pairs dominate",
			passes:  [][2]side{slow, fast, slow, fast, fast, fast},
			verdict: driftcheck.LaneDrift,
			reason:  "2 of 3 usable pairs drift-suspected (median pass delta -10.0%, mean -3.3%): the result depends on order or time; check the host and rerun",
		},
		{
			name:    "one-sided pairs with a material median",
			passes:  [][2]side{fast, same, fast, same, fast, fast},
			verdict: driftcheck.LaneMixed,
			reason:  "median pass delta -10.0% (mean -6.7%) beyond the 3% floor, but the pairs do not reproduce it in one direction; pairs: 1 REPRODUCED faster, 2 one-sided of 3",
		},
		{
			name:    "insufficient pairs count against a reproduction",
			passes:  [][2]side{fast, fast, gone, fast, gone, fast},
			verdict: driftcheck.LaneInsufficient,
			reason:  "only 1 of 3 pairs usable; more than half lack data",
		},
		{
			name:    "nothing usable",
			passes:  [][2]side{gone, gone},
			verdict: driftcheck.LaneInsufficient,
			reason:  "no usable pass: all 1 pairs insufficient",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := driftcheck.Analyze(handInput(laneL, tc.passes...), driftcheck.Config{})
			if err != nil {
				t.Fatal(err)
			}
			l := r.Lanes[0]
			if l.Verdict != tc.verdict || l.Reason != tc.reason {
				t.Errorf("got %s %q\nwant %s %q", l.Verdict, l.Reason, tc.verdict, tc.reason)
			}
			total := 0
			for _, n := range l.Counts {
				total += n
			}
			if total != l.Pairs || len(l.Counts) != len(driftcheck.Verdicts()) {
				t.Errorf("counts %v do not cover %d pairs with every verdict", l.Counts, l.Pairs)
			}
		})
	}
}

// TestSynthetic runs seeded synthetic experiments through Analyze.
func TestSynthetic(t *testing.T) {
	withEffect := func(w world, arm string, e float64) world {
		w.effect = map[string]float64{arm: e}
		return w
	}
	withDrift := func(w world, d func(float64) float64) world { w.drift = d; return w }
	throughput := aa(1)
	throughput.lanes[0].HigherIsBetter = true
	two := aa(2)
	two.cands = []string{"candA", "candB"}
	two.effect = map[string]float64{"candA": -0.05, "candB": 0.06}
	orderEffect := aa(3)
	orderEffect.order = 0.06

	tests := []struct {
		name  string
		w     world
		seed  uint64
		lanes map[string]driftcheck.LaneVerdict // per candidate; every lane, every collection
		// allowed pair verdicts and the share of pairs that must have one of them
		allowed  []driftcheck.Verdict
		minShare float64
	}{
		{
			name: "A/A without drift", w: aa(3), seed: 1,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneNeutral},
			allowed: []driftcheck.Verdict{driftcheck.Neutral}, minShare: 0.9,
		},
		{
			// The drift moves 20% over 144 runs: 0.14% between a lane's two arms, which the
			// order flip cancels. The pairs that are not neutral are chance one-sided ones
			// (3% noise over 20 samples puts 1.2% of pass deltas beyond the floor).
			name: "A/A with a linear 20% drift", w: withDrift(aa(3), linearDrift(0.2)), seed: 2,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneNeutral},
			allowed: []driftcheck.Verdict{driftcheck.Neutral, driftcheck.DriftSuspected}, minShare: 0.9,
		},
		{
			name: "A/A with a 10% step", w: withDrift(aa(3), step(0.4, 0.1)), seed: 3,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneNeutral},
			allowed: []driftcheck.Verdict{driftcheck.Neutral, driftcheck.DriftSuspected}, minShare: 0.9,
		},
		{
			// Whichever arm runs second pays 6%: +6% forward, -6% reverse.
			name: "A/A with a 6% order effect", w: orderEffect, seed: 4,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneDrift},
			allowed: []driftcheck.Verdict{driftcheck.DriftSuspected}, minShare: 0.75,
		},
		{
			name: "5% faster", w: withEffect(aa(3), "cand", -0.05), seed: 5,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneReproducedFaster},
			allowed: []driftcheck.Verdict{driftcheck.Reproduced}, minShare: 0.75,
		},
		{
			name: "5% faster under a linear 20% drift", w: withDrift(withEffect(aa(3), "cand", -0.05), linearDrift(0.2)), seed: 6,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneReproducedFaster},
			allowed: []driftcheck.Verdict{driftcheck.Reproduced}, minShare: 0.75,
		},
		{
			name: "5% slower in a higher-is-better unit", w: withEffect(throughput, "cand", 0.05), seed: 7,
			lanes:   map[string]driftcheck.LaneVerdict{"cand": driftcheck.LaneReproducedSlower},
			allowed: []driftcheck.Verdict{driftcheck.Reproduced}, minShare: 0.75,
		},
		{
			name: "two candidates against one base", w: two, seed: 8,
			lanes: map[string]driftcheck.LaneVerdict{
				"candA": driftcheck.LaneReproducedFaster, "candB": driftcheck.LaneReproducedSlower},
			allowed: []driftcheck.Verdict{driftcheck.Reproduced}, minShare: 0.75,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.w.input(newRand(tc.seed), false)
			r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(r.Lanes), len(tc.w.cands)*tc.w.collections*len(tc.w.lanes); got != want {
				t.Fatalf("%d lane summaries, want %d", got, want)
			}
			for _, l := range r.Lanes {
				if l.Verdict != tc.lanes[l.Arm] {
					t.Errorf("lane %s %s collection %d: %s (%s), want %s", l.Lane, l.Arm, l.Collection, l.Verdict, l.Reason, tc.lanes[l.Arm])
				}
			}
			aaWorld := len(tc.w.effect) == 0
			ok := 0
			for _, p := range r.Pairs {
				if slices.Contains(tc.allowed, p.Verdict) {
					ok++
				}
				if aaWorld && p.Verdict == driftcheck.Reproduced {
					t.Errorf("A/A pair REPRODUCED: %+v", p)
				}
				if p.Verdict == driftcheck.Reproduced && p.Direction == "slower" && tc.w.effect[p.Arm] < 0 ||
					p.Verdict == driftcheck.Reproduced && p.Direction == "faster" && tc.w.effect[p.Arm] > 0 {
					t.Errorf("pair REPRODUCED in the wrong direction: %+v", p)
				}
			}
			if share := float64(ok) / float64(len(r.Pairs)); share < tc.minShare {
				t.Errorf("%.0f%% of pairs are %v, want at least %.0f%%", 100*share, tc.allowed, 100*tc.minShare)
			}
			t.Logf("pair verdicts: %v", verdictCounts(r.Pairs))
		})
	}
}

func verdictCounts(pairs []driftcheck.Pair) map[driftcheck.Verdict]int {
	m := map[driftcheck.Verdict]int{}
	for _, p := range pairs {
		m[p.Verdict]++
	}
	return m
}

// TestHostBlip checks that one pass far outside the lane's spread is flagged and that
// the median, not the mean, carries the lane verdict.
func TestHostBlip(t *testing.T) {
	w := aa(1)
	w.effect = map[string]float64{"cand": -0.05}
	in := w.input(newRand(9), false)
	for i, o := range in.Observations {
		if o.Collection == 1 && o.Pass == 5 && o.Arm == "cand" {
			for j := range o.Samples {
				in.Observations[i].Samples[j] *= 1.45
			}
		}
	}
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	l := r.Lanes[0]
	if !slices.Equal(l.HostBlips, []int{5}) {
		t.Errorf("host blips %v, want [5]", l.HostBlips)
	}
	if l.Verdict != driftcheck.LaneReproducedFaster {
		t.Errorf("verdict %s (%s), want reproduced-faster", l.Verdict, l.Reason)
	}
	if l.MeanDeltaPct-l.MedianDeltaPct < 2 {
		t.Errorf("mean %.1f%% should sit well above median %.1f%%", l.MeanDeltaPct, l.MedianDeltaPct)
	}
	for _, pd := range r.Passes {
		if pd.HostBlip != (pd.Collection == 1 && pd.Pass == 5) {
			t.Errorf("collection %d pass %d: host blip %v", pd.Collection, pd.Pass, pd.HostBlip)
		}
	}
	if r.Lanes[1].Verdict != driftcheck.LaneReproducedFaster || len(r.Lanes[1].HostBlips) != 0 {
		t.Errorf("collection 2: %s, blips %v", r.Lanes[1].Verdict, r.Lanes[1].HostBlips)
	}
	want := "lane A, cand vs base, collection 1, pass 5: host blip: delta "
	if !slices.ContainsFunc(r.Warnings, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("no host blip warning in %q", r.Warnings)
	}
}

// TestMissingObservations checks that lost runs become insufficient verdicts and warnings.
func TestMissingObservations(t *testing.T) {
	w := aa(2)
	w.effect = map[string]float64{"cand": -0.05}
	in := w.input(newRand(10), false)
	var kept []driftcheck.Observation
	for _, o := range in.Observations {
		switch {
		case o.Lane == "A" && o.Collection == 1 && o.Pass == 4 && o.Arm == "base": // one lost run
		case o.Lane == "B" && o.Collection == 2 && o.Arm == "cand": // a lane that crashed
		default:
			kept = append(kept, o)
		}
	}
	in.Observations = kept
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]driftcheck.LaneVerdict{}
	for _, l := range r.Lanes {
		got[fmt.Sprintf("%s/%d", l.Lane, l.Collection)] = l.Verdict
	}
	want := map[string]driftcheck.LaneVerdict{
		"A/1": driftcheck.LaneReproducedFaster, "A/2": driftcheck.LaneReproducedFaster,
		"B/1": driftcheck.LaneReproducedFaster, "B/2": driftcheck.LaneInsufficient,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lane verdicts (-want +got):\n%s", d)
	}
	for _, p := range r.Pairs {
		if p.Lane == "A" && p.Collection == 1 && p.Pair == 2 {
			if p.Verdict != driftcheck.Insufficient || p.Reason != "pass 4: no base observation" {
				t.Errorf("pair A/1/2: %s %q", p.Verdict, p.Reason)
			}
		}
	}
	wantWarn := "lane A, cand vs base, collection 1, pair 2: insufficient: pass 4: no base observation; rerun that pass-pair with at least 2 samples per side"
	if !slices.Contains(r.Warnings, wantWarn) {
		t.Errorf("missing warning %q in %q", wantWarn, r.Warnings)
	}
	n := 0
	for _, s := range r.Warnings {
		if strings.HasPrefix(s, "lane B, cand vs base, collection 2, pair ") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d warnings for lane B collection 2, want one per pair (6)", n)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("report does not encode: %v", err)
	}
}

// TestSampleWarnings checks the few-samples and non-finite warnings.
func TestSampleWarnings(t *testing.T) {
	in := handInput(laneL,
		[2]side{side{100, 101, 99, 100}, side{90, 91, 89, math.NaN(), 90, math.Inf(1)}},
		[2]side{rep(100, 8), rep(90, 8)})
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
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

// TestPooled checks the pooled Mann-Whitney p and confidence intervals.
func TestPooled(t *testing.T) {
	w := aa(1)
	w.effect = map[string]float64{"cand": -0.05}
	in := w.input(newRand(11), false)
	before := slices.Clone(in.Observations[0].Samples)
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, in.Observations[0].Samples) {
		t.Error("Analyze reordered the caller's samples")
	}
	l := r.Lanes[0]
	if l.P >= 1e-6 {
		t.Errorf("p = %g for a 5%% effect over 240 samples per side", l.P)
	}
	if l.Base.N != 240 || l.Cand.N != 240 || !l.Base.Bounded || !(l.Cand.Lo < l.Cand.Median && l.Cand.Median < l.Cand.Hi) {
		t.Errorf("summaries %+v %+v", l.Base, l.Cand)
	}
	if l.Cand.Hi >= l.Base.Lo {
		t.Errorf("confidence intervals overlap: cand %+v base %+v", l.Cand, l.Base)
	}
	if l.PooledDeltaPct > -3 || l.PooledDeltaPct < -7 {
		t.Errorf("pooled delta %.1f%%", l.PooledDeltaPct)
	}
	if l.Faster != 12 || l.Passes != 12 {
		t.Errorf("faster %d/%d", l.Faster, l.Passes)
	}
	// Two samples per side: the interval is unbounded and said so, and still encodes.
	r, err = driftcheck.Analyze(handInput(laneL, [2]side{side{1, 2}, side{3, 4}}, [2]side{side{1, 2}, side{3, 4}}), driftcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Lanes[0].Base; s.Bounded || s.Lo != 0 || s.Hi != 0 || s.N != 4 {
		t.Errorf("small summary %+v", s)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Error(err)
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
		{name: "pass zero", edit: func(in *driftcheck.Input) { in.Observations[0].Pass = 0 },
			errMsg: `observation 0: pass 0 out of range 1..2`},
		{name: "collection out of range", edit: func(in *driftcheck.Input) { in.Observations[0].Collection = 2 },
			errMsg: `observation 0: collection 2 out of range 1..1`},
		{name: "duplicate", edit: func(in *driftcheck.Input) { in.Observations[2].Pass = 1 },
			errMsg: `observation 2: duplicate of observation 0 (collection 1, pass 1, lane "L", arm "base")`},
		{name: "odd passes", edit: func(in *driftcheck.Input) { in.Passes = 3 },
			errMsg: `passes: 3 per collection: want an even number >= 2`},
		{name: "absurd protocol", edit: func(in *driftcheck.Input) { in.Collections = 1 << 40 },
			errMsg: `protocol of 4.398046511104e+12 runs (collections x passes x lanes x arms): want at most 10000000`},
		{name: "no collections", edit: func(in *driftcheck.Input) { in.Collections = 0 },
			errMsg: `collections: 0: want at least 1`},
		{name: "no candidates", edit: func(in *driftcheck.Input) { in.Candidates = nil },
			errMsg: `no candidate arms`},
		{name: "candidate named like the base", edit: func(in *driftcheck.Input) { in.Candidates = []string{"base"} },
			errMsg: `candidates[0]: arm "base" listed twice`},
		{name: "bad role", edit: func(in *driftcheck.Input) { in.Lanes[0].Role = "primray" },
			errMsg: `lane "L": role "primray": want primary, secondary, guard or control`},
		{name: "bad expect", edit: func(in *driftcheck.Input) { in.Lanes[0].Expect = "quicker" },
			errMsg: `lane "L": expect "quicker": want faster, slower or neutral`},
		{name: "negative floor", cfg: driftcheck.Config{EffectFloorPct: -1},
			errMsg: `config: effect_floor_pct -1: want a positive number`},
		{name: "asymmetry below one", cfg: driftcheck.Config{CVAsymmetry: 0.5},
			errMsg: `config: cv_asymmetry 0.5: want a ratio >= 1`},
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
	r, err := driftcheck.Analyze(in, driftcheck.Config{EffectFloorPct: 5})
	if err != nil {
		t.Fatal(err)
	}
	if want := (driftcheck.Config{EffectFloorPct: 5, CleanCVPct: 8, CVAsymmetry: 4}); r.Config != want {
		t.Errorf("config %+v, want %+v", r.Config, want)
	}
	if p := r.Pairs[0]; p.Verdict != driftcheck.Neutral || p.Reason != "both passes within the 5% floor: -4.0% then -4.0%" {
		t.Errorf("pair %s %q", p.Verdict, p.Reason)
	}
}

// TestReportJSON pins the JSON field names that scripts and other packages rely on.
func TestReportJSON(t *testing.T) {
	in := handInput(laneL, [2]side{rep(100, 3), rep(90, 3)}, [2]side{rep(100, 3), rep(90, 3)})
	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config map[string]float64 `json:"config"`
		Pairs  []map[string]any   `json:"pairs"`
		Lanes  []map[string]any   `json:"lanes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]float64{"effect_floor_pct": 3, "clean_cv_pct": 8, "cv_asymmetry": 4}, doc.Config); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	for _, k := range []string{"lane", "arm", "collection", "pair", "verdict", "delta1_pct", "delta2_pct", "reason"} {
		if _, ok := doc.Pairs[0][k]; !ok {
			t.Errorf("pairs[0] has no %q: %v", k, doc.Pairs[0])
		}
	}
	if doc.Pairs[0]["verdict"] != "REPRODUCED" {
		t.Errorf("verdict %v", doc.Pairs[0]["verdict"])
	}
	counts, _ := doc.Lanes[0]["counts"].(map[string]any)
	if counts["REPRODUCED"] != 1.0 || counts["drift-suspected"] != 0.0 {
		t.Errorf("counts %v", counts)
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
