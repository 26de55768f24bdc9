package gate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// lane returns a summary of lane name for arm "cand" in collection c (0: pooled) with
// verdict v and a consistent 95% interval: estimate est +- half, in log-percent.
func lane(name string, c int, v driftcheck.LaneVerdict, est, half float64) driftcheck.LaneSummary {
	const q = 2.1788128296672284 // t(0.975, 12)
	x, h := est/100, half/100
	return driftcheck.LaneSummary{Lane: name, Arm: "cand", Collection: c, Verdict: v, Reason: string(v),
		EstimateLog: x, SELog: h / q, DF: 12, DFUsed: 12, Crit: q, Tail: 0.025, Bounded: v != driftcheck.LaneInsufficient, NoisePct: h / q * math.Sqrt(24) * 100,
		EstimatePct: (math.Exp(x) - 1) * 100, CILowPct: (math.Exp(x-h) - 1) * 100, CIHighPct: (math.Exp(x+h) - 1) * 100, UsablePairs: 6}
}

// report returns a drift report of one lane "a" with two collections and a pooled summary.
// report1 is a look at round 3 of a sequential rule of up to 20 pairs, so that an undecided
// lane reads rerun (the binding end is TestBindingEnd's).
func report1(c1, c2, pooled driftcheck.LaneSummary) driftcheck.Report {
	cfg := driftcheck.DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 2, 20
	for _, s := range []*driftcheck.LaneSummary{&c1, &c2, &pooled} {
		s.Round = 3
	}
	return driftcheck.Report{Config: cfg, Lanes: []driftcheck.LaneSummary{c1, c2}, Pooled: []driftcheck.LaneSummary{pooled}}
}

// TestBindingEnd: at the rule's last look every lane passes or fails: an undecided lane
// passes (with the gate's catch rate stated), and one whose pooled interval lies above the
// threshold that a collection did not reproduce passes with a reason that says so.
func TestBindingEnd(t *testing.T) {
	const und, slow = driftcheck.LaneUndecided, driftcheck.LaneReproducedSlower
	end := func(r driftcheck.Report) driftcheck.Report {
		r.Config.MaxPairs = 3
		return r
	}
	noop := end(report1(lane("a", 1, und, 1, 6), lane("a", 2, und, 0, 6), lane("a", 0, und, 0.5, 7)))
	if res := Evaluate(noop, nil, Rule{ThresholdPct: 5}); res.Outcome != Pass || !strings.Contains(res.Findings[0].Reason, "passed at the rule's last look") || !strings.Contains(res.Findings[0].Reason, "catches a 10% regression with probability") {
		t.Errorf("undecided at the end: %s %q", res.Outcome, res.Findings[0].Reason)
	}
	// A pass at the last look that would miss most regressions of twice the threshold is
	// counted above the table.
	res := Evaluate(noop, nil, Rule{ThresholdPct: 5})
	f := res.Findings[0]
	var md strings.Builder
	if err := Markdown(&md, res, "b", "c", "r", "95%"); err != nil {
		t.Fatal(err)
	}
	weak := strings.Contains(md.String(), "1 of 1 lanes passed only at the rule's last look")
	if !f.LastLook || weak != (f.CatchPct < 50) {
		t.Errorf("last look %v, catch %.1f%%: summary counts it weak: %v\n%s", f.LastLook, f.CatchPct, weak, md.String())
	}
	// A lane without an interval at the last look (its pairs too few to estimate its noise)
	// passes too, saying it rules nothing out: the binding end leaves no lane undecided.
	bare := end(report1(lane("a", 1, driftcheck.LaneInsufficient, 0, 9), lane("a", 2, driftcheck.LaneInsufficient, 0, 9), lane("a", 0, driftcheck.LaneInsufficient, 0, 9)))
	bare.Pooled[0].Round, bare.Pooled[0].UsablePairs = 3, 1
	if res := Evaluate(bare, nil, Rule{ThresholdPct: 5}); res.Outcome != Pass || !res.Findings[0].LastLook || !strings.Contains(res.Findings[0].Reason, "with no interval: 1 usable pair cannot estimate the noise") {
		t.Errorf("no interval at the last look: %s %q", res.Outcome, res.Findings[0].Reason)
	}
	ruled := Evaluate(report1(lane("a", 1, und, 0, 20), lane("a", 2, und, 0, 20), lane("a", 0, und, 0, 20)), nil, Rule{ThresholdPct: 50})
	if ruled.Findings[0].LastLook {
		t.Errorf("a lane whose regression is ruled out is not a last-look pass: %+v", ruled.Findings[0])
	}
	split := end(report1(lane("a", 1, slow, 20, 4), lane("a", 2, und, 8, 9), lane("a", 0, und, 14, 3)))
	if res := Evaluate(split, nil, Rule{ThresholdPct: 5}); res.Outcome != Pass || !strings.Contains(res.Findings[0].Reason, "but look at it: the pooled interval lies above the 5% threshold") {
		t.Errorf("pooled regression at the end: %s %q", res.Outcome, res.Findings[0].Reason)
	}
}

