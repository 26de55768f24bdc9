package driftcheck_test

import (
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// BenchmarkAnalyze analyses a large experiment: base + 2 candidates x 12 lanes x
// 24 passes (2 collections of 12) x 121 samples per run.
func BenchmarkAnalyze(b *testing.B) {
	w := aa(12)
	w.cands = []string{"candA", "candB"}
	w.samples = 121
	w.effect = map[string]float64{"candA": -0.05, "candB": 0.01}
	w.drift = linearDrift(0.1)
	in := w.input(newRand(42), false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := driftcheck.Analyze(in, driftcheck.DefaultConfig()); err != nil {
			b.Fatal(err)
		}
	}
}
