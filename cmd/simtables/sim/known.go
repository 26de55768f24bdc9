package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
)

// KnownPrefix leads the name of a decision-rule table row judged with the lanes' noise
// known exactly (EvaluateKnownNoise).
const KnownPrefix = "noise known (a bound): "

// KnownResult is how many rounds a world's experiment takes with its noise known: every
// trial's rounds until each lane was decided, and the primary's.
type KnownResult struct {
	World                 string
	Trials                int
	Rounds, PrimaryRounds []int
}

// EvaluateKnownNoise runs world w (two arms, no order effect) through the rule's tests
// with every lane's noise known exactly instead of estimated: a bound on what any
// estimate of the noise, shared or calibrated, could buy at the rule's looks and spending.
// The pair means are drawn from the world's own processes (its run: every sample of a run,
// a pass delta of run medians, a pair of an order and its reverse); the noise is their
// standard deviation over 20000 pairs of no effect. At every look from MinPairs a lane
// stops when the rule would decide it: a primary expected slower when each collection's
// replication test (a z test at the tail the rule's design gives that look) is above 0 and
// the pooled estimate reaches the floor; a guard when the pooled interval (at the look's
// pooled tail) lies below +floor; a lane expected neutral, or a control, when it lies inside
// +-floor. A lane not decided by MaxPairs counts MaxPairs.
func EvaluateKnownNoise(name string, w RuleWorld, trials int, seed uint64) (KnownResult, error) {
	rg, err := newRuleRig(w)
	if err != nil {
		return KnownResult{}, err
	}
	rng := NewRand(seed)
	se1 := w.pairMeanSD(rng)
	out := KnownResult{World: name, Trials: trials}
	for range trials {
		rounds, primary := 0, 0
		for _, l := range w.Lanes {
			at := w.knownLane(rng, rg.cfg.Design, l, se1)
			rounds = max(rounds, at)
			if l.Role == spec.RolePrimary {
				primary = max(primary, at)
			}
		}
		out.Rounds = append(out.Rounds, rounds)
		out.PrimaryRounds = append(out.PrimaryRounds, primary)
	}
	return out, nil
}

// knownLane returns the round at which the rule's tests, with the pair-mean noise se1
// known, decide lane l (MaxPairs when they do not).
func (w RuleWorld) knownLane(rng *rand.Rand, d *driftcheck.Design, l RuleLane, se1 float64) int {
	floor := math.Log(1 + FloorPct/100)
	sums := make([]float64, w.Collections)
	for r := 1; r <= w.MaxPairs; r++ {
		pooled := 0.0
		for c := range sums {
			sums[c] += w.pairMean(rng, l)
			pooled += sums[c]
		}
		if r < w.MinPairs {
			continue
		}
		pooled /= float64(r * w.Collections)
		halfPool := zUpper(d.PoolTail(r)) * se1 / math.Sqrt(float64(r*w.Collections))
		var decided bool
		switch {
		case l.Role == spec.RolePrimary && l.Expect == spec.ExpectSlower:
			decided = pooled >= floor
			for _, s := range sums {
				decided = decided && s/float64(r) > zUpper(d.CollTail(r))*se1/math.Sqrt(float64(r))
			}
		case l.Role == spec.RoleGuard:
			decided = pooled+halfPool < floor
		default: // a control, or a lane expected neutral
			decided = math.Abs(pooled)+halfPool < floor
		}
		if decided {
			return r
		}
	}
	return w.MaxPairs
}

// pairMean draws one pass pair of lane l, base then candidate and the reverse, from the
// world's independent processes, and returns its pair mean on the log scale.
func (w RuleWorld) pairMean(rng *rand.Rand, l RuleLane) float64 {
	delta := func() float64 {
		base, _ := w.run(rng, l, Base, 0, 1)
		cand, _ := w.run(rng, l, Cand, 0, 1)
		return math.Log(driftcheck.Median(cand)) - math.Log(driftcheck.Median(base))
	}
	return (delta() + delta()) / 2
}

// pairMeanSD returns the standard deviation of one pair mean of no effect in the world,
// over 20000 pairs drawn from its processes (pairMean).
func (w RuleWorld) pairMeanSD(rng *rand.Rand) float64 {
	null := make([]float64, 20000)
	for i := range null {
		null[i] = w.pairMean(rng, RuleLane{})
	}
	return stats.StdDev(null)
}

// zUpper returns the standard normal quantile whose upper tail is p.
func zUpper(p float64) float64 { return stats.StdNormal.InvCDF(1 - p) }

// KnownMarkdown renders the known-noise rows in the decision rule's table: the rounds,
// "-" for the columns they do not measure.
func KnownMarkdown(rows []KnownResult) string {
	var b strings.Builder
	for _, r := range rows {
		res := RuleResult{Rounds: r.Rounds, PrimaryRounds: r.PrimaryRounds}
		fmt.Fprintf(&b, "| %s%s | %d | - | - | %.1f | %.1f | %.1f | - | - | - |\n", KnownPrefix, r.World, r.Trials, res.MedianRounds(), res.MeanRounds(), res.MeanPrimaryRounds())
	}
	return b.String()
}