func TestEvaluate(t *testing.T) {
	const (
		slow    = driftcheck.LaneReproducedSlower
		fast    = driftcheck.LaneReproducedFaster
		neutral = driftcheck.LaneNeutral
		und     = driftcheck.LaneUndecided
		insuff  = driftcheck.LaneInsufficient
	)
	tests := []struct {
		name   string
		rep    driftcheck.Report
		want   Outcome
		reason string
	}{
		{"neutral passes", report1(lane("a", 1, neutral, 1, 1.5), lane("a", 2, neutral, -1, 1.5), lane("a", 0, neutral, 0, 1)),
			Pass, "a regression beyond 5% is ruled out: pooled effect 0.0% [-1.0%, +1.0%]"},
		{"faster passes", report1(lane("a", 1, fast, -20, 3), lane("a", 2, fast, -19, 3), lane("a", 0, fast, -19.5, 2)), Pass, "ruled out"},
		{"undecided but below the threshold passes", report1(lane("a", 1, und, 1, 6), lane("a", 2, und, 0, 6), lane("a", 0, und, 0.5, 4)), Pass, "ruled out"},
		{"slower in both collections", report1(lane("a", 1, slow, 20, 4), lane("a", 2, slow, 18, 4), lane("a", 0, slow, 19, 3)),
			Regression, "reproduced slower in every collection (+22.1%, +19.7%) beyond the 5% threshold"},
		{"slower below the threshold passes", report1(lane("a", 1, slow, 3.5, 0.5), lane("a", 2, slow, 3.5, 0.5), lane("a", 0, slow, 3.5, 0.4)), Pass, "ruled out"},
		{"slower in one collection only", report1(lane("a", 1, slow, 20, 4), lane("a", 2, und, 8, 9), lane("a", 0, slow, 14, 5)),
			Rerun, "not reproduced in every collection (reproduced-slower, undecided); about"},
		{"undecided reaching past the threshold", report1(lane("a", 1, und, 2, 8), lane("a", 2, und, 1, 8), lane("a", 0, und, 1.5, 6)),
			Rerun, "a regression beyond 5% is not ruled out: pooled effect +1.5% [-4.4%, +7.8%] reaches past it; about"},
		{"insufficient", report1(lane("a", 1, insuff, 0, 0), lane("a", 2, insuff, 0, 0), lane("a", 0, insuff, 0, 0)),
			Rerun, "no interval yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Evaluate(tt.rep, nil, Rule{ThresholdPct: 5})
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s, want %s (%+v)", res.Outcome, tt.want, res.Findings)
			}
			if tt.reason != "" && !strings.Contains(res.Findings[0].Reason, tt.reason) {
				t.Fatalf("reason %q, want it to contain %q", res.Findings[0].Reason, tt.reason)
			}
			if res.Outcome == Rerun && res.Findings[0].MorePairs == 0 {
				t.Errorf("a rerun says no more pairs")
			}
		})
	}
	// The worst lane wins.
	rep := report1(lane("a", 1, neutral, 0, 1), lane("a", 2, neutral, 0, 1), lane("a", 0, neutral, 0, 1))
	b := report1(lane("b", 1, slow, 30, 4), lane("b", 2, slow, 30, 4), lane("b", 0, slow, 30, 3))
	rep.Lanes, rep.Pooled = append(rep.Lanes, b.Lanes...), append(rep.Pooled, b.Pooled...)
	if res := Evaluate(rep, nil, Rule{ThresholdPct: 5}); res.Outcome != Regression {
		t.Errorf("worst lane: %s", res.Outcome)
	}
}

