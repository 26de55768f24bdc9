package driftcheck_test

import (
	"math/rand/v2"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
)

// BenchmarkAnalyze measures one analysis of a three-arm sequential run at its last look:
// 12 lanes, 2 collections, 20 pairs, 21 samples a run, on the balanced schedule with
// every run's place and predecessor (so the carryover fit runs for every lane).
func BenchmarkAnalyze(b *testing.B) {
	arms := []string{"base", "candA", "candB"}
	var lanes []string
	var dl []driftcheck.Lane
	for i := range 12 {
		name := string(rune('a' + i))
		lanes = append(lanes, name)
		dl = append(dl, driftcheck.Lane{Name: name})
	}
	runs := harness.Schedule(arms, lanes, 2, 40, 1, false)
	in := driftcheck.Input{Base: "base", Candidates: arms[1:], Lanes: dl, Collections: 2, Passes: 40}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, r := range runs {
		xs := make([]float64, 21)
		for j := range xs {
			xs[j] = 100 * (1 + 0.02*rng.NormFloat64())
		}
		o := driftcheck.Observation{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane, Arm: r.Arm, Samples: xs, Order: r.Order, Position: r.Position}
		if i > 0 && runs[i-1].Pass == r.Pass {
			o.After = runs[i-1].Arm
		}
		in.Observations = append(in.Observations, o)
	}
	cfg := driftcheck.DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 2, 20
	d, err := driftcheck.NewDesign(cfg, 2)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Design = d
	b.ReportAllocs()
	for b.Loop() {
		if _, err := driftcheck.Analyze(in, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
