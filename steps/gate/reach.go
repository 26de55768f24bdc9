package gate

import (
	"fmt"
	"math"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
)

// Reach is whether a lane's threshold is within reach of the rounds a gate run can
// measure, at the lane's noise: whether those rounds tell, with the configured power, an
// unchanged lane (passed) from one slower by twice the threshold (failed), as
// driftcheck.PowerAt sizes it with the threshold as the floor. A lane out of reach still
// ends pass or fail at the rule's last look, but a regression beyond the threshold slips
// through more often than the stated rate.
type Reach struct {
	Lane string
	// NoisePct is the noise of one pass delta and NoiseFrom where it comes from ("the host
	// calibration", "round 1").
	NoisePct  float64
	NoiseFrom string
	// ThresholdPct is the lane's threshold; Rounds the rounds the run can measure
	// (max-pairs, or fewer when the budget ends first) and MDEPct the MDE at them.
	ThresholdPct float64
	Rounds       int
	MDEPct       float64
	// RoundsNeeded is the rounds that would reach the threshold (0 when Rounds do;
	// maxMorePairs when no number of rounds does), and ReachablePct the smallest threshold
	// that Rounds reach.
	RoundsNeeded int
	ReachablePct float64
}

// LaneReach returns a lane's Reach at noisePct after rounds rounds of collections
// collections under cfg.
func LaneReach(lane string, noisePct float64, from string, thresholdPct float64, rounds, collections int, cfg driftcheck.Config) Reach {
	r := Reach{Lane: lane, NoisePct: noisePct, NoiseFrom: from, ThresholdPct: thresholdPct, Rounds: rounds}
	pw := driftcheck.PowerAt(noisePct, thresholdPct, rounds, collections, cfg)
	r.MDEPct, r.RoundsNeeded = pw.MDEPct, pw.PairsNeeded
	if r.RoundsNeeded > 0 {
		r.RoundsNeeded = min(r.RoundsNeeded, maxMorePairs)
		// The smallest threshold these rounds reach, to a tenth of a percent or so.
		reaches := func(t float64) bool {
			return driftcheck.PowerAt(noisePct, t, rounds, collections, cfg).PairsNeeded == 0
		}
		lo, hi := thresholdPct, 2*thresholdPct
		for !reaches(hi) && hi < 1e6 {
			lo, hi = hi, 2*hi
		}
		for hi-lo > 0.05*lo && hi-lo > 0.01 {
			if mid := (lo + hi) / 2; reaches(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		r.ReachablePct = math.Ceil(hi*100) / 100
	}
	return r
}

// Out reports whether the threshold is out of reach.
func (r Reach) Out() bool { return r.RoundsNeeded > 0 }

// Advice says, for a lane out of reach, what would reach its threshold, with perRound the
// time of one round (0: unknown), in one line: "Sum: 6 rounds at noise 2.1% (from round 1)
// cannot tell a no-op from a 0.6% regression (twice the 0.3% threshold) with the rule's
// power, MDE 4.2%: raise the threshold to 2.5% (--threshold), or allow about 1190 rounds
// (--max-pairs 1190, --budget 2h11m0s)".
func (r Reach) Advice(perRound time.Duration) string {
	msg := fmt.Sprintf("%s: %s at noise %s%% (from %s) cannot tell a no-op from a %s%% regression (twice the %s%% threshold) with the rule's power, MDE %s%%: raise the threshold to %s%% (--threshold)",
		r.Lane, human.Count(r.Rounds, "round", "rounds"), human.Num(r.NoisePct), r.NoiseFrom, human.Num(2*r.ThresholdPct), human.Num(r.ThresholdPct),
		human.Num(r.MDEPct), human.Num(r.ReachablePct))
	switch {
	case r.RoundsNeeded >= maxMorePairs:
		msg += "; no number of rounds reaches the threshold at this noise"
	case perRound > 0:
		msg += fmt.Sprintf(", or allow about %d rounds (--max-pairs %d, --budget %s)", r.RoundsNeeded, r.RoundsNeeded, human.RoundUp(perRound*time.Duration(r.RoundsNeeded)))
	default:
		msg += fmt.Sprintf(", or allow about %d rounds (--max-pairs %d)", r.RoundsNeeded, r.RoundsNeeded)
	}
	return msg
}