// A lane with a threshold of its own is judged against it; the others against the gate's.
func TestEvaluateLaneThresholds(t *testing.T) {
	const slow = driftcheck.LaneReproducedSlower
	rep := report1(lane("a", 1, slow, 1, 0.1), lane("a", 2, slow, 1, 0.1), lane("a", 0, slow, 1, 0.05))
	if res := Evaluate(rep, nil, Rule{ThresholdPct: 5}); res.Outcome != Pass || res.Findings[0].ThresholdPct != 5 {
		t.Errorf("against 5%%: %s, %+v", res.Outcome, res.Findings)
	}
	res := Evaluate(rep, nil, Rule{ThresholdPct: 5, LanePct: map[string]float64{"a": 0.5}})
	if res.Outcome != Regression || res.Findings[0].ThresholdPct != 0.5 || !strings.Contains(res.Findings[0].Reason, "beyond the 0.5% threshold") {
		t.Errorf("against its own 0.5%%: %s, %+v", res.Outcome, res.Findings)
	}
	if got := Pending(rep, Rule{ThresholdPct: 5, LanePct: map[string]float64{"a": 0.5}}); len(got) != 0 {
		t.Errorf("Pending = %v, want none (decided)", got)
	}
}

// TestFamily: with many guard lanes, a regression call needs every collection's interval
// above 0 at alpha/N; a slowdown that one lane alone would call is a rerun among six.
func TestFamily(t *testing.T) {
	wide := func(name string) driftcheck.Report {
		return report1(lane(name, 1, driftcheck.LaneReproducedSlower, 20, 15), lane(name, 2, driftcheck.LaneReproducedSlower, 20, 15), lane(name, 0, driftcheck.LaneReproducedSlower, 20, 10))
	}
	if res := Evaluate(wide("a"), nil, Rule{ThresholdPct: 5}); res.Outcome != Regression {
		t.Fatalf("one lane: %s, want regression", res.Outcome)
	}
	rep := wide("a")
	for _, n := range []string{"b", "c", "d", "e", "f"} {
		q := report1(lane(n, 1, driftcheck.LaneNeutral, 0, 1), lane(n, 2, driftcheck.LaneNeutral, 0, 1), lane(n, 0, driftcheck.LaneNeutral, 0, 1))
		rep.Lanes, rep.Pooled = append(rep.Lanes, q.Lanes...), append(rep.Pooled, q.Pooled...)
	}
	res := Evaluate(rep, nil, Rule{ThresholdPct: 5})
	if res.Outcome != Rerun || res.Findings[0].Outcome != Rerun {
		t.Fatalf("six lanes: %s (%+v), want rerun", res.Outcome, res.Findings[0])
	}
}

func run(lane, arm string, errMsg string) receipt.Record {
	r := receipt.Record{Lane: lane, Arm: arm, Samples: []float64{1, 2, 3}}
	if errMsg != "" {
		r.Samples, r.Error, r.StderrTail = nil, errMsg, "goroutine 1 [running]:\npanic: lane crashed on purpose\n"
	}
	return r
}

// A failed run is never noise: a crash in the candidate fails the gate even when the
// drift check, short of samples, would only advise a rerun, and even when another lane
// shows a reproduced regression.
func TestEvaluateFailures(t *testing.T) {
	rep := driftcheck.Report{Lanes: []driftcheck.LaneSummary{
		lane("a", 1, driftcheck.LaneInsufficient, 0, 0), lane("a", 2, driftcheck.LaneInsufficient, 0, 0),
		lane("b", 1, driftcheck.LaneReproducedSlower, 30, 4), lane("b", 2, driftcheck.LaneReproducedSlower, 30, 4),
		lane("c", 1, driftcheck.LaneNeutral, 0, 1), lane("c", 2, driftcheck.LaneNeutral, 0, 1),
	}, Pooled: []driftcheck.LaneSummary{lane("a", 0, driftcheck.LaneInsufficient, 0, 0), lane("b", 0, driftcheck.LaneReproducedSlower, 30, 3), lane("c", 0, driftcheck.LaneNeutral, 0, 1)}}
	runs := []receipt.Record{
		run("a", "base", ""), run("a", "cand", "exited with status 3"),
		run("a", "base", ""), run("a", "cand", "exited with status 3"),
		run("b", "base", ""), run("b", "cand", ""),
		run("c", "base", "timed out after 1m0s"), run("c", "cand", ""),
		run("c", "base", ""), run("c", "cand", ""),
	}
	res := Evaluate(rep, runs, Rule{ThresholdPct: 5})
	if res.Outcome != Broken {
		t.Fatalf("outcome %s, want %s", res.Outcome, Broken)
	}
	want := []Failure{
		{Lane: "a", Arm: "cand", Failed: 2, Runs: 2, Error: "exited with status 3", Stderr: "panic: lane crashed on purpose"},
		{Lane: "c", Arm: "base", Failed: 1, Runs: 2, Error: "timed out after 1m0s", Stderr: "panic: lane crashed on purpose"},
	}
	if !slices.Equal(res.Failures, want) {
		t.Fatalf("failures\n got %+v\nwant %+v", res.Failures, want)
	}
	outcomes := map[string]Outcome{}
	for _, f := range res.Findings {
		outcomes[f.Lane] = f.Outcome
	}
	if outcomes["a"] != Broken || outcomes["b"] != Regression || outcomes["c"] != Broken {
		t.Fatalf("lane outcomes %v", outcomes)
	}
	if got, want := res.Findings[0].Reason, "runs failed: arm cand: 2 of 2 runs failed (exited with status 3: panic: lane crashed on purpose)"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	// A lane that the drift check has nothing on still shows up.
	res = Evaluate(driftcheck.Report{}, []receipt.Record{run("x", "cand", "exited with status 2")}, Rule{ThresholdPct: 5})
	if res.Outcome != Broken || len(res.Findings) != 1 || res.Findings[0].Lane != "x" {
		t.Fatalf("got %+v", res)
	}
	// No failures, no Broken.
	if res := Evaluate(rep, runs[4:6], Rule{ThresholdPct: 5}); res.Outcome != Regression || len(res.Failures) != 0 {
		t.Fatalf("got %+v", res)
	}
}

