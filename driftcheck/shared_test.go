package driftcheck_test

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
	"github.com/flipbench/flipbench/driftcheck"
)

// TestSetAside: one process disturbed by a neighbour (twice as slow, five times noisier)
// is set aside and named; its pair is left out, and the lane is judged on the rest.
func TestSetAside(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 4, Samples: 15, Within: 0.02, Between: 0.01}
	in := w.Input(sim.NewRand(11))
	hit := &in.Observations[5]
	for i := range hit.Samples {
		hit.Samples[i] = 2 * (hit.Samples[i] + 5*(hit.Samples[i]-100)) // 2x slower, 5x the spread
	}
	r := analyze(t, in, driftcheck.DefaultConfig())
	if len(r.SetAside) != 1 || r.SetAside[0].Pass != hit.Pass || r.SetAside[0].Arm != hit.Arm || !strings.Contains(r.SetAside[0].Reason, "a disturbed process") {
		t.Fatalf("set aside %+v, want the run of pass %d arm %s", r.SetAside, hit.Pass, hit.Arm)
	}
	p := r.Pooled[0]
	if p.SetAside != 1 || p.UsablePairs != 7 || p.Verdict != driftcheck.LaneNeutral {
		t.Errorf("pooled: %d set aside, %d usable, %s %q; want 1, 7, neutral", p.SetAside, p.UsablePairs, p.Verdict, p.Reason)
	}
}

// TestSharedNoise: after one round of two collections a lane has one degree of freedom of
// its own; with nine other lanes of similar noise it borrows theirs, so its interval is
// usable and a large effect is decided at the first look.
func TestSharedNoise(t *testing.T) {
	cfg := driftcheck.DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 1, 40
	w := sim.World{Lanes: 10, Collections: 2, Pairs: 1, Samples: 10, Within: 0.02, Between: 0.01}
	in := w.Input(sim.NewRand(2))
	for i, o := range in.Observations {
		if o.Lane == sim.LaneName(0) && o.Arm == sim.Cand {
			for j := range o.Samples {
				in.Observations[i].Samples[j] *= 1.3
			}
		}
	}
	r := analyze(t, in, cfg)
	alone := in
	alone.Lanes = in.Lanes[:1]
	alone.Observations = nil
	for _, o := range in.Observations {
		if o.Lane == sim.LaneName(0) {
			alone.Observations = append(alone.Observations, o)
		}
	}
	one := analyze(t, alone, cfg)
	got, own := r.Pooled[0], one.Pooled[0]
	if got.DF != 1 || !(got.DFUsed > 5) || len(r.Priors) == 0 {
		t.Errorf("df %d used %.1f, priors %+v: want 1 of its own and more borrowed", got.DF, got.DFUsed, r.Priors)
	}
	if got.Verdict != driftcheck.LaneReproducedSlower {
		t.Errorf("with shared noise: %s %q, want reproduced-slower at round 1", got.Verdict, got.Reason)
	}
	if !(own.CIHighPct-own.CILowPct > 2*(got.CIHighPct-got.CILowPct)) {
		t.Errorf("alone [%.1f, %.1f] is not far wider than shared [%.1f, %.1f]", own.CILowPct, own.CIHighPct, got.CILowPct, got.CIHighPct)
	}
	// A counted lane (its own noise group) does not borrow timed lanes' noise.
	in.Lanes[0].Group = "instructions"
	r = analyze(t, in, cfg)
	if p := r.Pooled[0]; p.DFUsed != float64(p.DF) {
		t.Errorf("counted lane borrowed: df %d used %.1f", p.DF, p.DFUsed)
	}
}

// TestCountedLaneFirstPair: a counted lane (0.02% noise, the 0.5% default floor of counted
// lanes) with 1% more work reads reproduced slower from the first pass pair of each of two
// collections.
func TestCountedLaneFirstPair(t *testing.T) {
	w := sim.World{Lanes: 1, Collections: 2, Pairs: 1, Samples: 5, Within: 0.0002, Effect: 0.01}
	in := w.Input(sim.NewRand(8))
	in.Lanes[0].Group, in.Lanes[0].FloorPct = "instructions", 0.5
	r := analyze(t, in, driftcheck.DefaultConfig())
	if p := r.Pooled[0]; p.Verdict != driftcheck.LaneReproducedSlower {
		t.Errorf("pooled %s %q, want reproduced-slower", p.Verdict, p.Reason)
	}
}

// TestNoiseByCollection: lanes whose second collection measured on a host five times as
// noisy are judged each collection with its own noise (the quiet collection's interval
// narrower than one shared estimate would make it), and the pooled reason says so; lanes
// whose collections measured alike keep one estimate.
func TestNoiseByCollection(t *testing.T) {
	quiet := sim.World{Lanes: 6, Collections: 2, Pairs: 8, Samples: 10, Within: 0.01, Between: 0.01, Effect: 0.03}
	noisy := quiet
	noisy.Within, noisy.Between = 0.05, 0.05
	in := quiet.Input(sim.NewRand(21))
	loud := noisy.Input(sim.NewRand(22))
	for i, o := range in.Observations {
		if o.Collection == 2 {
			in.Observations[i] = loud.Observations[i]
		}
	}
	r := analyze(t, in, driftcheck.DefaultConfig())
	switched := 0
	for _, p := range r.Pooled {
		if !p.NoiseByCollection {
			continue
		}
		switched++
		if !(p.CollectionNoiseP < 0.01) || !strings.Contains(p.Reason, "measured with different noise") {
			t.Errorf("%s: p %.4f, reason %q: want p below 0.01, named in the reason", p.Lane, p.CollectionNoiseP, p.Reason)
		}
		var c1, c2 driftcheck.LaneSummary
		for _, s := range r.Lanes {
			if s.Lane == p.Lane && s.Collection == 1 {
				c1 = s
			}
			if s.Lane == p.Lane && s.Collection == 2 {
				c2 = s
			}
		}
		if !(c2.NoisePct > 2*c1.NoisePct) || !(c1.NoisePct < p.NoisePct && p.NoisePct < c2.NoisePct) {
			t.Errorf("%s: noise %.2f%% and %.2f%% by collection, %.2f%% pooled: want the second far above the first, the pooled between", p.Lane, c1.NoisePct, c2.NoisePct, p.NoisePct)
		}
	}
	if switched < 5 {
		t.Errorf("%d of 6 lanes judged by collection, want at least 5", switched)
	}
	var byColl int
	for _, pr := range r.Priors {
		if pr.Collection > 0 {
			byColl++
		}
	}
	if byColl != 2 {
		t.Errorf("priors %+v: want one for each collection beside the shared one", r.Priors)
	}

	same := quiet.Input(sim.NewRand(21))
	for _, p := range analyze(t, same, driftcheck.DefaultConfig()).Pooled {
		if p.NoiseByCollection || !(p.CollectionNoiseP > 0) {
			t.Errorf("%s, collections alike: by collection %v (p %.4f), want one estimate after a test", p.Lane, p.NoiseByCollection, p.CollectionNoiseP)
		}
	}
}
