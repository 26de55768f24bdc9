package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/gate"
)

// FamilyResult is a Monte Carlo of the gate's family bound at the level of its design:
// Lanes no-op lanes, each one standardised random walk observed at the looks of the
// gate's default rule (a look after every round from min-pairs to max-pairs), with its
// noise known and its collections perfectly correlated (every collection the same walk,
// so "every collection reproduced it" is one test): the world in which the bound is
// tightest. A lane fails when its walk crosses the replication test's boundary at any
// look, the lanes being measured to the last look whatever they show (a gate stops a lane
// that passed, which can only lower the rate).
type FamilyResult struct {
	Lanes, Trials      int
	MinPairs, MaxPairs int
	Spending           driftcheck.Spending
	Alpha              float64
	// Failed counts the trials in which any lane crossed the family design's boundary
	// (gate.FamilyDesign: alpha/2N spent over the looks); Divided those in which any
	// crossed the boundary of each look's nominal tail divided by N (the bound before).
	Failed, Divided int
}

// Exact returns the family's false-failure rate the family design holds, its lanes being
// independent and each crossing at alpha/2N: 1 - (1 - alpha/2N)^N, at most alpha/2.
func (r FamilyResult) Exact() float64 {
	return -math.Expm1(float64(r.Lanes) * math.Log1p(-r.Alpha/(2*float64(r.Lanes))))
}

// EvaluateFamilyBound runs trials of lanes no-op lanes against the gate's default rule
// (its spec's resolved min-pairs, max-pairs and spending function).
func EvaluateFamilyBound(lanes, trials int, seed uint64) (FamilyResult, error) {
	gs, err := spec.ParseGate("sim-gate.yaml", []byte("harness: {kind: exec, build: [go, build, -o, \"{out}\", ./lane], command: [\"{bin}\", \"{lane}\"]}\nlanes:\n  - name: a\n"))
	if err != nil {
		return FamilyResult{}, err
	}
	res, err := gs.Experiment("base", "cand").Resolve(spec.Overrides{})
	if err != nil {
		return FamilyResult{}, err
	}
	cfg, colls := res.Drift.WithDefaults(), res.Protocol.Collections
	one, err := driftcheck.NewDesign(cfg, colls)
	if err != nil {
		return FamilyResult{}, err
	}
	fam, err := gate.FamilyDesign(cfg, colls, lanes)
	if err != nil {
		return FamilyResult{}, err
	}
	out := FamilyResult{Lanes: lanes, Trials: trials, MinPairs: cfg.MinPairs, MaxPairs: cfg.MaxPairs, Spending: cfg.Spending, Alpha: cfg.Alpha}
	// The boundaries in standard deviations of the walk's mean, at each look.
	newZ, oldZ := map[int]float64{}, map[int]float64{}
	for r := cfg.MinPairs; r <= cfg.MaxPairs; r++ {
		newZ[r] = driftcheck.TCritical(fam.CollTail(r), 0)
		oldZ[r] = driftcheck.TCritical(one.CollTail(r)/float64(lanes), 0)
	}
	for t := range trials {
		rng := NewRand(seed + uint64(t))
		failed, divided := false, false
		for range lanes {
			sum := 0.0
			for r := 1; r <= cfg.MaxPairs; r++ {
				sum += rng.NormFloat64()
				if r < cfg.MinPairs {
					continue
				}
				z := sum / math.Sqrt(float64(r))
				failed = failed || z > newZ[r]
				divided = divided || z > oldZ[r]
			}
		}
		if failed {
			out.Failed++
		}
		if divided {
			out.Divided++
		}
	}
	return out, nil
}

// FamilyMarkdown renders the family table: per lane count, the share of no-op trials in
// which a lane failed under the family design and under the divided tails, each with the
// upper end of its 95% Wilson interval, beside the stated bound alpha/2.
func FamilyMarkdown(results []FamilyResult) string {
	var b strings.Builder
	b.WriteString("| lanes | looks | trials | failed, alpha/2N spent over the looks [95% interval] | its exact rate, 1 - (1 - alpha/2N)^N | failed, each look's tail / N (before) [95% interval] | stated bound |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fail, div := Rate{r.Failed, r.Trials}, Rate{r.Divided, r.Trials}
		fmt.Fprintf(&b, "| %d | %d to %d, %s | %d | %.2f%% [%.2f%%, %.2f%%] | %.3f%% | %.2f%% [%.2f%%, %.2f%%] | %.3g%% |\n", r.Lanes, r.MinPairs, r.MaxPairs, r.Spending, r.Trials,
			100*fail.Of(), 100*fail.WilsonLower(), 100*fail.WilsonUpper(), 100*r.Exact(), 100*div.Of(), 100*div.WilsonLower(), 100*div.WilsonUpper(), 100*r.Alpha/2)
	}
	return b.String()
}
