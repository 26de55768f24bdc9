package sim

import (
	"math"

	"golang.org/x/perf/benchmath"

	"github.com/flipbench/flipbench/driftcheck"
)

// Call is what a method concluded about one lane in one collection.
type Call string

// Calls.
const (
	CallFaster    Call = "faster"
	CallSlower    Call = "slower"
	CallNeutral   Call = "neutral"   // no effect beyond the floor, claimed
	CallUndecided Call = "undecided" // anything else
)

// Flipbench returns flipbench's call for one lane of a report: its pooled verdict, the
// decision the rule reads (reproduced needs every collection's replication test and the
// pooled estimate past the floor; neutral the pooled interval inside the floor).
func Flipbench(r driftcheck.Report, lane string) []Call {
	for _, s := range r.Pooled {
		if s.Lane != lane {
			continue
		}
		switch s.Verdict {
		case driftcheck.LaneReproducedFaster:
			return []Call{CallFaster}
		case driftcheck.LaneReproducedSlower:
			return []Call{CallSlower}
		case driftcheck.LaneNeutral:
			return []Call{CallNeutral}
		}
		return []Call{CallUndecided}
	}
	return nil
}

// Legacy returns the calls of flipbench's first-wave rule on the same passes: a pair is
// REPRODUCED when both pass deltas pass a fixed floor with one sign (drift-suspected when a
// pass's noisy side is four times noisier than its quiet side and above 8% CV, or the signs
// differ), and a lane reproduces when most pairs reproduce one way, none the other, and
// the median pass delta passes the floor; it is neutral when the median is within it.
func Legacy(r driftcheck.Report, lane string, floorPct float64) []Call {
	type coll struct{ deltas, d1, d2 []float64 }
	var out []Call
	for _, s := range r.Lanes {
		if s.Lane != lane {
			continue
		}
		var pairs [][2]driftcheck.PassDelta
		byPass := map[int]driftcheck.PassDelta{}
		for _, pd := range r.Passes {
			if pd.Lane == lane && pd.Collection == s.Collection {
				byPass[pd.Pass] = pd
			}
		}
		for k := 1; 2*k <= len(byPass); k++ {
			pairs = append(pairs, [2]driftcheck.PassDelta{byPass[2*k-1], byPass[2*k]})
		}
		fast, slow, drift := 0, 0, 0
		var deltas []float64
		for _, p := range pairs {
			deltas = append(deltas, p[0].DeltaPct, p[1].DeltaPct)
			if legacyContaminated(p[0]) || legacyContaminated(p[1]) {
				drift++
				continue
			}
			m1, m2 := math.Abs(p[0].DeltaPct) >= floorPct, math.Abs(p[1].DeltaPct) >= floorPct
			switch {
			case m1 && m2 && (p[0].DeltaPct < 0) != (p[1].DeltaPct < 0):
				drift++
			case m1 && m2 && p[0].DeltaPct < 0:
				fast++
			case m1 && m2:
				slow++
			}
		}
		n := len(pairs)
		med := driftcheck.Median(deltas)
		switch {
		case 2*fast > n && slow == 0 && med <= -floorPct:
			out = append(out, CallFaster)
		case 2*slow > n && fast == 0 && med >= floorPct:
			out = append(out, CallSlower)
		case 2*drift >= n:
			out = append(out, CallUndecided)
		case math.Abs(med) < floorPct:
			out = append(out, CallNeutral)
		default:
			out = append(out, CallUndecided)
		}
	}
	return out
}

// legacyContaminated is the first-wave contamination test: flagged CV above 8% and at
// least 4 times the clean side's.
func legacyContaminated(pd driftcheck.PassDelta) bool {
	flagged, clean := pd.CandCVPct, pd.BaseCVPct
	if pd.DeltaPct < 0 {
		flagged, clean = clean, flagged
	}
	return flagged > 8 && (clean == 0 || flagged/clean >= 4)
}

// Naive returns benchstat's call on samples collected base first, then candidate (the
// same number of processes as flipbench's run): a difference when Mann-Whitney U gives
// p < 0.05, in the direction of the medians; "~" (which users read as neutral)
// otherwise. higher flips the direction for higher-is-better samples.
func Naive(base, cand []float64, higher bool) Call {
	th := benchmath.DefaultThresholds
	bs, cs := benchmath.NewSample(base, &th), benchmath.NewSample(cand, &th)
	if benchmath.AssumeNothing.Compare(bs, cs).P >= 0.05 {
		return CallNeutral
	}
	faster := benchmath.AssumeNothing.Summary(cs, 0.95).Center < benchmath.AssumeNothing.Summary(bs, 0.95).Center
	if faster != higher {
		return CallFaster
	}
	return CallSlower
}
