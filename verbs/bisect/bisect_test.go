package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// fake is a Measurer over a model history: each commit has a log-scale time level, and a
// comparison returns the level difference with an interval of +-half (log scale), as if
// measured without noise.
type fake struct {
	level  map[string]float64 // commit hash -> log time
	half   float64            // interval half-width, log scale
	broken map[string]bool    // commits that do not build
	calls  []Pair
}

func (f *fake) Measure(_ context.Context, p Pair) (Measurement, error) {
	f.calls = append(f.calls, p)
	if f.broken[p.Cand.Hash] {
		return Measurement{}, &BuildError{Commit: p.Cand, Err: errors.New("work.go:3: syntax error")}
	}
	d := f.level[p.Cand.Hash] - f.level[p.Base.Hash]
	pct := func(x float64) float64 { return 100 * math.Expm1(x) }
	e := Effect{Lane: "Spin", EstimatePct: pct(d), LowPct: pct(d - f.half), HighPct: pct(d + f.half), Bounded: true, Confidence: 0.95, Pairs: 2}
	switch {
	case d-f.half > 0:
		e.Verdict = driftcheck.LaneReproducedSlower
	case d+f.half < 0:
		e.Verdict = driftcheck.LaneReproducedFaster
	case d-f.half > -0.03 && d+f.half < 0.03:
		e.Verdict = driftcheck.LaneNeutral
	default:
		e.Verdict = driftcheck.LaneUndecided
	}
	other := Effect{Lane: "Other", Verdict: driftcheck.LaneNeutral, Bounded: true, Pairs: 2}
	return Measurement{Lanes: []Effect{other, e}, Receipt: "results/" + p.Cand.Hash}, nil
}

