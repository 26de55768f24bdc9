package compare

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

func lane(v driftcheck.LaneVerdict, est, lo, hi float64) driftcheck.LaneSummary {
	return driftcheck.LaneSummary{Verdict: v, EstimatePct: est, CILowPct: lo, CIHighPct: hi, Bounded: true, UsablePairs: 4, FloorPct: 3, Confidence: 0.95}
}

func TestSummaryAndVerdicts(t *testing.T) {
	rows := []Row{
		{Lane: "A", Effect: lane(driftcheck.LaneReproducedSlower, 12, 8, 16)},
		{Lane: "B", Effect: lane(driftcheck.LaneReproducedSlower, 30, 20, 40)},
		{Lane: "C", Effect: lane(driftcheck.LaneReproducedFaster, -52.2, -55, -49)},
		{Lane: "D", Effect: lane(driftcheck.LaneNeutral, 0.2, -1, 1.4)},
		{Lane: "E", Effect: lane(driftcheck.LaneUndecided, 1, -2.5, 4.8)},
		{Lane: "F", Effect: lane(driftcheck.LaneUndecided, -1, -4, 2.1)},
		{Lane: "G", Effect: lane(driftcheck.LaneUndecided, 4.5, -100, 99999900)},
	}
	if got, want := Summary(rows), "1 faster, 2 slower, 1 unchanged within 3%, 3 undecided: no regression beyond +4.8% (1 needs more pairs)"; got != want {
		t.Errorf("Summary = %q\nwant      %q", got, want)
	}
	for _, tt := range []struct {
		row           Row
		verdict, cell string
	}{
		{rows[2], "reproduced-faster", "-52.2% [-55.0%, -49.0%] (2.09x faster)"},
		{rows[4], "undecided: no regression beyond +4.8%", "+1.0% [-2.5%, +4.8%]"},
		{rows[6], "undecided: needs more pairs", "+4.5% (needs more pairs)"},
		{Row{Effect: lane(driftcheck.LaneUndecided, -8, -12, -4)}, "undecided: no regression", "-8.0% [-12.0%, -4.0%]"},
	} {
		if got := Verdict(tt.row); got != tt.verdict {
			t.Errorf("Verdict(%s) = %q, want %q", tt.row.Lane, got, tt.verdict)
		}
		if got := Change(tt.row.Effect); got != tt.cell {
			t.Errorf("Change(%s) = %q, want %q", tt.row.Lane, got, tt.cell)
		}
	}
	if got, want := Summary(rows[4:5]), "1 undecided: no regression beyond +4.8%"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got, want := Summary(rows[6:]), "1 undecided: they need more pairs"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}

func TestNoteSaysWhyMediansDisagree(t *testing.T) {
	r := Row{Lane: "TopK", Base: driftcheck.Summary{N: 4, Median: 710.3}, Cand: driftcheck.Summary{N: 4, Median: 691.3},
		Effect: lane(driftcheck.LaneNeutral, 1.7, -0.5, 2.5)}
	want := "the medians differ the other way (-2.7%): the change is from pair means, each pass's candidate against the base measured beside it, which drift between passes and the arms' code layouts do not move"
	if got := Note(r); got != want {
		t.Errorf("Note = %q\nwant   %q", got, want)
	}
	r.Cand.Median = 720
	if got := Note(r); got != "" {
		t.Errorf("Note with agreeing medians = %q, want none", got)
	}
	// The other sign inside the interval is no contradiction: google/uuid's MarshalJSON,
	// -0.1% [-2.5%, +2.5%] beside medians +0.9%.
	m := Row{Lane: "UUID_MarshalJSON", Base: driftcheck.Summary{N: 38, Median: 197.4}, Cand: driftcheck.Summary{N: 38, Median: 199.1},
		Effect: lane(driftcheck.LaneNeutral, -0.1, -2.5, 2.5)}
	if got := Note(m); got != "" {
		t.Errorf("Note with medians of the other sign inside the interval = %q, want none", got)
	}
	// The same sign, far outside the interval: a toy's Sorted lane, medians 11.1µs and
	// 9.73µs (-12.3%) beside a change of -1.3% [-7.4%, +5.3%].
	s := Row{Lane: "Sorted", Base: driftcheck.Summary{N: 40, Median: 11100}, Cand: driftcheck.Summary{N: 40, Median: 9730},
		Effect: lane(driftcheck.LaneUndecided, -1.3, -7.4, 5.3)}
	if got := Note(s); !strings.Contains(got, "the medians differ by more than the interval allows (-12.3%)") {
		t.Errorf("Note = %q", got)
	}
}

