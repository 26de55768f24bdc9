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

// TestPoolLayouts: a lane whose own layout component came out 0 takes the median of the
// other lanes' ratios of layout to within-layout variance at its own within variance; a
// lane whose own is larger keeps it; a lane alone in its noise group keeps its own; one
// layout adds nothing.
func TestPoolLayouts(t *testing.T) {
	lane := func(group string, varL, varW float64) *laneData {
		return &laneData{lane: Lane{Name: "x", Group: group}, layout: layoutEstimate{varL: varL, varW: varW, groups: 4, n: 40}}
	}
	zero := lane("", 0, 1e-4)
	a, b, c := lane("", 0.5e-4, 1e-4), lane("", 0.5e-4, 2e-4), lane("", 4e-4, 1e-4)
	alone := lane("instructions", 0, 1e-4)
	single := &laneData{layout: layoutEstimate{groups: 1, n: 40}}
	poolLayouts([]*laneData{zero, a, b, c, alone, single})
	// The others' ratios 0.5, 0.25 and 4: their median 0.5, at zero's own 1e-4.
	if want := layoutVar(0.5e-4, 4, 40); math.Abs(zero.adjVar-want) > 1e-12 || math.Abs(zero.layoutSharePct-100*0.5/1.5) > 1e-9 {
		t.Errorf("a lane at 0: adjVar %g (want %g), share %.2f%%", zero.adjVar, want, zero.layoutSharePct)
	}
	// c's own ratio 4 is above the others' median: it keeps it.
	if want := layoutVar(4e-4, 4, 40); math.Abs(c.adjVar-want) > 1e-12 {
		t.Errorf("c: adjVar %g, want its own %g", c.adjVar, want)
	}
	// b's own ratio 0.25 is below the others' median (0.5 of 0, 0.5, 4): 0.5 x 2e-4.
	if want := layoutVar(1e-4, 4, 40); math.Abs(b.adjVar-want) > 1e-12 {
		t.Errorf("b: adjVar %g, want %g", b.adjVar, want)
	}
	if alone.adjVar != 0 || alone.layoutSharePct != 0 {
		t.Errorf("a lane alone in its group borrowed: %+v", alone)
	}
	if single.adjVar != 0 {
		t.Errorf("one layout: adjVar %g", single.adjVar)
	}
}
