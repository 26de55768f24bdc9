package driftcheck

import (
	"fmt"
	"math"
	"strings"
)

// Noise that differs between collections. A lane's noise is one estimate over its
// collections (residual), which is right while the collections measure on the same host
// in the same state: a sequential run interleaves them round by round. Collections run
// apart (a fixed protocol, shards on other machines, a host that got busier between them)
// can differ, and then one estimate serves neither: it is too wide for the quiet
// collection, whose replication test loses power, and too narrow for the noisy one, whose
// test reads reproduced more often than its level says. So each lane's collections are
// tested for equal noise (Bartlett's test on their own variances); where they differ
// (p below collectionNoiseP), every collection is judged with its own noise, moderated by
// a prior fitted to the other lanes' noise in that collection, and the pooled estimate
// weights each collection's mean by its precision, w_c = 2 K_c / sigma_c^2 (the
// Graybill-Deal estimator of a common effect), with the variance
//
//	1/W (1 + 4 sum_c (w_c/W) (1 - w_c/W) / d_c),   W = sum_c w_c
//
// (Meier 1953: the weights are estimated, so 1/W alone is too small) on W^2 / sum_c w_c^2
// / d_c degrees of freedom (Satterthwaite's, d_c those of collection c's noise). A quiet
// collection then counts for what it measured: with one collection three times as noisy
// as the other, the pooled variance is a fifth of the mean of all pairs'.

// collectionNoiseP is the p-value of Bartlett's test below which a lane's collections are
// judged each with its own noise: a lane whose collections measure alike switches in 1%
// of its looks, at the price of fewer degrees of freedom, never of its error rate.
const collectionNoiseP = 0.01

// residualByCollection returns each collection's own estimate of the variance of one pass
// delta (the pair means and the order effects around the collection's own means) and its
// degrees of freedom, 2 (K_c - 1); a collection with fewer than two pairs has none.
func residualByCollection(byColl [][]pairStat) (s2 []float64, df []int) {
	s2, df = make([]float64, len(byColl)), make([]int, len(byColl))
	for c, ps := range byColl {
		if len(ps) < 2 {
			continue
		}
		mm, mo := meanPairs(ps)
		ss := 0.0
		for _, p := range ps {
			ss += (p.m-mm)*(p.m-mm) + (p.o-mo)*(p.o-mo)
		}
		df[c] = 2 * (len(ps) - 1)
		s2[c] = 2 * ss / float64(df[c])
	}
	return s2, df
}

// bartlett returns the p-value of Bartlett's test that the variances s2, with df degrees of
// freedom each, are equal (those with none left out), and how many it compared; p is 1
// when fewer than two have degrees of freedom or every one is 0.
func bartlett(s2 []float64, df []int) (p float64, n int) {
	var sumDF, sumInv, sumLog, pooled float64
	for i, v := range s2 {
		if df[i] <= 0 || !(v > 0) {
			continue
		}
		d := float64(df[i])
		n++
		sumDF += d
		sumInv += 1 / d
		sumLog += d * math.Log(v)
		pooled += d * v
	}
	if n < 2 {
		return 1, n
	}
	pooled /= sumDF
	stat := (sumDF*math.Log(pooled) - sumLog) / (1 + (sumInv-1/sumDF)/(3*float64(n-1)))
	return chiSquaredTail(stat, n-1), n
}

// collNoise is a lane's noise where its collections' noises differ: each collection's,
// and the pooled estimate's.
type collNoise struct {
	p      float64 // Bartlett's p-value that the collections' noises are equal
	byColl []noise // each collection's noise, moderated within its collection
	// mean is the precision-weighted mean of the collections' pair means, and pooled the
	// noise of one pass delta that gives it its variance over all K pairs (sigma^2 / 2K),
	// with Satterthwaite's degrees of freedom.
	mean   float64
	pooled noise
	// noisiest is the largest collection noise, which the replication tests' power takes;
	// collPriorDF the fewest degrees of freedom a collection's prior lent.
	noisiest, collPriorDF float64
}

// noiseByCollection tests whether the lane's collections measure with equal noise and,
// where they do not, returns each collection's noise moderated by its collection's prior
// (prs, by collection; a missing one lends nothing) and the host calibration, and the
// pooled estimate's; nil, with the test's p-value (0 without a test: fewer than two
// collections with two pairs), where one noise serves them all.
func (ld *laneData) noiseByCollection(pooled noise, prs []prior, cal prior) (*collNoise, float64) {
	s2, df := residualByCollection(ld.byColl)
	p, n := bartlett(s2, df)
	if n < 2 {
		return nil, 0
	}
	if p >= collectionNoiseP {
		return nil, p
	}
	cn := &collNoise{p: p, byColl: make([]noise, len(s2)), collPriorDF: math.Inf(1)}
	var k, weight, weighted float64
	ws, ds := make([]float64, len(s2)), make([]float64, len(s2))
	for c := range s2 {
		kc := float64(len(ld.byColl[c]))
		if kc == 0 {
			continue
		}
		var pr prior
		if c < len(prs) {
			pr = prs[c]
		}
		nz := noise{own: df[c], ownSD: math.Sqrt(s2[c]), adjVar: pooled.adjVar}
		if mv, md, lent := moderate(s2[c], float64(df[c]), pr, cal); md > 0 {
			nz.sigma, nz.df, nz.lent = math.Sqrt(mv), md, lent
			cn.collPriorDF = math.Min(cn.collPriorDF, md-float64(df[c]))
		}
		cn.byColl[c] = nz
		if nz.df == 0 {
			return nil, p // a collection without a noise: one estimate serves them all
		}
		cn.noisiest = math.Max(cn.noisiest, nz.sigma)
		m, _ := meanPairs(ld.byColl[c])
		ws[c], ds[c] = 2*kc/(nz.sigma*nz.sigma), nz.df
		k += kc
		weight += ws[c]
		weighted += ws[c] * m
	}
	var meier, satDen float64
	for c, w := range ws {
		if w > 0 {
			meier += 4 * (w / weight) * (1 - w/weight) / ds[c]
			satDen += w * w / ds[c]
		}
	}
	cn.mean = weighted / weight
	cn.pooled = pooled
	cn.pooled.sigma = math.Sqrt(2 * k * (1 + meier) / weight)
	cn.pooled.df = weight * weight / satDen
	cn.pooled.lent = math.Inf(1)
	for _, nz := range cn.byColl {
		if nz.df > 0 {
			cn.pooled.lent = math.Min(cn.pooled.lent, nz.lent)
		}
	}
	return cn, p
}

// noiseNote is the pooled reason's note on a lane judged with each collection's noise.
func (cn *collNoise) noiseNote() string {
	var parts []string
	for c, nz := range cn.byColl {
		if nz.df > 0 {
			parts = append(parts, fmt.Sprintf("collection %d %.1f%%", c+1, nz.sigma*100))
		}
	}
	return fmt.Sprintf("the collections measured with different noise (Bartlett's test %s: %s), so each is judged with its own and the pooled estimate weights them by their precision",
		pText(cn.p), strings.Join(parts, ", "))
}