// history makes a range of n commits c1..cn (GOOD is c1, BAD cn) with the given level
// changes at some commits (commit number -> log change).
func history(n int, steps map[int]float64) (Range, *fake) {
	f := &fake{level: map[string]float64{}, half: 0.1, broken: map[string]bool{}}
	var r Range
	lvl := 0.0
	for i := 1; i <= n; i++ {
		lvl += steps[i]
		c := Commit{Hash: fmt.Sprintf("c%d", i), Subject: fmt.Sprintf("commit %d", i)}
		f.level[c.Hash] = lvl
		if i == 1 {
			r.Good = c
			continue
		}
		r.Commits = append(r.Commits, c)
	}
	r.Bad = r.Commits[len(r.Commits)-1]
	return r, f
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		steps    map[int]float64
		broken   []string
		half     float64
		dir      Direction
		status   Status
		first    string
		suspects []string
		multiple bool
		maxSteps int
		reason   string
	}{
		{name: "commit 5 of 8 doubles", n: 8, steps: map[int]float64{5: math.Ln2}, status: StatusFound, first: "c5", maxSteps: 4},
		{name: "the first commit after GOOD", n: 8, steps: map[int]float64{2: math.Ln2}, status: StatusFound, first: "c2", maxSteps: 4},
		{name: "BAD itself", n: 8, steps: map[int]float64{8: math.Ln2}, status: StatusFound, first: "c8", maxSteps: 4},
		{name: "one commit in the range", n: 2, steps: map[int]float64{2: math.Ln2}, status: StatusFound, first: "c2", maxSteps: 0},
		{name: "20 commits", n: 21, steps: map[int]float64{13: 0.5}, status: StatusFound, first: "c13", maxSteps: 6},
		{name: "an improvement hunt", n: 8, steps: map[int]float64{6: -math.Ln2}, dir: Faster, status: StatusFound, first: "c6", maxSteps: 4},
		{name: "skipped commits before the change", n: 8, steps: map[int]float64{5: math.Ln2}, broken: []string{"c4", "c5"},
			status: StatusFound, first: "c6", suspects: []string{"c4", "c5", "c6"}},
		{name: "a skipped commit after the change", n: 8, steps: map[int]float64{4: math.Ln2}, broken: []string{"c5"},
			status: StatusFound, first: "c4", suspects: []string{"c4"}},
		{name: "two step changes", n: 8, steps: map[int]float64{3: 0.25, 6: 0.45}, half: 0.05, status: StatusFound, first: "c6", multiple: true},
		{name: "a change taken back in part", n: 8, steps: map[int]float64{4: 1.0, 7: -0.4}, half: 0.05, status: StatusFound, first: "c4", multiple: true},
		{name: "a midpoint that cannot be decided", n: 8, steps: map[int]float64{5: 0.3}, half: 0.2, status: StatusUndecided, reason: "--max-pairs"},
		{name: "no change", n: 8, status: StatusRefused, reason: "BAD (c8) is not reproduced slower than GOOD (c1): Other 0.0% [0.0%, 0.0%] neutral"},
		{name: "slower, hunting faster", n: 8, steps: map[int]float64{5: math.Ln2}, dir: Faster, status: StatusRefused, reason: "is not reproduced faster"},
		{name: "an undecided baseline", n: 8, steps: map[int]float64{5: 0.05}, status: StatusRefused, reason: "Spin +5.1% [-4.9%, +16.2%] undecided; an undecided baseline may decide with more pairs: run again with a higher --max-pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := history(tc.n, tc.steps)
			if tc.half > 0 {
				f.half = tc.half
			}
			for _, b := range tc.broken {
				f.broken[b] = true
			}
			saved := 0
			o, err := Run(context.Background(), f, Request{Range: r, Direction: tc.dir, Save: func(*Outcome) error { saved++; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.status {
				t.Fatalf("status %s, want %s (%s)", o.Status, tc.status, o.Reason)
			}
			if tc.reason != "" && !strings.Contains(o.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", o.Reason, tc.reason)
			}
			if saved < len(o.Steps) {
				t.Errorf("saved %d times for %d steps", saved, len(o.Steps))
			}
			if tc.status != StatusFound {
				return
			}
			if o.FirstBad == nil || o.FirstBad.Hash != tc.first {
				t.Fatalf("first bad %v, want %s", o.FirstBad, tc.first)
			}
			if tc.maxSteps > 0 && o.Measured() > tc.maxSteps {
				t.Errorf("%d steps measured beyond the baseline, want at most %d", o.Measured(), tc.maxSteps)
			}
			if tc.suspects != nil {
				var got []string
				for _, c := range o.Suspects {
					got = append(got, c.Hash)
				}
				if strings.Join(got, ",") != strings.Join(tc.suspects, ",") {
					t.Errorf("suspects %v, want %v", got, tc.suspects)
				}
			}
			if o.Multiple != tc.multiple {
				t.Errorf("multiple %v (%v), want %v", o.Multiple, o.MultipleReasons, tc.multiple)
			}
			if o.StepEffect == nil || o.StepEffect.Verdict != tc.dir.verdictOr() {
				t.Errorf("step effect %+v, want %s", o.StepEffect, tc.dir.verdictOr())
			}
			// Every midpoint is against GOOD; the step is against the last good commit.
			for _, p := range f.calls[1:] {
				if p.Lane != "Spin" {
					t.Errorf("step %s against %s measured lane %q, want Spin", p.Cand.Hash, p.Base.Hash, p.Lane)
				}
			}
		})
	}
}

// verdictOr is the verdict of the direction, Slower when unset.
func (d Direction) verdictOr() driftcheck.LaneVerdict {
	if d == "" {
		return Slower.verdict()
	}
	return d.verdict()
}

func TestRunSteps(t *testing.T) {
	r, f := history(8, map[int]float64{5: math.Ln2})
	o, err := Run(context.Background(), f, Request{Range: r})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.calls {
		got = append(got, p.Cand.Hash+"-"+p.Base.Hash)
	}
	// The baseline, three midpoints against GOOD (c4: good, c6: bad, c5: bad), the step.
	if want := "c8-c1 c4-c1 c6-c1 c5-c1 c5-c4"; strings.Join(got, " ") != want {
		t.Errorf("comparisons %s, want %s", strings.Join(got, " "), want)
	}
	if o.Lane != "Spin" || math.Abs(o.MarkPct-41.42) > 0.01 {
		t.Errorf("lane %s mark %.2f, want Spin at +41.42%%", o.Lane, o.MarkPct)
	}
	var b strings.Builder
	if err := Write(&b, o, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`first slower commit: c5 (4/7) "commit 5"`,
		"  effect of c5 on Spin against c4: +100% [+81.0%, +121%] (2.00x slower), reproduced-slower: the whole GOOD->BAD change",
		"one step change",
		"4 steps measured beyond GOOD against BAD",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRunResume(t *testing.T) {
	r, f := history(8, map[int]float64{5: math.Ln2})
	f.half = 0.5 // the first midpoint (c4: 0 +-0.5 against a mark of 0.35) is undecided
	first, err := Run(context.Background(), f, Request{Range: r})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != StatusUndecided || !strings.Contains(first.Reason, "step 1, c4 (3/7) against GOOD, is undecided") {
		t.Fatalf("status %s (%s), want undecided at step 1", first.Status, first.Reason)
	}
	// More pairs: a narrower interval. The baseline is decided and is not measured again;
	// the undecided midpoint is.
	f.half, f.calls = 0.1, nil
	second, err := Run(context.Background(), f, Request{Range: r, Known: first.Steps})
	if err != nil {
		t.Fatal(err)
	}
	if second.Status != StatusFound || second.FirstBad.Hash != "c5" {
		t.Fatalf("status %s first %v, want c5 found", second.Status, second.FirstBad)
	}
	if len(f.calls) != 4 || f.calls[0].Cand.Hash != "c4" || !second.Steps[0].Reused {
		t.Errorf("resumed run measured %d pairs starting with %v, want the 4 steps after the reused baseline", len(f.calls), f.calls)
	}
	// Resuming a finished bisection measures nothing.
	f.calls = nil
	third, err := Run(context.Background(), f, Request{Range: r, Known: second.Steps})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 0 || third.Measured() != 0 || third.FirstBad.Hash != "c5" {
		t.Errorf("finished bisection resumed: %d calls, %d measured, first %v", len(f.calls), third.Measured(), third.FirstBad)
	}
}

func TestRunErrors(t *testing.T) {
	r, f := history(8, map[int]float64{5: math.Ln2})
	f.broken["c8"] = true
	if _, err := Run(context.Background(), f, Request{Range: r}); err == nil || !strings.Contains(err.Error(), "commit c8 does not build") {
		t.Errorf("BAD that does not build: %v", err)
	}
	if _, err := Run(context.Background(), f, Request{Range: Range{Good: r.Good}}); err == nil || !strings.Contains(err.Error(), "empty range") {
		t.Errorf("empty range: %v", err)
	}
	r, f = history(8, map[int]float64{5: math.Ln2})
	o, err := Run(context.Background(), f, Request{Range: r, Lane: "Other"})
	if err != nil || o.Status != StatusRefused || !strings.Contains(o.Reason, "Other 0.0% [0.0%, 0.0%] neutral") || strings.Contains(o.Reason, "Spin") {
		t.Errorf("--lane Other, which did not change: %v %+v", err, o)
	}
}

func TestHalfway(t *testing.T) {
	for _, tc := range []struct{ total, want float64 }{{100, 41.42}, {-50, -29.29}, {0, 0}, {21, 10}} {
		if got := Halfway(tc.total); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("Halfway(%v) = %.2f, want %.2f", tc.total, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	total := Effect{EstimatePct: 100, LowPct: 90, HighPct: 110, Bounded: true, Pairs: 4}
	eff := func(est, lo, hi float64) Effect {
		return Effect{EstimatePct: est, LowPct: lo, HighPct: hi, Bounded: true, Pairs: 4}
	}
	for _, tc := range []struct {
		name    string
		e       Effect
		dir     Direction
		total   Effect
		side    Side
		reason  string
		between string
	}{
		{name: "at BAD", e: eff(98, 85, 112), side: SideBad, reason: "lies beyond the halfway mark +41.4%"},
		{name: "at GOOD", e: eff(1, -5, 7), side: SideGood, reason: "lies short of the halfway mark +41.4%"},
		{name: "just beyond the mark", e: eff(50, 42, 58), side: SideBad, between: "measured between GOOD and BAD"},
		{name: "holding the mark", e: eff(45, 30, 61), side: SideUndecided, reason: "about 74 pairs per collection would decide it: rerun with --max-pairs 74", between: "measured between GOOD and BAD"},
		{name: "at the mark", e: eff(41.42, 30, 54), side: SideUndecided, reason: "may hold part of the change", between: "between GOOD and BAD"},
		{name: "no interval", e: Effect{EstimatePct: 90, Pairs: 1}, side: SideUndecided, reason: "has no interval yet"},
		{name: "faster than GOOD", e: eff(-20, -25, -15), side: SideGood, between: "beyond GOOD, the other way"},
		{name: "slower than BAD", e: eff(150, 130, 170), side: SideBad, between: "beyond BAD"},
		{name: "improvement hunt, at BAD", dir: Faster, total: eff(-50, -55, -45), e: eff(-49, -53, -44), side: SideBad, reason: "beyond the halfway mark -29.3%"},
		{name: "improvement hunt, at GOOD", dir: Faster, total: eff(-50, -55, -45), e: eff(2, -3, 7), side: SideGood},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dir == "" {
				tc.dir = Slower
			}
			if !tc.total.Bounded {
				tc.total = total
			}
			side, reason, between := Classify(tc.e, tc.total, Halfway(tc.total.EstimatePct), tc.dir)
			if side != tc.side {
				t.Errorf("side %s (%s), want %s", side, reason, tc.side)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", reason, tc.reason)
			}
			if (between == "") != (tc.between == "") || !strings.Contains(between, tc.between) {
				t.Errorf("between %q, want %q", between, tc.between)
			}
		})
	}
}

func TestWhole(t *testing.T) {
	total := Effect{EstimatePct: 100, LowPct: 90, HighPct: 110, Bounded: true}
	for _, tc := range []struct {
		name string
		step Effect
		want string
	}{
		{name: "the whole change", step: Effect{EstimatePct: 95, LowPct: 80, HighPct: 111, Bounded: true}},
		{name: "part of it", step: Effect{EstimatePct: 50, LowPct: 45, HighPct: 55, Bounded: true}, want: "other commits of the range carry the rest"},
		{name: "more than it", step: Effect{EstimatePct: 150, LowPct: 140, HighPct: 160, Bounded: true}, want: "took part of it back"},
		{name: "no interval", step: Effect{EstimatePct: 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Whole(tc.step, total, Slower)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Whole = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		lo, hi  int
		skipped []int
		want    int
	}{
		{lo: -1, hi: 6, want: 2},                         // 2 and 3 are as near the middle: the earlier
		{lo: 2, hi: 6, want: 4},                          //
		{lo: -1, hi: 6, skipped: []int{2, 3}, want: 1},   // nearest unskipped
		{lo: 1, hi: 4, skipped: []int{2, 3}, want: -1},   // nothing left
		{lo: 3, hi: 4, want: -1},                         // adjacent
		{lo: -1, hi: 0, want: -1},                        // one commit
		{lo: -1, hi: 20, skipped: []int{9}, want: 10},    // the middle, skipped: the next
		{lo: -1, hi: 20, skipped: []int{9, 10}, want: 8}, // then the earlier of two
	} {
		sk := map[int]bool{}
		for _, i := range tc.skipped {
			sk[i] = true
		}
		if got := pick(tc.lo, tc.hi, sk); got != tc.want {
			t.Errorf("pick(%d, %d, %v) = %d, want %d", tc.lo, tc.hi, tc.skipped, got, tc.want)
		}
	}
}

func TestRulePending(t *testing.T) {
	r := Rule{Halfway: true, MarkPct: 41.4}
	for _, tc := range []struct {
		e    Effect
		want bool
	}{
		{Effect{LowPct: 42, HighPct: 60, Bounded: true}, false},
		{Effect{LowPct: 10, HighPct: 41, Bounded: true}, false},
		{Effect{LowPct: 30, HighPct: 50, Bounded: true}, true},
		{Effect{EstimatePct: 90}, true},
	} {
		if got := r.Pending(tc.e); got != tc.want {
			t.Errorf("Pending(%+v) = %v, want %v", tc.e, got, tc.want)
		}
	}
	if (Rule{}).Pending(Effect{Verdict: driftcheck.LaneReproducedSlower}) || !(Rule{}).Pending(Effect{Verdict: driftcheck.LaneUndecided}) {
		t.Error("the verdict rule: a reproduced lane is done, an undecided one pending")
	}
}

func TestExactBench(t *testing.T) {
	for lane, want := range map[string]string{"Spin": "^BenchmarkSpin$", "Get/size=10": "^BenchmarkGet$/^size=10$"} {
		if got := ExactBench(lane); got != want {
			t.Errorf("ExactBench(%q) = %q, want %q", lane, got, want)
		}
	}
}
