package driftcheck

import (
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/flipbench/flipbench/internal/human"
)

// maxPairsNeeded caps the pairs-needed estimate: beyond it the answer is "far more than
// any run will make", and the search stops.
const maxPairsNeeded = 100_000

// tQuantile returns the p-quantile of Student's t distribution with df degrees of
// freedom (df >= 1).
func tQuantile(p float64, df int) float64 {
	return stats.InvCDF(stats.TDist{V: float64(df)})(p)
}

// materialTail is the upper tail 1 - F(q) of the t quantile q that scales a lane's noise
// into the material threshold of a pass. An A/A pair reads REPRODUCED when both its
// deltas pass the threshold with one sign, which for independent normal deltas happens
// with probability 2(1 - F(q))^2; a tail of sqrt(0.04/2) makes that 4%, a margin under
// the 5% the pair labels promise.
var materialTail = math.Sqrt(0.04 / 2)

// pairStat is one usable pass-pair on the log scale.
type pairStat struct {
	m, o float64 // pair mean and order effect
}

// noise is a lane's measured noise, pooled over its collections.
type noise struct {
	sigma float64 // standard deviation of one pass delta (log scale)
	df    int     // degrees of freedom; 0 means no estimate
}

// pooledNoise estimates the standard deviation of one pass delta from the usable pairs of
// each collection. With d_fwd = theta + omega + e1 and d_rev = theta - omega + e2, the
// pair mean m = theta + (e1+e2)/2 and the order effect o = omega + (e1-e2)/2 are
// independent with variance sigma^2/2 each. The pair means vary around their
// collection's mean (the effect may differ between collections); the order effects around
// one mean over all collections (the order effect of one harness on one host), so
//
//	sigma^2 = 2 [sum_c sum_k (m - mean_c m)^2 + sum_all (o - mean o)^2] / df,  df = sum_c (K_c - 1) + (K - 1)
//
// where K_c counts collection c's usable pairs and K all of them. An order effect that
// changes between collections only inflates the estimate. Because the order effects are
// independent of the pair means, a collection's effect interval is an exact t interval
// under normal noise even with one pair per collection, given pairs in another.
func pooledNoise(byColl [][]pairStat) noise {
	var ssM, ssO float64
	var dofM, k int
	var all []pairStat
	for _, ps := range byColl {
		if len(ps) == 0 {
			continue
		}
		mm, _ := meanPairs(ps)
		for _, p := range ps {
			ssM += (p.m - mm) * (p.m - mm)
		}
		dofM += len(ps) - 1
		k += len(ps)
		all = append(all, ps...)
	}
	if k < 2 {
		return noise{}
	}
	_, mo := meanPairs(all)
	for _, p := range all {
		ssO += (p.o - mo) * (p.o - mo)
	}
	df := dofM + k - 1
	return noise{sigma: math.Sqrt(2 * (ssM + ssO) / float64(df)), df: df}
}

// meanPairs returns the mean pair mean and mean order effect of non-empty ps.
func meanPairs(ps []pairStat) (m, o float64) {
	for _, p := range ps {
		m += p.m
		o += p.o
	}
	return m / float64(len(ps)), o / float64(len(ps))
}

// materialLog returns the material threshold of one pass delta on the log scale: the
// larger of the floor and q x sigma, where q is the t quantile that makes an A/A pair
// REPRODUCED with probability about 5% (materialTail). Without a noise estimate it is
// the floor.
func materialLog(floorLog float64, nz noise) float64 {
	if nz.df == 0 {
		return floorLog
	}
	return math.Max(floorLog, tQuantile(1-materialTail, nz.df)*nz.sigma)
}

// evidence is the interval arithmetic of one summary.
type evidence struct {
	k           int // usable pairs
	est, se     float64
	order       float64
	df          int
	lo, hi      float64 // effect interval (log scale)
	olo, ohi    float64 // order effect interval
	bounded     bool
	confidence  float64
	mde         float64 // log scale
	perColl     int     // usable pairs per collection behind the estimate
	pairsNeeded int     // usable pairs per collection for an MDE at the floor
}

// level returns the confidence level of one interval under cfg: 1 - Alpha/Looks.
func (c Config) level() float64 { return 1 - c.Alpha/float64(c.Looks) }

