package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// TestProgressETA checks that a sequential run's ETA is at most what is left of its
// budget, not the time every planned round would take.
func TestProgressETA(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	p.Forecast(pipeline.Forecast{Budget: time.Minute, MaxPairs: 20, Rounds: 20})
	// 10 of 1000 runs made in an hour: by the runs, 99 more hours; the budget is spent.
	p.start, p.first = time.Now().Add(-time.Hour), 0
	if got := p.eta(10, 1000); got != "0s (budget)" {
		t.Errorf("eta %q, want the budget's", got)
	}
	p.budget = 0
	if got := p.eta(10, 1000); strings.Contains(got, "budget") || got == "?" {
		t.Errorf("eta without a budget %q, want the runs'", got)
	}
	if !strings.Contains(out.String(), "flipbench: plan: 0 lanes x 0 arms") {
		t.Errorf("the forecast was not printed:\n%s", out.String())
	}
}

// TestProgressCountsTheBudget checks that a sequential run's progress counts against the
// runs its budget can run (the forecast's rounds, then the lanes each look leaves
// pending), not against every run max-pairs allows.
func TestProgressCountsTheBudget(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, start: time.Now(), verbose: true}
	lanes := []pipeline.LaneForecast{{Lane: "A"}, {Lane: "B"}, {Lane: "C"}}
	// 3 lanes x 2 arms x 2 passes x 2 collections = 24 runs a round; the budget buys 2.
	p.Forecast(pipeline.Forecast{Sequential: true, Budget: time.Minute, PerRound: 30 * time.Second, MaxPairs: 20, Rounds: 2,
		Arms: 2, Collections: 2, Lanes: lanes})
	// run checks the progress line of run n of 480 after look l (none: nil).
	run := func(q *progress, l *receipt.Look, done, n int, want string) {
		t.Helper()
		if l != nil {
			q.done = done
			q.Look(*l)
		}
		out.Reset()
		q.RunDone(n, 480, receipt.Record{Lane: "B", Arm: "base"})
		if !strings.Contains(out.String(), "flipbench: run "+want+" (") {
			t.Errorf("progress %q, want run %s", out.String(), want)
		}
	}
	run(p, nil, 0, 1, "1/~48")
	// After round 1 (30s) one lane is pending: at its share of round 1 (10s a round) the
	// 30s left buy 3 rounds of it, 24 runs.
	run(p, &receipt.Look{Round: 1, Elapsed: 30 * time.Second, Pending: []string{"B"}}, 24, 25, "25/~48")
	// After round 2 (10s for lane B, 40s of the 60s budget spent) the budget still buys 2
	// rounds of B, 16 runs, where the forecast's 2 rounds would leave none.
	run(p, &receipt.Look{Round: 2, Elapsed: 40 * time.Second, Pending: []string{"B"}}, 32, 33, "33/~48")
	// Without a time per round the plan's total stands.
	q := &progress{w: &out, start: time.Now(), verbose: true}
	q.Forecast(pipeline.Forecast{Sequential: true, MaxPairs: 20, Rounds: 20, Arms: 2, Collections: 2, Lanes: lanes})
	run(q, nil, 0, 1, "1/480")
}

// TestProgressCountsRunsAgain checks that runs measuring a set-aside pass again are
// counted apart from the plan's runs, so the count never passes its total.
func TestProgressCountsRunsAgain(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, start: time.Now(), verbose: true}
	p.RunDone(32, 32, receipt.Record{Lane: "B", Arm: "base"})
	p.RunDone(33, 32, receipt.Record{Lane: "B", Arm: "base", Attempt: 1})
	p.RunDone(34, 32, receipt.Record{Lane: "B", Arm: "cand", Attempt: 1})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{"run 32/32 (", "run 32/32 +1 again (", "run 32/32 +2 again ("} {
		if i >= len(lines) || !strings.Contains(lines[i], "flipbench: "+want) {
			t.Errorf("line %d: want %q in\n%s", i, want, out.String())
		}
	}
	if !strings.Contains(lines[2], "B/cand (measured again)") {
		t.Errorf("the run measured again is not named: %q", lines[2])
	}
}

