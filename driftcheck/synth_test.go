package driftcheck_test

import (
	"math/rand/v2"

	"github.com/flipbench/flipbench/driftcheck"
)

// world describes a synthetic experiment: every sample is
//
//	100 x (1 + effect[arm]) x drift(t) x (1 + noise x N(0,1)) x (1 + order if second in its lane)
//
// where t in [0,1) is the sample's position in the whole experiment's wall time. For a
// higher-is-better lane the sample is reported as the throughput 1e4 / value, so the
// same world measures the same truth in both kinds of unit.
type world struct {
	lanes       []driftcheck.Lane
	cands       []string
	collections int
	passes      int // per collection
	samples     int // per run
	noise       float64
	// effect is the true relative change of a candidate's time (-0.05: 5% faster).
	effect map[string]float64
	// drift multiplies every sample by drift(t); nil means none.
	drift func(t float64) float64
	// order penalises the second (and later) arm run of a lane within a pass: a
	// pure order effect such as a hot cache or a heated core.
	order float64
}

// aa returns an A/A world with n lanes: one candidate "cand" identical to "base", 2
// collections of 12 passes of 20 samples with 3% noise.
func aa(n int) world {
	w := world{cands: []string{"cand"}, collections: 2, passes: 12, samples: 20, noise: 0.03}
	for i := range n {
		w.lanes = append(w.lanes, driftcheck.Lane{Name: string(rune('A' + i)), Role: driftcheck.RolePrimary})
	}
	return w
}

// linearDrift returns a drift that slows the host by frac over the experiment.
func linearDrift(frac float64) func(float64) float64 {
	return func(t float64) float64 { return 1 + frac*t }
}

// step returns a drift that slows the host by frac from time at on.
func step(at, frac float64) func(float64) float64 {
	return func(t float64) float64 {
		if t >= at {
			return 1 + frac
		}
		return 1
	}
}

// arms returns the base followed by the candidates.
func (w world) arms() []string { return append([]string{"base"}, w.cands...) }

// slot is one run in the schedule.
type slot struct {
	c, p, lane int
	arm        string
	second     bool
}

// schedule returns the runs in wall-time order: flipbench's order-flipped passes, or
// with sequential set the naive order (every base run, then every run of each candidate).
func (w world) schedule(sequential bool) []slot {
	var out []slot
	arms := w.arms()
	if sequential {
		for _, a := range arms {
			for c := 1; c <= w.collections; c++ {
				for p := 1; p <= w.passes; p++ {
					for l := range w.lanes {
						out = append(out, slot{c: c, p: p, lane: l, arm: a})
					}
				}
			}
		}
		return out
	}
	for c := 1; c <= w.collections; c++ {
		for p := 1; p <= w.passes; p++ {
			for l := range w.lanes {
				for i := range arms {
					a := arms[i]
					if p%2 == 0 {
						a = arms[len(arms)-1-i]
					}
					out = append(out, slot{c: c, p: p, lane: l, arm: a, second: i > 0})
				}
			}
		}
	}
	return out
}

// input generates the experiment's observations with the given schedule.
func (w world) input(rng *rand.Rand, sequential bool) driftcheck.Input {
	in := driftcheck.Input{Base: "base", Candidates: w.cands, Lanes: w.lanes,
		Collections: w.collections, Passes: w.passes}
	runs := w.schedule(sequential)
	for k, s := range runs {
		xs := make([]float64, w.samples)
		for j := range xs {
			v := 100 * (1 + w.effect[s.arm]) * (1 + w.noise*rng.NormFloat64())
			if w.drift != nil {
				t := (float64(k) + (float64(j)+0.5)/float64(w.samples)) / float64(len(runs))
				v *= w.drift(t)
			}
			if s.second {
				v *= 1 + w.order
			}
			if w.lanes[s.lane].HigherIsBetter {
				v = 1e4 / v
			}
			xs[j] = v
		}
		in.Observations = append(in.Observations, driftcheck.Observation{
			Collection: s.c, Pass: s.p, Lane: w.lanes[s.lane].Name, Arm: s.arm, Samples: xs})
	}
	return in
}

// newRand returns a deterministic source for seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