func TestMarkdown(t *testing.T) {
	res := Result{Outcome: Broken, ThresholdPct: 5,
		Findings: []Finding{
			{Lane: "alpha", Arm: "cand", Outcome: Broken, Reason: "runs failed: arm cand: 1 of 1 runs failed (exited with status 3)"},
			{Lane: "beta", Arm: "cand", Outcome: Pass, DeltaPct: []float64{1.04, -0.5}, EstimatePct: 0.3, CILowPct: -1.2, CIHighPct: 1.8, Bounded: true, Pairs: 4,
				Unit: "ns/op", BaseValue: 171000, CandValue: 171513,
				Verdicts: []driftcheck.LaneVerdict{driftcheck.LaneNeutral, driftcheck.LaneNeutral}, Reason: "a | b"},
		},
		Failures: []Failure{{Lane: "alpha", Arm: "cand", Failed: 1, Runs: 1, Error: "exited with status 3"}},
	}
	var b strings.Builder
	if err := Markdown(&b, res, "abc", "HEAD", "results/x.md", "97.5%"); err != nil {
		t.Fatal(err)
	}
	want := "## flipbench gate: FAIL: runs failed, the build is broken\n\n" +
		"Base `abc`, candidate `HEAD`; threshold 5%. Positive effects are slower.\n\n" +
		"| lane  | arm  | base -> candidate  | effect [97.5% CI]    | effect per collection | lane verdicts    | pairs | outcome | reason                                                           |\n" +
		"|:------|:-----|:-------------------|:---------------------|:----------------------|:-----------------|:------|:--------|:-----------------------------------------------------------------|\n" +
		"| alpha | cand | -                  | -                    |                       |                  | 0     | broken  | runs failed: arm cand: 1 of 1 runs failed (exited with status 3) |\n" +
		"| beta  | cand | 171.0µs -> 171.5µs | +0.3% [-1.2%, +1.8%] | +1.0%, -0.5%          | neutral, neutral | 4     | pass    | a \\| b                                                           |\n" +
		"\n### Failed runs\n\n" +
		"A failed run is a real failure, not noise: a rerun will not fix it. The receipt has each run's error and stderr.\n\n" +
		"- lane alpha, arm cand: 1 of 1 runs failed (exited with status 3)\n" +
		"\nReceipt: `results/x.md`\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestMorePairs checks the sizing of a rerun's MorePairs at 80% power: the pass side by its
// formula, the regression side over every collection (the smallest pair count at which the
// catch rate reaches 80%, and not one pair fewer).
func TestMorePairs(t *testing.T) {
	coll := driftcheck.LaneSummary{Bounded: true, SELog: 0.02, UsablePairs: 4, Tail: 0.0125, DFUsed: 20}
	colls := []driftcheck.LaneSummary{coll, coll}
	pooled := driftcheck.LaneSummary{Bounded: true, SELog: 0.02 / math.Sqrt2, UsablePairs: 8, Crit: 2.1, EstimateLog: 0.01}
	thr := driftcheck.FloorLog(3)
	// Pass: n = 8 (SE (crit + z0.8) / margin)^2.
	want := int(math.Ceil(8 * math.Pow(pooled.SELog*(2.1+0.8416212335729143)/(thr-0.01), 2)))
	if got := pairsToPass(pooled, thr, 0.8, crits{}); got != want {
		t.Errorf("pairsToPass = %d, want %d", got, want)
	}
	theta := 2 * thr
	n := pairsToCatch(colls, pooled, theta, thr, 3, 0.8, crits{})
	if n <= 0 || n%2 != 0 {
		t.Fatalf("pairsToCatch = %d, want a positive count over 2 collections", n)
	}
	rate := func(perColl int) float64 {
		cs := []driftcheck.LaneSummary{coll, coll}
		for i := range cs {
			cs[i].SELog = coll.SELog * math.Sqrt(4/float64(perColl))
		}
		p := pooled
		p.SELog = pooled.SELog * math.Sqrt(8/float64(2*perColl))
		return catchRate(cs, p, theta, thr, 3, crits{})
	}
	if r := rate(n / 2); r < 0.8 {
		t.Errorf("at %d pairs per collection the catch rate is %.2f, want >= 0.8", n/2, r)
	}
	if r := rate(n/2 - 1); n > 2 && r >= 0.8 {
		t.Errorf("one pair fewer per collection already catches %.2f", r)
	}
	if got := pairsToPass(driftcheck.LaneSummary{}, thr, 0.8, crits{}); got != -1 {
		t.Errorf("no interval: %d, want -1", got)
	}
}

// TestAnytime checks the rule of a continued run: its intervals are confidence sequences,
// wider than the look's, so evidence that passes or fails at a look may not when it was
// collected over continued runs; and the summary says so.
func TestAnytime(t *testing.T) {
	// A lane 1% slower with a pooled interval of +-1.6% at its look: a pass at a 3% threshold.
	coll := driftcheck.LaneSummary{Lane: "a", Arm: "cand", Collection: 1, Bounded: true, SELog: 0.011, UsablePairs: 6, Tail: 0.0125, DFUsed: 10,
		EstimateLog: 0.01, Verdict: driftcheck.LaneUndecided}
	c2 := coll
	c2.Collection = 2
	pooled := coll
	pooled.Collection, pooled.SELog, pooled.UsablePairs, pooled.Crit, pooled.DFUsed, pooled.Round = 0, 0.008, 12, 2.0, 20, 6
	rep := driftcheck.Report{Base: "base", Collections: 2, Config: driftcheck.Config{Alpha: 0.05, MaxPairs: 20}, Lanes: []driftcheck.LaneSummary{coll, c2},
		Pooled: []driftcheck.LaneSummary{pooled}}
	if res := Evaluate(rep, nil, Rule{ThresholdPct: 3}); res.Outcome != Pass {
		t.Fatalf("at the look: %s (%s), want pass", res.Outcome, res.Findings[0].Reason)
	}
	any := Rule{ThresholdPct: 3, Anytime: &Anytime{TunedRounds: 20, PriorRounds: 4}}
	res := Evaluate(rep, nil, any)
	if res.Outcome != Rerun || res.ContinuedRounds != 4 {
		t.Fatalf("continued: %s, %d rounds continued (%s), want a rerun: the sequence's interval reaches past 3%%", res.Outcome, res.ContinuedRounds, res.Findings[0].Reason)
	}
	f := res.Findings[0]
	if f.CIHighPct-f.CILowPct <= pooled.CIHighPct-pooled.CILowPct || f.CIHighPct < 3 {
		t.Errorf("continued interval [%.2f%%, %.2f%%]: want the sequence's, wider than the look's and past the threshold", f.CILowPct, f.CIHighPct)
	}
	var md strings.Builder
	if err := Markdown(&md, res, "b", "c", "r", "95%"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"This run continues 4 earlier rounds", "effect [95% CS]"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, md.String())
		}
	}
	// With four times the noise's precision, the sequence passes it too.
	pooled.SELog, pooled.UsablePairs = 0.002, 200
	rep.Pooled = []driftcheck.LaneSummary{pooled}
	if res := Evaluate(rep, nil, any); res.Outcome != Pass {
		t.Errorf("continued with 200 pairs: %s (%s), want pass", res.Outcome, res.Findings[0].Reason)
	}
}