func TestNoteSaysLaneStopped(t *testing.T) {
	r := Row{Lane: "Seek", Effect: lane(driftcheck.LaneUndecided, 1, -9, 11), StoppedAfter: 3,
		Stopped: &receipt.UndecidableLane{Lane: "Seek", Reach: 6, MaxPairs: 20, MDEPct: 12.14, FloorPct: 3, Stopped: true}}
	want := "measured no more after round 3: it cannot be decided within the budget (6 rounds) at this noise (MDE 12.1% there, floor 3%)"
	if got := Note(r); got != want {
		t.Errorf("Note = %q\nwant   %q", got, want)
	}
	r.Stopped.Reach, r.Stopped.MDEPct = 20, 250
	if got := Note(r); got != "measured no more after round 3: it cannot be decided within max-pairs (20 rounds) at this noise (MDE above 100% there, floor 3%)" {
		t.Errorf("Note at max-pairs = %q", got)
	}
	r.Effect.Verdict = driftcheck.LaneNeutral // decided before it stopped: nothing to say
	if got := Note(r); got != "" {
		t.Errorf("Note of a decided lane = %q, want none", got)
	}
}

// TestNoteSaysLaneSettled: a lane a look decided and took off the rounds, which the last
// look no longer decides, says so instead of asking for pairs the run chose not to measure.
func TestNoteSaysLaneSettled(t *testing.T) {
	looks := []receipt.Look{
		{Round: 2, Pending: []string{"A", "B"}, Lanes: []receipt.LookLane{{Lane: "A", Verdict: driftcheck.LaneUndecided}, {Lane: "B", Verdict: driftcheck.LaneUndecided}}},
		{Round: 3, Pending: []string{"B"}, Lanes: []receipt.LookLane{{Lane: "A", Verdict: driftcheck.LaneNeutral, EstimatePct: -0.3, CILowPct: -2.5, CIHighPct: 2.0},
			{Lane: "B", Verdict: driftcheck.LaneUndecided}}},
		{Round: 4, Pending: []string{}, Stop: receipt.StopMaxPairs},
	}
	u, round := settled(looks, "A")
	if u == nil || round != 3 || u.Verdict != driftcheck.LaneNeutral {
		t.Fatalf("settled(A) = %+v, %d; want neutral at round 3", u, round)
	}
	if u, _ := settled(looks, "B"); u != nil {
		t.Errorf("settled(B) = %+v; want nil (measured to the end)", u)
	}
	e := lane(driftcheck.LaneUndecided, -0.3, -3.7, 3.1)
	e.Reason = "effect -0.3% [-3.7%, +3.1%]: about 1 more pairs per collection would decide it"
	r := Row{Lane: "A", Effect: e, Settled: u, SettledAfter: round}
	want := "neutral at round 3 (-0.3% [-2.5%, +2.0%]) and measured no more; at the last look, judged with the other lanes' noise as it stood then, its interval no longer decides it"
	if got := Note(r); got != want {
		t.Errorf("Note = %q\nwant   %q", got, want)
	}
	r.Settled = nil
	if got := Note(r); !strings.Contains(got, "more pairs") {
		t.Errorf("Note without Settled = %q; want the reason", got)
	}
}

// TestLegendOnCPU: the legend says which lanes' values and changes are on-CPU time.
func TestLegendOnCPU(t *testing.T) {
	if got := legend("90%", nil, 3); strings.Contains(got, "on-CPU") {
		t.Errorf("no on-CPU lane: %q", got)
	}
	if got := legend("90%", []string{"A", "B"}, 2); !strings.Contains(got, "No lane blocked (on a lock, I/O or a timer), so values and changes are on-CPU time per operation") {
		t.Errorf("every lane on-CPU: %q", got)
	}
	if got := legend("90%", []string{"A"}, 4); !strings.Contains(got, " A never blocked") {
		t.Errorf("one lane on-CPU: %q", got)
	}
}

// TestBriefReason: an undecided row's note leaves the pair verdict counts to the receipt.
func TestBriefReason(t *testing.T) {
	for in, want := range map[string]string{
		"no regression beyond +3.1%, no improvement beyond -2.0%; MDE 3.6% at the 3% floor; pairs: 1 drift-suspected, 16 one-sided, 19 neutral of 36; the builds' code layouts explain 62% of the pair means' spread" + driftcheck.LayoutShareWhy: "no regression beyond +3.1%, no improvement beyond -2.0%; MDE 3.6% at the 3% floor; the builds' code layouts explain 62% of the pair means' spread, carried by the interval",
		"nothing ruled out yet; MDE >1000% at the 3% floor; pairs: 2 neutral of 2": "nothing ruled out yet; MDE >1000% at the 3% floor",
		"needs more pairs": "needs more pairs",
	} {
		if got := briefReason(in); got != want {
			t.Errorf("briefReason(%q) = %q, want %q", in, got, want)
		}
	}
}
