package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// planEvents records what a run shows of its plan.
type planEvents struct {
	discard
	forecasts []Forecast
	notes     []string
	looks     []receipt.Look
}

func (p *planEvents) Forecast(f Forecast) { p.forecasts = append(p.forecasts, f) }
func (p *planEvents) Note(msg string)     { p.notes = append(p.notes, msg) }
func (p *planEvents) Look(l receipt.Look) { p.looks = append(p.looks, l) }

// TestRunShowsPlan runs a sequential gate, without processes, on a machine whose noise
// no number of rounds resolves: the run shows a forecast before round 1 (no time per
// round: exec lanes are not calibrated), another after round 1 with the measured time
// and the lanes' shared noise (1 degree of freedom of a lane's own: no MDE until round 2),
// and then says of each lane, once, that it cannot be decided.
func TestRunShowsPlan(t *testing.T) {
	dir := t.TempDir()
	job, _ := gateJob(t, dir, fakeArms(t))
	ev := &planEvents{}
	opts := quietOptions(&fakeStarter{between: 0.6, within: 0.05, seed: 3})
	opts.Events = ev
	if _, err := Run(context.Background(), job, opts); err != nil {
		t.Fatal(err)
	}
	if len(ev.forecasts) != 2 {
		t.Fatalf("%d forecasts, want 2 (before and after round 1)", len(ev.forecasts))
	}
	before, after := ev.forecasts[0], ev.forecasts[1]
	if before.After != 0 || before.PerRound != 0 || before.Known() {
		t.Errorf("forecast before round 1 %+v, want one without a time per round", before)
	}
	if after.After != 1 || after.PerRound <= 0 || after.NoiseKnown() || after.OwnAfter != 2 || !(after.SharedHighPct > 0) {
		t.Errorf("forecast after round 1 %+v, want the measured time and the lanes' shared noise", after)
	}
	// Each lane is said to be undecidable once, when it first is.
	said := map[string]int{}
	for _, n := range ev.notes {
		if !strings.Contains(n, "cannot be decided within max-pairs (20 rounds) at this noise: ") {
			t.Errorf("note %q", n)
		}
		for _, lane := range []string{"alpha", "beta"} {
			if strings.Contains(n, ": "+lane+" (MDE ") || strings.Contains(n, ", "+lane+" (MDE ") {
				said[lane]++
			}
		}
	}
	if said["alpha"] != 1 || said["beta"] != 1 {
		t.Errorf("notes %q: want alpha and beta said once each", ev.notes)
	}
	if len(ev.looks) < 2 {
		t.Errorf("%d looks passed on, want every look", len(ev.looks))
	}
}

