package driftcheck

import (
	"math"
	"testing"
)

// TestBoundaries checks the numerical integration against published group-sequential
// boundaries: five equally spaced looks, one-sided 0.025, Lan-DeMets O'Brien-Fleming and
// Pocock type spending (the values gsDesign prints for these designs).
func TestBoundaries(t *testing.T) {
	ts := []float64{0.2, 0.4, 0.6, 0.8, 1}
	want := map[Spending][]float64{
		SpendOBrienFleming: {4.877, 3.357, 2.680, 2.290, 2.031},
		SpendPocock:        {2.438, 2.427, 2.410, 2.396, 2.386},
	}
	for sp, zs := range want {
		for k, p := range boundaries(0.025, sp, ts) {
			if got := zQuantile(1 - p); math.Abs(got-zs[k]) > 0.002 {
				t.Errorf("%s look %d: z %.4f, want %.3f", sp, k+1, got, zs[k])
			}
		}
	}
	// At the first look nothing was spent before, so its tail is what the function spends
	// by then; Hwang-Shih-DeCani with gamma 4 spends early, more than Pocock.
	for _, sp := range Spendings() {
		if got, want := boundaries(0.025, sp, ts)[0], sp.spent(0.025, 0.2); math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s first look: tail %.6f, want the spent %.6f", sp, got, want)
		}
	}
	if hsd, pocock := SpendHSD.spent(0.025, 0.2), SpendPocock.spent(0.025, 0.2); math.Abs(hsd-0.025*0.5507/0.9817) > 1e-5 || hsd <= pocock {
		t.Errorf("hsd spends %.5f by t = 0.2 (Pocock %.5f), want 0.025 (1 - e^-0.8) / (1 - e^-4) = 0.01402", hsd, pocock)
	}
	// A fixed protocol tests at the full level; every look of a sequential rule at less.
	fixed, _ := NewDesign(Config{}, 2)
	seq, _ := NewDesign(Config{MinPairs: 2, MaxPairs: 20}, 2)
	if fixed.CollTail(5) != 0.025 || fixed.PoolTail(5) != 0.05 {
		t.Errorf("fixed tails %v %v", fixed.CollTail(5), fixed.PoolTail(5))
	}
	for k := 2; k <= 20; k++ {
		if !(seq.CollTail(k) < fixed.CollTail(k) && seq.PoolTail(k) < fixed.PoolTail(k)) {
			t.Errorf("look %d: tails %v %v not below the fixed ones", k, seq.CollTail(k), seq.PoolTail(k))
		}
	}
}

// TestMoments checks the special functions of the noise prior.
func TestMoments(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }
	if !near(digamma(1), -0.5772156649015329) || !near(trigamma(1), math.Pi*math.Pi/6) || !near(trigammaDeriv(1), -2.4041138063191885) {
		t.Errorf("digamma(1) %v trigamma(1) %v psi''(1) %v", digamma(1), trigamma(1), trigammaDeriv(1))
	}
	for _, y := range []float64{0.3, 1, 4, 50} {
		if got := trigammaInverse(trigamma(y)); !near(got, y) {
			t.Errorf("trigammaInverse(trigamma(%v)) = %v", y, got)
		}
	}
}

// TestOwnDF: OwnDF is the df residual computes from complete rounds.
func TestOwnDF(t *testing.T) {
	for _, tc := range []struct{ c, r, want int }{{2, 1, 1}, {2, 2, 5}, {1, 1, 0}, {1, 4, 6}, {3, 2, 8}} {
		byColl := make([][]pairStat, tc.c)
		for c := range byColl {
			for k := 1; k <= tc.r; k++ {
				byColl[c] = append(byColl[c], pairStat{k: k, m: float64(k * c), o: float64(k)})
			}
		}
		if _, df := residual(byColl, 0); df != tc.want || OwnDF(tc.c, tc.r) != tc.want {
			t.Errorf("%d collections, %d rounds: residual df %d, OwnDF %d, want %d", tc.c, tc.r, df, OwnDF(tc.c, tc.r), tc.want)
		}
	}
}
