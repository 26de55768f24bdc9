package sim_test

import (
	"math"
	"testing"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
)

// bound returns the largest rate that is consistent, at three Monte Carlo standard
// errors, with a true rate of p over n trials.
func bound(p float64, n int) float64 { return p + 3*math.Sqrt(p*(1-p)/float64(n)) }

// TestErrorRates runs the quick grid of the error-rate simulation (every noise level,
// drift shape and two pair counts) and checks flipbench's promises in every cell, per lane
// and collection: false reproduced at most 2.5% per direction, false neutral (an
// equivalence claim at a true effect of the floor) at most 5%, and power at least 90% at
// twice the MDE. make sim writes the full grid's table into docs/methodology.md.
func TestErrorRates(t *testing.T) {
	trials := 200
	if testing.Short() {
		trials = 60
	}
	for _, r := range sim.EvaluateGrid(sim.Grid(true), trials) {
		c := r.Cell
		if f := r.FalseFaster.Flip; f.Of() > bound(0.025, f.N) {
			t.Errorf("%+v: false faster %d of %d", c, f.K, f.N)
		}
		if f := r.FalseSlower.Flip; f.Of() > bound(0.025, f.N) {
			t.Errorf("%+v: false slower %d of %d", c, f.K, f.N)
		}
		if f := r.FalseNeutral.Flip; f.Of() > bound(0.05, f.N) {
			t.Errorf("%+v: false neutral %d of %d", c, f.K, f.N)
		}
		if p := r.Power.Flip; 1-p.Of() > bound(0.10, p.N) {
			t.Errorf("%+v: power %d of %d at %.1f%%", c, p.K, p.N, r.PowerEffectPct)
		}
	}
}

// TestWorldSchedule checks that the simulated schedule is flipbench's: order-flipped
// passes, every lane of every arm once per pass.
func TestWorldSchedule(t *testing.T) {
	w := sim.World{Lanes: 3, Collections: 2, Pairs: 2, Samples: 4, Within: 0.01}
	in := w.Input(sim.NewRand(1))
	if got, want := len(in.Observations), 2*4*3*2; got != want {
		t.Fatalf("%d observations, want %d", got, want)
	}
	for i := 0; i < len(in.Observations); i += 2 {
		a, b := in.Observations[i], in.Observations[i+1]
		first := sim.Base
		if a.Pass%2 == 0 {
			first = sim.Cand
		}
		if a.Arm != first || a.Lane != b.Lane || a.Pass != b.Pass {
			t.Fatalf("runs %d and %d: %s %s pass %d, %s %s pass %d", i, i+1, a.Lane, a.Arm, a.Pass, b.Lane, b.Arm, b.Pass)
		}
	}
}

// TestSequential runs the quick sequential grid (a noisy host, a look after every pair up
// to 20): in A/A the lanes that stop reproduced the wrong way stay under 2.5% per
// direction at every stopping time, and for a large effect (15%) the sequential rule uses
// fewer pairs on average than the fixed protocol that matches its power. (For an effect
// near the MDE it may not: the union bound over looks costs power; docs/methodology.md
// shows both.)
func TestSequential(t *testing.T) {
	trials := 150
	if testing.Short() {
		trials = 40
	}
	for _, r := range sim.EvaluateSeqGrid(sim.SeqGrid(true), trials) {
		c := r.Cell
		if c.Effect == 0 {
			for k := c.MinPairs; k <= c.MaxPairs; k++ {
				if f := float64(r.FalseFasterBy[k]) / float64(trials); f > bound(0.025, trials) {
					t.Errorf("%+v: by round %d, %d of %d trials stopped reproduced faster", c, k, r.FalseFasterBy[k], trials)
				}
				if f := float64(r.FalseSlowerBy[k]) / float64(trials); f > bound(0.025, trials) {
					t.Errorf("%+v: by round %d, %d of %d trials stopped reproduced slower", c, k, r.FalseSlowerBy[k], trials)
				}
			}
			continue
		}
		if c.Effect <= -0.1 && r.MeanPairs >= float64(r.FixedPairs) {
			t.Errorf("%+v: sequential used %.1f pairs on average, the fixed protocol of equal power %d", c, r.MeanPairs, r.FixedPairs)
		}
	}
}
