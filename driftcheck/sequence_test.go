package driftcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSequenceCrit(t *testing.T) {
	// At the tuned size and alpha 0.05: sqrt(2 log(2/0.0025)) = 3.66 with a known sigma.
	if got := SequenceCrit(0.05, 100, 100, 0); math.Abs(got-3.6566) > 0.001 {
		t.Errorf("crit at r = 1: %.4f, want 3.6566", got)
	}
	// Wider with fewer degrees of freedom, at a smaller alpha, and far from the tuned size.
	if SequenceCrit(0.05, 10, 10, 5) <= SequenceCrit(0.05, 10, 10, 0) {
		t.Error("an estimated sigma does not widen the sequence")
	}
	if SequenceCrit(0.01, 10, 10, 0) <= SequenceCrit(0.05, 10, 10, 0) {
		t.Error("a smaller alpha does not widen the sequence")
	}
	// Far below its tuned size the sequence is wide; far beyond it, it widens again
	// (slowly, as the law of the iterated logarithm requires of any sequence).
	if SequenceCrit(0.05, 1, 100, 0) <= SequenceCrit(0.05, 100, 100, 0) || SequenceCrit(0.05, 1e9, 100, 0) <= SequenceCrit(0.05, 100, 100, 0) {
		t.Error("the sequence does not widen away from its tuned size")
	}
	if !math.IsInf(SequenceCrit(0.05, 0, 10, 0), 1) || !math.IsInf(SequenceCrit(0, 5, 10, 0), 1) {
		t.Error("no pairs or no alpha: want +Inf")
	}
}

// TestSequenceCoverage checks the time-uniform guarantee by simulation: over 400 pairs,
// looked at after every pair, the sequence excludes the true mean at any time in at most
// alpha of 2000 seeded runs, where a fixed 95% interval looked at every pair does far more
// often.
func TestSequenceCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const runs, n, alpha = 2000, 400, 0.05
	seqMiss, fixedMiss := 0, 0
	seqCrit, fixedCrit := make([]float64, n+1), make([]float64, n+1)
	for k := 3; k <= n; k++ {
		seqCrit[k], fixedCrit[k] = SequenceCrit(alpha, k, n, float64(k-1)), tCritical(alpha/2, float64(k-1))
	}
	for range runs {
		sum, sumSq := 0.0, 0.0
		missedSeq, missedFixed := false, false
		for k := 1; k <= n; k++ {
			x := rng.NormFloat64()
			sum += x
			sumSq += x * x
			if k < 3 {
				continue
			}
			mean := sum / float64(k)
			sd := math.Sqrt((sumSq - float64(k)*mean*mean) / float64(k-1))
			se := sd / math.Sqrt(float64(k))
			if math.Abs(mean) > seqCrit[k]*se {
				missedSeq = true
			}
			if math.Abs(mean) > fixedCrit[k]*se {
				missedFixed = true
			}
		}
		if missedSeq {
			seqMiss++
		}
		if missedFixed {
			fixedMiss++
		}
	}
	if rate := float64(seqMiss) / runs; rate > alpha {
		t.Errorf("the sequence missed the mean at some look in %.1f%% of runs, want at most %.0f%%", 100*rate, 100*alpha)
	}
	if fixedMiss < 4*seqMiss || float64(fixedMiss)/runs < 0.2 {
		t.Errorf("a fixed interval looked at every pair missed in %d of %d runs (the sequence %d): want far more, or the test shows nothing", fixedMiss, runs, seqMiss)
	}
	t.Logf("missed at some look: sequence %d, fixed 95%% %d of %d runs", seqMiss, fixedMiss, runs)
}
