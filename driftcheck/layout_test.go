package driftcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Pairs whose means carry a shift of their layout index give a layout component near the
// shifts' variance; pairs without one give about none; one layout gives none.
func TestLayoutComponent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const layouts, pairs = 4, 40
	shift := []float64{-0.02, 0.01, 0.03, -0.015} // the builds' differences, log scale
	build := func(withShift bool) [][]pairStat {
		byColl := make([][]pairStat, 2)
		for c := range byColl {
			for k := 1; k <= pairs; k++ {
				m := 0.005 * rng.NormFloat64()
				if withShift {
					m += shift[LayoutIndex(layouts, c, k)]
				}
				byColl[c] = append(byColl[c], pairStat{k: k, m: m})
			}
		}
		return byColl
	}
	varL, varW, groups, n := layoutComponent(build(true), layouts)
	want := 0.0
	for _, s := range shift {
		want += s * s
	}
	want /= layouts // the shifts' variance around their mean (it is about 0)
	if groups != layouts || n != 2*pairs || math.Abs(varL-want)/want > 0.5 || math.Abs(math.Sqrt(varW)-0.005) > 0.002 {
		t.Errorf("with shifts: varL %.2g (want about %.2g), sd within %.3g (want 0.005), %d groups, %d pairs", varL, want, math.Sqrt(varW), groups, n)
	}
	if varL, _, _, _ := layoutComponent(build(false), layouts); varL > 0.1*want {
		t.Errorf("without shifts: varL %.2g, want about 0", varL)
	}
	if varL, _, groups, _ := layoutComponent(build(true), 1); varL != 0 || groups != 1 {
		t.Errorf("one layout: varL %v, %d groups", varL, groups)
	}
	if v := layoutVar(0.01, 4, 80); math.Abs(v-0.01*(0.25-1.0/80)) > 1e-12 {
		t.Errorf("layoutVar = %v", v)
	}
	if layoutVar(0.01, 4, 4) != 0 || layoutVar(0, 4, 80) != 0 {
		t.Error("layoutVar adds variance where the pairs are the layouts, or without a component")
	}
}

// The layouts rotate: both passes of a pair one index, each collection one later, every
// index once in any layouts consecutive pairs.
func TestLayoutIndex(t *testing.T) {
	for c := 0; c < 2; c++ {
		seen := map[int]bool{}
		for k := 1; k <= 4; k++ {
			seen[LayoutIndex(4, c, k)] = true
		}
		if len(seen) != 4 {
			t.Errorf("collection %d: indices %v, want all 4", c, seen)
		}
	}
	if LayoutIndex(4, 0, 1) != 0 || LayoutIndex(4, 1, 1) != 1 || LayoutIndex(1, 1, 7) != 0 {
		t.Error("rotation")
	}
}
