// Package sim generates synthetic order-flipped experiments with known truth, so that the
// verdict statistics of package driftcheck (and the decision rule and gate above them) can
// be checked for their error rates by seeded simulation. Every table of
// docs/methodology.md is generated from this package (make sim).
//
// A World describes the truth: the candidate's effect, the noise within a process (per
// sample), the noise between processes (per run), the host's drift over time and an order
// effect. World.Input draws one experiment from it with the schedule flipbench runs: for
// each collection and pass, every lane of every arm in one process, base first in odd
// passes and last in even ones.
package sim

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/flipbench/flipbench/driftcheck"
)

// DriftKind is the shape of the host's drift over the experiment's wall time.
type DriftKind string

// Drift shapes.
const (
	NoDrift  DriftKind = "none"
	Linear   DriftKind = "linear"   // slows steadily by Drift over the run
	Step     DriftKind = "step"     // slows by Drift from a time drawn uniformly in [0.2, 0.8) of the run on
	Periodic DriftKind = "periodic" // oscillates by +-Drift with a period of three passes and a random phase
)

// World is the truth of a synthetic experiment with one candidate arm "cand" against
// "base". A sample of run r at time t in [0, 1) (its position in the experiment's wall
// time) is
//
//	100 x (1 + Effect if cand) x drift(t) x (1 + Order if second in its pass) x exp(Between x Z_r) x (1 + Within x Z)
//
// with Z_r one standard normal draw per run (the process's own level) and Z one per
// sample. A higher-is-better lane reports 1e4 / sample.
type World struct {
	// Lanes is the number of lanes (each with the same truth); names are L1, L2, ...
	Lanes       int
	Collections int
	// Pairs is the number of pass-pairs per collection.
	Pairs int
	// Samples per run.
	Samples int
	// Within is the relative standard deviation of one sample within a run; Between that
	// of a run's level.
	Within, Between float64
	// Effect is the candidate's true relative change of the lane's time (+0.05: 5% slower).
	Effect float64
	// DriftKind and Drift give the host's drift and its size (a fraction).
	DriftKind DriftKind
	Drift     float64
	// Order slows the second arm run of a lane within a pass by this fraction.
	Order float64
	// HigherIsBetter reports every sample as a throughput (1e4 / value).
	HigherIsBetter bool
}

// Base and Cand are the arm names of every World.
const (
	Base = "base"
	Cand = "cand"
)

// LaneName returns the name of lane i (0-based).
func LaneName(i int) string { return "L" + strconv.Itoa(i+1) }

// host is one experiment's drift: the world's shape with this experiment's step time
// and phase, which a real neighbour does not align with the run.
type host struct {
	w      World
	at     float64 // step time
	phase  float64 // periodic phase, radians
	cycles float64 // periods over the whole run
}

func (w World) host(rng *rand.Rand) host {
	passes := float64(w.Collections * 2 * w.Pairs)
	return host{w: w, at: 0.2 + 0.6*rng.Float64(), phase: 2 * math.Pi * rng.Float64(), cycles: passes / 3}
}

// drift returns the host's slowdown factor at time t.
func (h host) drift(t float64) float64 {
	switch h.w.DriftKind {
	case Linear:
		return 1 + h.w.Drift*t
	case Step:
		if t >= h.at {
			return 1 + h.w.Drift
		}
	case Periodic:
		return 1 + h.w.Drift*math.Sin(2*math.Pi*h.cycles*t+h.phase)
	}
	return 1
}

// Lanes returns the driftcheck lanes of the world.
func (w World) lanes() []driftcheck.Lane {
	out := make([]driftcheck.Lane, max(w.Lanes, 1))
	for i := range out {
		out[i] = driftcheck.Lane{Name: LaneName(i), HigherIsBetter: w.HigherIsBetter}
	}
	return out
}

// Input draws one experiment from the world with flipbench's schedule: the lane order is
// shuffled anew for every pass, as harness.Schedule does.
func (w World) Input(rng *rand.Rand) driftcheck.Input {
	lanes := w.lanes()
	in := driftcheck.Input{Base: Base, Candidates: []string{Cand}, Lanes: lanes,
		Collections: w.Collections, Passes: 2 * w.Pairs}
	h := w.host(rng)
	total := w.Collections * 2 * w.Pairs * len(lanes) * 2
	k := 0
	for c := 1; c <= w.Collections; c++ {
		for p := 1; p <= 2*w.Pairs; p++ {
			arms := []string{Base, Cand}
			if p%2 == 0 {
				arms = []string{Cand, Base}
			}
			order := rng.Perm(len(lanes))
			for _, li := range order {
				for i, arm := range arms {
					in.Observations = append(in.Observations, driftcheck.Observation{
						Collection: c, Pass: p, Lane: lanes[li].Name, Arm: arm,
						Samples: w.run(rng, h, arm, i > 0, k, total)})
					k++
				}
			}
		}
	}
	return in
}

// Naive draws the same number of runs as Input, in the order a user timing with
// benchstat and a shell loop would: every base run, then every candidate run. It returns
// the pooled samples of each arm per lane.
func (w World) Naive(rng *rand.Rand) (base, cand map[string][]float64) {
	base, cand = map[string][]float64{}, map[string][]float64{}
	lanes := w.lanes()
	perArm := w.Collections * 2 * w.Pairs
	total := perArm * len(lanes) * 2
	h := w.host(rng)
	k := 0
	for _, arm := range []string{Base, Cand} {
		for range perArm {
			for _, l := range lanes {
				xs := w.run(rng, h, arm, false, k, total)
				k++
				if arm == Base {
					base[l.Name] = append(base[l.Name], xs...)
				} else {
					cand[l.Name] = append(cand[l.Name], xs...)
				}
			}
		}
	}
	return base, cand
}

// run draws the samples of the k-th of total runs.
func (w World) run(rng *rand.Rand, h host, arm string, second bool, k, total int) []float64 {
	level := math.Exp(w.Between * rng.NormFloat64())
	xs := make([]float64, w.Samples)
	for j := range xs {
		v := 100 * level * (1 + w.Within*rng.NormFloat64())
		if arm == Cand {
			v *= 1 + w.Effect
		}
		t := (float64(k) + (float64(j)+0.5)/float64(w.Samples)) / float64(total)
		v *= h.drift(t)
		if second {
			v *= 1 + w.Order
		}
		v = math.Max(v, 1e-3) // a time is positive
		if w.HigherIsBetter {
			v = 1e4 / v
		}
		xs[j] = v
	}
	return xs
}

// NewRand returns the deterministic source of a seed.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
