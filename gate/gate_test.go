package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

func lane(name string, c int, v driftcheck.LaneVerdict, delta float64) driftcheck.LaneSummary {
	return driftcheck.LaneSummary{Lane: name, Arm: "cand", Collection: c, Verdict: v, MedianDeltaPct: delta, Reason: string(v)}
}

func TestEvaluate(t *testing.T) {
	const (
		slow    = driftcheck.LaneReproducedSlower
		fast    = driftcheck.LaneReproducedFaster
		neutral = driftcheck.LaneNeutral
		drift   = driftcheck.LaneDrift
		mixed   = driftcheck.LaneMixed
		insuff  = driftcheck.LaneInsufficient
	)
	tests := []struct {
		name   string
		lanes  []driftcheck.LaneSummary
		want   Outcome
		reason string
	}{
		{"all neutral", []driftcheck.LaneSummary{lane("a", 1, neutral, 1), lane("a", 2, neutral, -1)}, Pass, "no reproduced regression beyond 5% (+1.0%, -1.0%)"},
		{"faster is fine", []driftcheck.LaneSummary{lane("a", 1, fast, -20), lane("a", 2, fast, -19)}, Pass, "no reproduced regression"},
		{"slower in both collections", []driftcheck.LaneSummary{lane("a", 1, slow, 20), lane("a", 2, slow, 18)}, Regression, "slower in every collection (+20.0%, +18.0%)"},
		{"slower below threshold passes", []driftcheck.LaneSummary{lane("a", 1, slow, 4), lane("a", 2, slow, 4)}, Pass, "no reproduced regression beyond 5%"},
		{"slower in one collection only", []driftcheck.LaneSummary{lane("a", 1, slow, 20), lane("a", 2, neutral, 1)}, Rerun, "some collections but not all"},
		{"drift", []driftcheck.LaneSummary{lane("a", 1, drift, 9), lane("a", 2, neutral, 0)}, Rerun, "collection 1: drift"},
		{"insufficient", []driftcheck.LaneSummary{lane("a", 1, insuff, 0), lane("a", 2, neutral, 0)}, Rerun, "collection 1: insufficient"},
		{"mixed leaning slower", []driftcheck.LaneSummary{lane("a", 1, mixed, 6), lane("a", 2, neutral, 0)}, Rerun, "mixed, leaning slower at +6.0%"},
		{"mixed leaning faster", []driftcheck.LaneSummary{lane("a", 1, mixed, -6), lane("a", 2, neutral, 0)}, Pass, ""},
		{"worst lane wins", []driftcheck.LaneSummary{lane("a", 1, drift, 0), lane("b", 1, slow, 30)}, Regression, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Evaluate(driftcheck.Report{Lanes: tt.lanes}, nil, 5)
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s, want %s (%+v)", res.Outcome, tt.want, res.Findings)
			}
			if tt.reason != "" && !strings.Contains(res.Findings[0].Reason, tt.reason) {
				t.Fatalf("reason %q, want it to contain %q", res.Findings[0].Reason, tt.reason)
			}
		})
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
		lane("a", 1, driftcheck.LaneInsufficient, 0), lane("a", 2, driftcheck.LaneInsufficient, 0),
		lane("b", 1, driftcheck.LaneReproducedSlower, 30), lane("b", 2, driftcheck.LaneReproducedSlower, 30),
		lane("c", 1, driftcheck.LaneNeutral, 0), lane("c", 2, driftcheck.LaneNeutral, 0),
	}}
	runs := []receipt.Record{
		run("a", "base", ""), run("a", "cand", "exited with status 3"),
		run("a", "base", ""), run("a", "cand", "exited with status 3"),
		run("b", "base", ""), run("b", "cand", ""),
		run("c", "base", "timed out after 1m0s"), run("c", "cand", ""),
		run("c", "base", ""), run("c", "cand", ""),
	}
	res := Evaluate(rep, runs, 5)
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
	res = Evaluate(driftcheck.Report{}, []receipt.Record{run("x", "cand", "exited with status 2")}, 5)
	if res.Outcome != Broken || len(res.Findings) != 1 || res.Findings[0].Lane != "x" {
		t.Fatalf("got %+v", res)
	}
	// No failures, no Broken.
	if res := Evaluate(rep, runs[4:6], 5); res.Outcome != Regression || len(res.Failures) != 0 {
		t.Fatalf("got %+v", res)
	}
}

func TestMarkdown(t *testing.T) {
	res := Result{Outcome: Broken, ThresholdPct: 5,
		Findings: []Finding{
			{Lane: "alpha", Arm: "cand", Outcome: Broken, Reason: "runs failed: arm cand: 1 of 1 runs failed (exited with status 3)"},
			{Lane: "beta", Arm: "cand", Outcome: Pass, DeltaPct: []float64{1.04, -0.5},
				Verdicts: []driftcheck.LaneVerdict{driftcheck.LaneNeutral, driftcheck.LaneNeutral}, Reason: "a | b"},
		},
		Failures: []Failure{{Lane: "alpha", Arm: "cand", Failed: 1, Runs: 1, Error: "exited with status 3"}},
	}
	var b strings.Builder
	if err := Markdown(&b, res, "abc", "HEAD", "results/x.md"); err != nil {
		t.Fatal(err)
	}
	want := "## flipbench gate: FAIL: runs failed, the build is broken\n\n" +
		"Base `abc`, candidate `HEAD`; threshold 5%. Positive deltas are slower.\n\n" +
		"| lane  | arm  | median delta per collection | lane verdicts    | outcome | reason                                                           |\n" +
		"|:------|:-----|:----------------------------|:-----------------|:--------|:-----------------------------------------------------------------|\n" +
		"| alpha | cand |                             |                  | broken  | runs failed: arm cand: 1 of 1 runs failed (exited with status 3) |\n" +
		"| beta  | cand | +1.0%, -0.5%                | neutral, neutral | pass    | a \\| b                                                           |\n" +
		"\n### Failed runs\n\n" +
		"A failed run is a real failure, not noise: a rerun will not fix it. The receipt has each run's error and stderr.\n\n" +
		"- lane alpha, arm cand: 1 of 1 runs failed (exited with status 3)\n" +
		"\nReceipt: `results/x.md`\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
