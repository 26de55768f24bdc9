package driftcheck

// Code layout as a random effect (docs/methodology.md, "Code layout"). Each arm of a Go
// lane can be linked several times, each build with its own function layout
// (-ldflags=-randlayout=SEED); the layouts rotate over the pass pairs (Input.Layouts: pair
// k of collection c, both 1-based, runs layout (k-1+c-1) mod K in every arm). A build's
// layout shifts its times by a few percent that are the same in every process of the
// build, so a pair's mean carries the difference of its two builds' shifts, and pairs of
// one layout index share it. The pair means' spread around their collection's mean already
// holds that difference; what a plain mean over k pairs misses is that pairs of one index
// are not independent: the mean's variance is sigma_w^2/k + sigma_L^2/G over G indices,
// not (sigma_w^2 + sigma_L^2)/k. The layout component sigma_L^2 of the pair means is
// estimated by a one-way random-effects analysis of variance over the layout indices, and
// the missing sigma_L^2 (1/G - 1/k) is added to the variance of the lane's mean
// (noise.adjVar), as the carryover correction's is.

// LayoutIndex returns the layout index pair k (1-based) of collection c (0-based) runs in
// every arm, of layouts layouts: the rotation every schedule and analysis use.
func LayoutIndex(layouts, c, k int) int {
	if layouts <= 1 {
		return 0
	}
	return (k - 1 + c) % layouts
}

// layoutComponent estimates the variance of the pair means between layout indices
// (sigma_L^2, log scale) from the usable pairs of every collection, each pair mean centred
// on its collection's mean, and the within-index variance: the method of moments of the
// one-way random-effects model, sigma_L^2 = max(0, (MSB - MSW) / n0). groups is how many
// indices have a pair, n the pairs. With one index, or too few pairs, varL is 0.
func layoutComponent(byColl [][]pairStat, layouts int) (varL, varW float64, groups, n int) {
	if layouts <= 1 {
		return 0, 0, 1, 0
	}
	byIdx := make([][]float64, layouts)
	for c, ps := range byColl {
		if len(ps) == 0 {
			continue
		}
		mean := 0.0
		for _, p := range ps {
			mean += p.m
		}
		mean /= float64(len(ps))
		for _, p := range ps {
			i := LayoutIndex(layouts, c, p.k)
			byIdx[i] = append(byIdx[i], p.m-mean)
		}
	}
	var grand, ssw float64
	var sizes []float64
	var means []float64
	for _, xs := range byIdx {
		if len(xs) == 0 {
			continue
		}
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			ssw += (x - m) * (x - m)
		}
		grand += m * float64(len(xs))
		sizes, means = append(sizes, float64(len(xs))), append(means, m)
		n += len(xs)
	}
	groups = len(sizes)
	if groups < 2 || n <= groups {
		return 0, 0, groups, n
	}
	grand /= float64(n)
	var ssb, sumSq float64
	for i, m := range means {
		ssb += sizes[i] * (m - grand) * (m - grand)
		sumSq += sizes[i] * sizes[i]
	}
	msb, msw := ssb/float64(groups-1), ssw/float64(n-groups)
	n0 := (float64(n) - sumSq/float64(n)) / float64(groups-1)
	return max(0, (msb-msw)/n0), msw, groups, n
}

// layoutEstimate is one lane's one-way analysis of variance of its pair means over the
// layout indices (layoutComponent): the between-index component varL and the within-index
// variance varW (log scale), over groups indices and n pairs.
type layoutEstimate struct {
	varL, varW float64
	groups, n  int
}

// poolLayouts gives every lane its layout component, at least what the other lanes of its
// noise group show, and adds what it costs to the lane's mean (adjVar) and its share
// (layoutSharePct). With K layouts a lane's own component rests on K - 1 degrees of
// freedom (7 at the default 8), too few to tell a lane whose layouts matter from one
// whose estimate came out 0 by chance. The lanes of one program share its layouts (one
// seed moves every function), so the median over the other lanes of the ratio of layout
// to within-layout variance, at this lane's own within-layout variance, is a floor:
//
//	varL' = max(varL, median_others(varL/varW) varW)
//
// A lane whose own estimate is larger keeps it: lanes differ in how much layout moves
// them (a toy's sorting lane 53-81% of its pair means' spread, its hashing lane 0%), so
// averaging them (each lane at the program's mean) would narrow exactly the lanes layout
// moves most. A lane alone in its group keeps its own.
func poolLayouts(lds []*laneData) {
	usable := func(e layoutEstimate) bool { return e.groups >= 2 && e.varW > 0 }
	for _, ld := range lds {
		e := ld.layout
		if !usable(e) {
			continue
		}
		var others []float64
		for _, o := range lds {
			if o != ld && o.lane.Group == ld.lane.Group && usable(o.layout) {
				others = append(others, o.layout.varL/o.layout.varW)
			}
		}
		varL := e.varL
		if len(others) > 0 {
			varL = max(varL, Median(others)*e.varW)
		}
		if varL > 0 {
			ld.adjVar += layoutVar(varL, e.groups, e.n)
			ld.layoutSharePct = 100 * varL / (varL + e.varW)
		}
	}
}

// layoutVar returns what the layouts add to the variance of the lane's mean over n pairs
// in groups indices beyond a plain mean's: sigma_L^2 (1/groups - 1/n), never below 0.
func layoutVar(varL float64, groups, n int) float64 {
	if varL <= 0 || groups < 1 || n < 1 {
		return 0
	}
	return max(0, varL*(1/float64(groups)-1/float64(n)))
}
