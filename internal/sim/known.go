package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/flipbench/flipbench/driftcheck"
)

// KnownPrefix leads the name of a decision-rule table row whose primary was judged with
// its noise known exactly (EvaluateKnownNoise).
const KnownPrefix = "noise known (a bound): "

// KnownResult is the mean rounds to decide the primary of a world with its noise known.
type KnownResult struct {
	World       string
	Trials      int
	MeanPrimary float64
}

// EvaluateKnownNoise returns, for world w (two arms, its first lane the primary with an
// Effect), the mean rounds after which the rule's tests would reproduce the primary if its
// noise were known exactly instead of estimated: a bound on what any estimate of the
// noise, shared or calibrated, could buy at the rule's looks and spending. The pair means
// are drawn from the world's own processes (its run: every sample of a run, a pass delta
// of run medians, a pair of an order and its reverse); the noise is their standard
// deviation over 20000 pairs of no effect. At every look from MinPairs, each collection's
// replication test is a z test at the tail the rule's design gives that look, and the
// pooled estimate must reach the floor, as in the rule; a primary not decided by MaxPairs
// counts MaxPairs.
func EvaluateKnownNoise(name string, w RuleWorld, trials int, seed uint64) (KnownResult, error) {
	rg, err := newRuleRig(w)
	if err != nil {
		return KnownResult{}, err
	}
	primary := w.Lanes[0]
	rng := NewRand(seed)
	still := primary
	still.Effect = 0
	null := make([]float64, 20000)
	for i := range null {
		null[i] = w.pairMean(rng, still)
	}
	se1 := stat.StdDev(null, nil) // of one pair mean
	floor := math.Log(1 + FloorPct/100)
	out := KnownResult{World: name, Trials: trials}
	total := 0
	for range trials {
		sums := make([]float64, w.Collections)
		at := w.MaxPairs
		for r := 1; r <= w.MaxPairs; r++ {
			for c := range sums {
				sums[c] += w.pairMean(rng, primary)
			}
			if r < w.MinPairs {
				continue
			}
			z := zUpper(rg.cfg.Design.CollTail(r))
			pooled := 0.0
			every := true
			for _, s := range sums {
				pooled += s
				every = every && s/float64(r) > z*se1/math.Sqrt(float64(r))
			}
			if every && pooled/float64(r*w.Collections) >= floor {
				at = r
				break
			}
		}
		total += at
	}
	out.MeanPrimary = float64(total) / float64(trials)
	return out, nil
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

// zUpper returns the standard normal quantile whose upper tail is p.
func zUpper(p float64) float64 { return math.Sqrt2 * math.Erfcinv(2*p) }

// KnownMarkdown renders the known-noise rows in the decision rule's table: the primary's
// mean rounds, "-" for the columns it does not measure.
func KnownMarkdown(rows []KnownResult) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s%s | %d | - | - | - | - | %.1f | - | - | - |\n", KnownPrefix, r.World, r.Trials, r.MeanPrimary)
	}
	return b.String()
}