// TestProgressInALog: without -v a log gets no line per process of a sequential run (its
// looks print one a round, naming the verdicts that changed), a line every tenth of the
// runs of a fixed protocol, and always a failed run's line.
func TestProgressInALog(t *testing.T) {
	var out bytes.Buffer
	seq := &progress{w: &out, start: time.Now()}
	seq.Forecast(pipeline.Forecast{Sequential: true, MinPairs: 2, MaxPairs: 20, Rounds: 20, Arms: 2, Collections: 2, Lanes: []pipeline.LaneForecast{{Lane: "A"}, {Lane: "B"}}})
	out.Reset()
	for n := 1; n <= 16; n++ {
		seq.RunDone(n, 320, receipt.Record{Lane: "A", Arm: "base", Samples: []float64{1}})
	}
	seq.RunDone(17, 320, receipt.Record{Lane: "B", Arm: "cand", Error: "exit status 2"})
	if got := strings.Count(out.String(), "flipbench: run "); got != 1 || !strings.Contains(out.String(), "B/cand FAILED") {
		t.Errorf("a sequential run's log: %d run lines, want only the failed one:\n%s", got, out.String())
	}
	out.Reset()
	look := func(round int, verdicts ...string) string {
		out.Reset()
		l := receipt.Look{Round: round, Pending: []string{"A", "B"}}
		for i, v := range verdicts {
			l.Lanes = append(l.Lanes, receipt.LookLane{Lane: string(rune('A' + i)), Arm: "cand", Verdict: driftcheck.LaneVerdict(v), EstimatePct: 1})
		}
		seq.Look(l)
		return out.String()
	}
	if got := look(2, "undecided", "neutral"); !strings.Contains(got, "look after round 2 (0s measured): B/cand neutral +1.0%; 0 of 2 lanes settled; next round: A, B") {
		t.Errorf("first look: %q", got)
	}
	if got := look(3, "undecided", "neutral"); !strings.Contains(got, ": no verdict changed; 0 of 2 lanes settled;") {
		t.Errorf("a look that changed nothing: %q", got)
	}
	if got := look(4, "reproduced-slower", "neutral"); !strings.Contains(got, ": A/cand reproduced-slower +1.0%; 0 of 2 lanes settled;") {
		t.Errorf("a look that decided A: %q", got)
	}
	out.Reset()
	fixed := &progress{w: &out, start: time.Now()}
	for n := 1; n <= 40; n++ {
		fixed.RunDone(n, 40, receipt.Record{Lane: "A", Arm: "base", Samples: []float64{1}})
	}
	if got := strings.Count(out.String(), "flipbench: run "); got != 10 || !strings.Contains(out.String(), "run 40/40 (") {
		t.Errorf("a fixed protocol's log: %d run lines, want 10, the last 40/40:\n%s", got, out.String())
	}
	if got := laneList([]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}); got != "a, b, c, d, e, f, g, h and 2 more" {
		t.Errorf("laneList = %q", got)
	}
}

// TestOthersFromEnv: FLIPBENCH_OTHERS_PCT replaces the busy-host meter with a fixed share;
// a value that is no percentage is said on one line and the host is measured instead.
func TestOthersFromEnv(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want float64 // -1: measured (no fixed meter)
		warn bool
	}{{"", -1, false}, {"0", 0, false}, {"37.5", 37.5, false}, {"lots", -1, true}, {"120", -1, true}} {
		var errs bytes.Buffer
		s := Streams{Err: &errs, Getenv: func(k string) string {
			if k == "FLIPBENCH_OTHERS_PCT" {
				return tt.v
			}
			return ""
		}}
		opts := pipelineOptions(s, nil, waitFlag{}, nil)
		switch {
		case tt.want < 0 && opts.Others != nil:
			t.Errorf("%q: a fixed meter, want the host measured", tt.v)
		case tt.want >= 0 && (opts.Others == nil || opts.Others()() != tt.want):
			t.Errorf("%q: want a fixed meter at %g", tt.v, tt.want)
		}
		if got := strings.Contains(errs.String(), "FLIPBENCH_OTHERS_PCT="); got != tt.warn {
			t.Errorf("%q: warning %q", tt.v, errs.String())
		}
	}
}