// newEvidence computes the estimate, its interval, the order effect's and the MDE from k
// usable pairs with mean pair mean m and mean order effect o, given the lane's noise.
// perColl is the number of usable pairs per collection behind them and collections the
// number of collections the noise is pooled over: the pairs-needed estimate asks how many
// pairs each collection needs, since a result must reproduce in each.
func newEvidence(k int, m, o float64, nz noise, cfg Config, floorLog float64, perColl, collections int) evidence {
	ev := evidence{k: k, est: m, order: o, df: nz.df, pairsNeeded: -1, perColl: perColl}
	if k == 0 || nz.df == 0 {
		return ev
	}
	ev.confidence = cfg.level()
	ev.se = nz.sigma / math.Sqrt(2*float64(k))
	q := tQuantile(1-(1-ev.confidence)/2, nz.df)
	ev.lo, ev.hi = m-q*ev.se, m+q*ev.se
	ev.olo, ev.ohi = o-q*ev.se, o+q*ev.se
	ev.bounded = true
	ev.mde = (q + tQuantile(cfg.Power, nz.df)) * ev.se
	ev.pairsNeeded = pairsNeeded(nz.sigma, cfg, floorLog, perColl, collections)
	return ev
}

// pairsNeeded returns about how many usable pairs per collection make the MDE reach the
// floor, for pass deltas of standard deviation sigma spread over the given number of
// collections: the smallest K with (t(1-a/2, df) + t(power, df)) sigma / sqrt(2K) <=
// floor, df = C (K-1) + (C K - 1) for C collections (pooledNoise). It returns 0 when the
// k pairs there are suffice and maxPairsNeeded when the floor is out of reach.
func pairsNeeded(sigma float64, cfg Config, floorLog float64, k, collections int) int {
	if floorLog <= 0 {
		return maxPairsNeeded
	}
	level := cfg.level()
	mdeAt := func(K int) float64 {
		df := collections*(K-1) + collections*K - 1
		return (tQuantile(1-(1-level)/2, df) + tQuantile(cfg.Power, df)) * sigma / math.Sqrt(2*float64(K))
	}
	if sigma == 0 || (k >= 2 && mdeAt(k) <= floorLog) {
		return 0
	}
	// The MDE falls as K grows; search by doubling, then bisect.
	lo, hi := max(k, 1), max(2*k, 2)
	for mdeAt(hi) > floorLog {
		if hi >= maxPairsNeeded {
			return maxPairsNeeded
		}
		lo, hi = hi, min(2*hi, maxPairsNeeded)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if mdeAt(mid) <= floorLog {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// toPct converts a log ratio x to a percent change, exp(x) - 1, capped to stay finite.
// x is ln(cand/base) for lower-is-better lanes; for higher-is-better lanes it is
// ln(base/cand), the change of the reciprocal (the time or cost per unit of the
// throughput), so that negative is better in both and a base that delivers nothing
// against a candidate that does reads -100%.
func toPct(x float64) float64 {
	x = math.Max(-maxLogRatio, math.Min(maxLogRatio, x))
	return (math.Exp(x) - 1) * 100
}

// floorLog converts a floor in percent to the log scale: a change by the factor
// 1 + floor/100 either way.
func floorLog(floorPct float64) float64 { return math.Log1p(floorPct / 100) }

// orderSign returns +1 when the evidence's order-effect interval lies above 0, -1 when
// it lies below, and 0 otherwise.
func (ev evidence) orderSign() int {
	switch {
	case !ev.bounded:
		return 0
	case ev.olo > 0:
		return 1
	case ev.ohi < 0:
		return -1
	}
	return 0
}

// verdictFrom applies the lane rule to one summary's evidence; it returns the verdict
// and its reason. s has its counts filled in. orderRepro reports whether the order
// effect's interval excludes 0 with one sign in every collection of the lane: only a
// reproduced order effect makes a lane order-dependent. For the pooled summary
// (Collection 0), replicated says which way every collection reproduced the effect (-1
// faster, +1 slower, 0 not all the same way): a pooled effect counts as reproduced only
// when each collection reproduced it, since a result must reproduce in each.
func verdictFrom(s LaneSummary, ev evidence, fl float64, orderRepro bool, replicated int) (LaneVerdict, string) {
	n := s.Pairs
	floor := fmtFloor(s.FloorPct)
	pct := func(x float64) string { return fmtDelta(toPct(x)) }
	ci := human.DeltaCI(toPct(ev.est), toPct(ev.lo), toPct(ev.hi))
	switch {
	case s.UsablePairs == 0:
		return LaneInsufficient, fmt.Sprintf("no usable pair: all %d pairs insufficient", n)
	case 2*s.UsablePairs < n:
		return LaneInsufficient, fmt.Sprintf("only %d of %d pairs usable; more than half lack data", s.UsablePairs, n)
	case !ev.bounded:
		return LaneInsufficient, fmt.Sprintf("%s: no noise estimate from one usable pair in all; run at least 2 pairs", countsText(s))
	case ev.hi < 0 && ev.est <= -fl && s.ReproducedSlower == 0 && (s.Collection > 0 || replicated < 0):
		return LaneReproducedFaster, fmt.Sprintf("effect %s excludes 0 and passes the %s floor%s; pairs: %s", ci, floor, inEach(s), countsText(s))
	case ev.lo > 0 && ev.est >= fl && s.ReproducedFaster == 0 && (s.Collection > 0 || replicated > 0):
		return LaneReproducedSlower, fmt.Sprintf("effect %s excludes 0 and passes the %s floor%s; pairs: %s", ci, floor, inEach(s), countsText(s))
	case orderRepro && ev.orderSign() != 0 && math.Abs(ev.order) >= fl:
		return LaneOrderDependent, fmt.Sprintf("order effect %s [%s, %s] excludes 0 in every collection and passes the %s floor: the result depends on which arm runs first; effect %s; pairs: %s",
			pct(ev.order), pct(ev.olo), pct(ev.ohi), floor, ci, countsText(s))
	case ev.lo > -fl && ev.hi < fl:
		return LaneNeutral, fmt.Sprintf("effect %s lies inside the +-%s floor; pairs: %s", ci, floor, countsText(s))
	}
	why := undecidedWhy(ev, fl, s)
	return LaneUndecided, fmt.Sprintf("effect %s: %s; pairs: %s", ci, why, countsText(s))
}

// inEach says, for a pooled summary, that every collection reproduced it.
func inEach(s LaneSummary) string {
	if s.Collection == 0 {
		return ", reproduced in every collection"
	}
	return ""
}

// undecidedWhy says why an undecided lane is undecided and what would decide it.
func undecidedWhy(ev evidence, fl float64, s LaneSummary) string {
	mde := human.Percent(toPct(ev.mde))
	floor := fmtFloor(s.FloorPct)
	more := ""
	switch {
	case ev.pairsNeeded >= maxPairsNeeded:
		more = fmt.Sprintf("; more than %d pairs per collection would be needed", maxPairsNeeded)
	case ev.pairsNeeded > ev.perColl:
		more = fmt.Sprintf("; about %d more pairs per collection would resolve the floor", ev.pairsNeeded-ev.perColl)
	}
	switch {
	case ev.mde > fl && !(ev.lo > 0 || ev.hi < 0):
		return fmt.Sprintf("MDE %s > floor %s%s", mde, floor, more)
	case s.Collection == 0 && (ev.lo > 0 || ev.hi < 0) && math.Abs(ev.est) >= fl:
		return fmt.Sprintf("the pooled interval excludes 0, but not every collection reproduced it (MDE %s)%s", mde, more)
	case ev.mde > fl:
		return fmt.Sprintf("MDE %s > floor %s%s", mde, floor, more)
	case ev.lo > 0 || ev.hi < 0:
		if s.ReproducedFaster > 0 && s.ReproducedSlower > 0 {
			return fmt.Sprintf("the interval excludes 0 but pairs REPRODUCED both ways (MDE %s)", mde)
		}
		return fmt.Sprintf("the interval excludes 0 but the estimate is within the %s floor and the interval reaches past it (MDE %s)", floor, mde)
	}
	return fmt.Sprintf("the interval straddles the %s floor (MDE %s); more pairs would decide", floor, mde)
}

// round1 rounds to one decimal, for thresholds shown with %g.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

// IntervalPct returns the summary's effect interval at two-sided error rate alpha (in
// percent, sign as EstimatePct), derived from its estimate, standard error and degrees
// of freedom; ok is false when the summary has no interval.
func (s LaneSummary) IntervalPct(alpha float64) (lo, hi float64, ok bool) {
	if !s.Bounded || s.DF == 0 || !(alpha > 0 && alpha < 1) {
		return 0, 0, false
	}
	q := tQuantile(1-alpha/2, s.DF)
	return toPct(s.EstimateLog - q*s.SELog), toPct(s.EstimateLog + q*s.SELog), true
}

// UpperBelow reports whether the summary's effect interval at two-sided error rate alpha
// lies below +limitPct: a change worse than limitPct is ruled out.
func (s LaneSummary) UpperBelow(limitPct, alpha float64) bool {
	_, hi, ok := s.logInterval(alpha)
	return ok && hi < floorLog(limitPct)
}

// LowerAbove reports whether the summary's effect interval at two-sided error rate alpha
// lies above +limitPct: a change worse than limitPct is shown.
func (s LaneSummary) LowerAbove(limitPct, alpha float64) bool {
	lo, _, ok := s.logInterval(alpha)
	return ok && lo > floorLog(limitPct)
}

// logInterval returns the effect interval at two-sided error rate alpha on the log scale.
func (s LaneSummary) logInterval(alpha float64) (lo, hi float64, ok bool) {
	if !s.Bounded || s.DF == 0 || !(alpha > 0 && alpha < 1) {
		return 0, 0, false
	}
	q := tQuantile(1-alpha/2, s.DF)
	return s.EstimateLog - q*s.SELog, s.EstimateLog + q*s.SELog, true
}

// Contrast is the difference of two lanes' effects (a minus b) on the log scale, with its
// interval: their pair means come from different processes, so their errors add.
type Contrast struct {
	Est, Lo, Hi float64
	OK          bool
}

// NewContrast returns the contrast a - b at two-sided error rate alpha, with the smaller
// of the two summaries' degrees of freedom.
func NewContrast(a, b LaneSummary, alpha float64) Contrast {
	if !a.Bounded || !b.Bounded || a.DF == 0 || b.DF == 0 || !(alpha > 0 && alpha < 1) {
		return Contrast{Est: a.EstimateLog - b.EstimateLog}
	}
	se := math.Hypot(a.SELog, b.SELog)
	q := tQuantile(1-alpha/2, min(a.DF, b.DF))
	est := a.EstimateLog - b.EstimateLog
	return Contrast{Est: est, Lo: est - q*se, Hi: est + q*se, OK: true}
}

// FloorLog converts a floor in percent to the log scale on which verdicts compare
// effects: ln(1 + floor/100).
func FloorLog(floorPct float64) float64 { return floorLog(floorPct) }

// LogToPct converts a log-scale effect to percent, lower-is-better (exp(x) - 1).
func LogToPct(x float64) float64 { return toPct(x) }

// LookAlpha returns the two-sided error rate of one interval under c: Alpha / Looks.
func (c Config) LookAlpha() float64 { return c.Alpha / float64(max(c.Looks, 1)) }

// PairsFor returns about how many usable pairs in all (over the summary's collections)
// would make the summary's interval at two-sided error rate alpha reach no further than
// halfWidthLog from its estimate, at the noise it measured. It returns -1 without a noise
// estimate and maxPairsNeeded when the width is out of reach.
func (s LaneSummary) PairsFor(halfWidthLog, alpha float64) int {
	if !s.Bounded || s.DF == 0 || s.NoisePct <= 0 {
		return -1
	}
	if halfWidthLog <= 0 {
		return maxPairsNeeded
	}
	sigma := s.NoisePct / 100
	q := tQuantile(1-alpha/2, s.DF)
	k := math.Ceil(q * q * sigma * sigma / (2 * halfWidthLog * halfWidthLog))
	return int(math.Min(k, maxPairsNeeded))
}

// Power is what a protocol can resolve at a measured noise: the MDE of one collection's
// effect with a given number of usable pairs per collection, and about how many pairs per
// collection would bring the MDE to the floor.
type Power struct {
	MDEPct      float64
	PairsNeeded int // maxPairsNeeded (100000) when the floor is out of reach
}

// PowerAt returns the power of a protocol of pairs usable pairs per collection over
// collections collections, for pass deltas whose noise (standard deviation, in percent on
// the log scale: LaneSummary.NoisePct) is noisePct, under cfg (its Alpha, Looks and
// Power; defaults filled in) and an effect floor of floorPct. It needs pairs x collections
// >= 2 (a noise estimate) and returns a zero Power otherwise.
func PowerAt(noisePct, floorPct float64, pairs, collections int, cfg Config) Power {
	cfg, err := cfg.resolve()
	if err != nil || pairs < 1 || collections < 1 || pairs*collections < 2 || noisePct < 0 {
		return Power{}
	}
	sigma := noisePct / 100
	df := collections*(pairs-1) + collections*pairs - 1
	level := cfg.level()
	se := sigma / math.Sqrt(2*float64(pairs))
	mde := (tQuantile(1-(1-level)/2, df) + tQuantile(cfg.Power, df)) * se
	return Power{MDEPct: toPct(mde), PairsNeeded: pairsNeeded(sigma, cfg, floorLog(floorPct), pairs, collections)}
}

// NoiseOf returns the noise of one pass delta (percent, log scale) that a run with the
// given between-process noise and within-run CV (both percent) and n samples per run
// would have: sqrt(2 (between^2 + (pi/2) within^2 / n)), the variance components of
// LaneSummary.fill.
func NoiseOf(betweenPct, withinCVPct float64, n int) float64 {
	b, w := betweenPct/100, withinCVPct/100
	return math.Sqrt(2*(b*b+math.Pi/2*w*w/float64(max(n, 1)))) * 100
}