// TestStopUndecidable runs a sequential comparison whose rule stops undecidable lanes
// (Job.StopUndecidable) on a machine whose noise no number of rounds resolves: without
// a page, no rule reads the lanes, so the look after round 2 names both, stops them, and
// the run ends there (stop: undecidable) instead of measuring 20 rounds. With a page
// whose lanes are guards, the rule reads them: they are named but go on being measured.
func TestStopUndecidable(t *testing.T) {
	for _, c := range []struct {
		name    string
		page    string
		stopped bool
	}{
		{"no page", "", true},
		{"a page's guards", "experiments/001-x.md", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			job, _ := gateJob(t, dir, fakeArms(t))
			job.StopUndecidable, job.Page = true, c.page
			ev := &planEvents{}
			opts := quietOptions(&fakeStarter{between: 0.6, within: 0.05, seed: 3})
			opts.Events = ev
			res, err := Run(context.Background(), job, opts)
			if err != nil {
				t.Fatal(err)
			}
			looks, err := receipt.ReadLooks(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := receipt.ReadPlan(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Protocol.Sequential.StopUndecidable {
				t.Errorf("plan.json does not record stop_undecidable")
			}
			named := map[string]int{}
			for _, l := range looks {
				for _, u := range l.Undecidable {
					named[u.Lane]++
					if u.Stopped != c.stopped || u.Reach != 20 || u.MDEPct <= u.FloorPct {
						t.Errorf("round %d: %+v, want stopped %v at reach 20 with an MDE above the floor", l.Round, u, c.stopped)
					}
				}
			}
			if named["alpha"] != 1 || named["beta"] != 1 {
				t.Errorf("lanes named %v, want alpha and beta once each", named)
			}
			last := looks[len(looks)-1]
			switch {
			case c.stopped && (last.Round >= 20 || last.Stop != receipt.StopUndecidable):
				t.Errorf("last look: round %d, stop %q; want one before round 20, stop undecidable", last.Round, last.Stop)
			case !c.stopped && last.Round != 20:
				t.Errorf("last look: round %d, stop %q; want round 20", last.Round, last.Stop)
			}
			// A stopped lane runs in no later round.
			for _, l := range looks {
				for _, u := range l.Undecidable {
					for _, later := range looks[l.Round:] {
						if c.stopped && slices.Contains(later.Pending, u.Lane) {
							t.Errorf("%s stopped after round %d, pending after round %d", u.Lane, l.Round, later.Round)
						}
					}
				}
			}
			want := "measured no more, and the rounds go to the lanes that can still be decided"
			if !c.stopped {
				want = "it goes on being measured while the budget lasts"
			}
			if len(ev.notes) == 0 {
				t.Errorf("no note, want one saying %q", want)
			}
			for _, n := range ev.notes {
				if !strings.Contains(n, want) {
					t.Errorf("note %q, want one saying %q", n, want)
				}
			}
		})
	}
}

// TestNextRound prices a round by the lanes that still run: a lane that stopped takes
// its share of the rounds so far with it.
func TestNextRound(t *testing.T) {
	t0 := time.Unix(0, 0)
	rec := func(lane string, pass int, from, to time.Duration) receipt.Record {
		return receipt.Record{Lane: lane, Pass: pass, Started: t0.Add(from), Ended: t0.Add(to)}
	}
	// Round 1 (passes 1, 2): A takes 3s, B 1s; round 2 the same.
	recs := []receipt.Record{rec("A", 1, 0, 3*time.Second), rec("B", 2, 3*time.Second, 4*time.Second),
		rec("A", 3, 4*time.Second, 7*time.Second), rec("B", 4, 7*time.Second, 8*time.Second)}
	if got := nextRound(recs, 2, []string{"A", "B"}, elapsed); got != 4*time.Second {
		t.Errorf("both lanes: %s, want 4s", got)
	}
	if got := nextRound(recs, 2, []string{"B"}, elapsed); got != time.Second {
		t.Errorf("B only: %s, want 1s", got)
	}
	if got := nextRound(recs, 2, nil, elapsed); got != 0 {
		t.Errorf("no lane: %s, want 0", got)
	}
}

// TestReachAtOwnNoise: when round 1 gives the lanes too few pairs of their own, the
// job's reach is judged at the look that first knows each lane's own noise, for the lanes
// still measured, not from the noise the lanes share after round 1.
func TestReachAtOwnNoise(t *testing.T) {
	plan := gotestPlan("100ms", "A", "B")
	plan.Protocol.Collections = 2
	plan.Protocol.Sequential = &receipt.Sequential{MinPairs: 2, MaxPairs: 20, Budget: time.Hour}
	var got []Forecast
	g := goal{reach: func(f Forecast) error { got = append(got, f); return nil }, threshold: func(string) float64 { return 5 }}
	w := newWatch(Options{}, plan, false, g)
	rep := func(df int) driftcheck.Report {
		return driftcheck.Report{Pooled: []driftcheck.LaneSummary{
			{Lane: "A", Arm: "cand", NoisePct: 4, DF: df}, {Lane: "B", Arm: "cand", NoisePct: 9, DF: df}}}
	}
	if err := w.look(receipt.Look{Round: 1, Elapsed: time.Minute, Pending: []string{"A", "B"}}, rep(1)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].NoiseKnown() || got[0].OwnAfter != 2 {
		t.Fatalf("after round 1: %d forecasts to reach, want 1 without the lanes' noise (own after round 2): %+v", len(got), got)
	}
	if err := w.look(receipt.Look{Round: 2, Elapsed: 2 * time.Minute, Pending: []string{"B"}}, rep(5)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[1].Lanes) != 1 || got[1].Lanes[0].Lane != "B" || got[1].Lanes[0].NoisePct != 9 {
		t.Fatalf("after round 2: forecasts %+v, want a second with lane B's own noise only", got)
	}
	// The gate's forecast holds a lane to its threshold, not the analysis's floor.
	if l := got[1].Lanes[0]; l.Bar != "threshold" || l.FloorPct != 5 || !strings.Contains(strings.Join(got[1].Lines(), "\n"), "), threshold 5%") {
		t.Errorf("lane B against %s %g%%:\n%s", l.Bar, l.FloorPct, strings.Join(got[1].Lines(), "\n"))
	}
	if err := w.look(receipt.Look{Round: 3, Elapsed: 3 * time.Minute, Pending: []string{"B"}}, rep(9)); err != nil || len(got) != 2 {
		t.Errorf("after round 3: %d forecasts (err %v), want no more", len(got), err)
	}
}