// TestFamilySpentOverLooks: with N lanes, each collection's replication test is designed
// at alpha/2N over the rule's looks, which at every look of a Pocock rule of 2 to 20
// rounds is stricter than the look's own tail divided by N (what the gate did before, and
// what let 5 no-op lanes fail about 2.95% of the time instead of at most 2.5%).
func TestFamilySpentOverLooks(t *testing.T) {
	cfg := driftcheck.DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 2, 20
	d, err := driftcheck.NewDesign(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	fam, err := FamilyDesign(cfg, 2, n)
	if err != nil {
		t.Fatal(err)
	}
	k := crits{alpha: cfg.Alpha, collections: 2, family: fam}
	var spent float64
	for r := 2; r <= 20; r++ {
		c := driftcheck.LaneSummary{Round: r, Tail: d.CollTail(r), DFUsed: 30}
		if got, old := k.collection(c, n), driftcheck.TCritical(c.Tail/n, c.DFUsed); !(got > old) {
			t.Errorf("round %d: critical value %.3f, not beyond the divided tail's %.3f", r, got, old)
		}
		spent += k.family.CollTail(r)
	}
	// The nominal tails of correlated looks sum to more than what they spend, but never
	// to less: at least alpha/2N in all.
	if spent < cfg.Alpha/(2*n) {
		t.Errorf("the family's nominal tails sum to %.5f, below alpha/2N = %.5f", spent, cfg.Alpha/(2*n))
	}
}

// TestVerdictsCell: a lane that passed by ruling a regression out shows a collection's
// reproduced slowdown as under the threshold, not as a regression; other lanes show the
// verdicts as they are.
func TestVerdictsCell(t *testing.T) {
	slow := []driftcheck.LaneVerdict{driftcheck.LaneUndecided, driftcheck.LaneReproducedSlower}
	pass := Finding{Outcome: Pass, Bounded: true, CIHighPct: 2.1, ThresholdPct: 3, Verdicts: slow}
	if got := pass.verdictsCell(); got != "undecided, slower, under the threshold" {
		t.Errorf("passed lane: %q", got)
	}
	above := pass
	above.CIHighPct = 4
	if got := above.verdictsCell(); got != "undecided, slower, not shown past the threshold" {
		t.Errorf("passed at the last look above the threshold: %q", got)
	}
	rerun := pass
	rerun.Outcome = Rerun
	if got := rerun.verdictsCell(); got != "undecided, reproduced-slower" {
		t.Errorf("rerun: %q", got)
	}
}

// TestStoppedLaneAtTheEnd: a lane passed at an earlier look and measured no more is
// judged at the run's last look like the others. Its interval can widen afterwards (the
// other lanes' noise lends to it), and a rerun then would be a rerun no round measures: an
// A/A gate of the stickiness guards ended "stop: decided" and yet exit 4 that way.
func TestStoppedLaneAtTheEnd(t *testing.T) {
	const und = driftcheck.LaneUndecided
	a := report1(lane("a", 1, und, 1, 6), lane("a", 2, und, 0, 6), lane("a", 0, und, 0.5, 3))
	b := report1(lane("b", 1, und, -4, 9), lane("b", 2, und, -2, 9), lane("b", 0, und, -3.3, 8.4))
	rep := a
	rep.Config.MaxPairs = 20
	for i := range a.Lanes {
		rep.Lanes[i].Round = 20
	}
	rep.Pooled[0].Round = 20
	for _, s := range b.Lanes {
		s.Round = 18
		rep.Lanes = append(rep.Lanes, s)
	}
	bp := b.Pooled[0]
	bp.Round = 18
	rep.Pooled = append(rep.Pooled, bp)
	res := Evaluate(rep, nil, Rule{ThresholdPct: 5})
	if res.Outcome != Pass || res.Findings[1].Outcome != Pass || !strings.Contains(res.Findings[1].Reason, "passed at the rule's last look (round 20)") {
		t.Errorf("a lane stopped at round 18 at the run's last look: %s, %q", res.Findings[1].Outcome, res.Findings[1].Reason)
	}
	// Before the last look the same lane is left to a rerun.
	rep.Config.MaxPairs = 30
	if res := Evaluate(rep, nil, Rule{ThresholdPct: 5}); res.Findings[1].Outcome != Rerun {
		t.Errorf("before the last look: %s", res.Findings[1].Outcome)
	}
}
