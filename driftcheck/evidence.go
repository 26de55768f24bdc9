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

// tQuantileF returns the p-quantile of Student's t distribution with df degrees of
// freedom, which may be fractional (a moderated variance's).
func tQuantileF(p float64, df float64) float64 {
	return stats.InvCDF(stats.TDist{V: df})(p)
}

// materialTail is the upper tail 1 - F(q) of the t quantile q that scales a lane's noise
// into the material threshold of a pass. An A/A pair reads REPRODUCED when both its
// deltas pass the threshold with one sign, which for independent normal deltas happens
// with probability 2(1 - F(q))^2; a tail of sqrt(0.04/2) makes that 4%, a margin under
// the 5% the pair labels promise.
var materialTail = math.Sqrt(0.04 / 2)

// pairStat is one usable pass-pair on the log scale.
type pairStat struct {
	k    int     // pair index within its collection, 1-based (the round it belongs to)
	m, o float64 // pair mean and order effect, less the fitted cost of the runs' places
	// up and down count the pair's censored passes bounded below and above (censored.go).
	up, down int
	// order is the order effect as measured, (d_fwd - d_rev)/2, which the lane reports.
	order float64
}

// noise is a lane's measured noise: its own, and moderated with the other lanes of its
// group.
type noise struct {
	sigma float64 // standard deviation of one pass delta (log scale), moderated
	df    float64 // degrees of freedom of sigma; 0 means no estimate
	own   int     // the lane's own degrees of freedom
	ownSD float64 // the lane's own estimate
	lent  float64 // the degrees of freedom the host calibration lent (moderate)
	// adjVar is the variance of the mean correction for the runs' places and
	// predecessors (carryover.go), which every pair of the lane shares.
	adjVar float64
}

// residual estimates the variance of one pass delta from the usable pairs with index at
// most upto of each collection. With d_fwd = theta + omega + e1 and d_rev = theta - omega
// + e2, the pair mean m = theta + (e1+e2)/2 and the order effect o = omega + (e1-e2)/2 are
// independent with variance sigma^2/2 each. The pair means vary around their collection's
// mean (the effect may differ between collections); the order effects around one mean
// over all collections (the order effect of one harness on one host), so
//
//	sigma^2 = 2 [sum_c sum_k (m - mean_c m)^2 + sum_all (o - mean o)^2] / df,  df = sum_c (K_c - 1) + (K - 1)
//
// where K_c counts collection c's usable pairs and K all of them. An order effect that
// changes between collections only inflates the estimate.
func residual(byColl [][]pairStat, upto int) (s2 float64, df int) {
	var ssM, ssO float64
	var dofM, k int
	var all []pairStat
	for _, ps := range byColl {
		ps = truncated(ps, upto)
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
		return 0, 0
	}
	_, mo := meanPairs(all)
	for _, p := range all {
		ssO += (p.o - mo) * (p.o - mo)
	}
	df = dofM + k - 1
	return 2 * (ssM + ssO) / float64(df), df
}

// OwnDF is the degrees of freedom of a lane's own noise estimate (residual) after the
// given rounds (pairs per collection, none lost) in the given collections: one per pair
// mean beyond the first in each collection, one per order effect beyond the first.
// After round 1 a lane has collections - 1 of its own (1 with two collections), so its
// noise is the prior the lanes share until a later round.
func OwnDF(collections, rounds int) int {
	if collections < 1 || rounds < 1 || collections*rounds < 2 {
		return 0
	}
	return collections*(rounds-1) + collections*rounds - 1
}

// truncated returns the pairs of ps with index at most upto (all of them for upto 0).
func truncated(ps []pairStat, upto int) []pairStat {
	if upto <= 0 {
		return ps
	}
	n := 0
	for n < len(ps) && ps[n].k <= upto {
		n++
	}
	return ps[:n]
}

// orderEffect returns the mean measured order effect of non-empty ps.
func orderEffect(ps []pairStat) float64 {
	o := 0.0
	for _, p := range ps {
		o += p.order
	}
	return o / float64(len(ps))
}

// meanPairs returns the mean pair mean and mean order effect of non-empty ps.
func meanPairs(ps []pairStat) (m, o float64) {
	for _, p := range ps {
		m += p.m
		o += p.o
	}
	return m / float64(len(ps)), o / float64(len(ps))
}

// hodgesLehmann returns the Hodges-Lehmann estimate of the pair means of ps: the median of
// their Walsh averages (m_i + m_j) / 2, i <= j, robust to a few pairs far from the rest
// (a contaminated process that no rule set aside); ok is false without a pair measured
// exactly (a censored pair's mean is only a bound and is left out).
func hodgesLehmann(ps []pairStat) (hl float64, ok bool) {
	var ms []float64
	for _, p := range ps {
		if p.up == 0 && p.down == 0 {
			ms = append(ms, p.m)
		}
	}
	if len(ms) == 0 {
		return 0, false
	}
	walsh := make([]float64, 0, len(ms)*(len(ms)+1)/2)
	for i := range ms {
		for j := i; j < len(ms); j++ {
			walsh = append(walsh, (ms[i]+ms[j])/2)
		}
	}
	return Median(walsh), true
}

// materialLog returns the material threshold of one pass delta on the log scale: the
// larger of the floor and q x sigma, where q is the t quantile that makes an A/A pair
// REPRODUCED with probability about 5% (materialTail). Without a noise estimate it is
// the floor.
func materialLog(floorLog float64, nz noise) float64 {
	if nz.df == 0 {
		return floorLog
	}
	return math.Max(floorLog, tQuantileF(1-materialTail, nz.df)*nz.sigma)
}

// evidence is the interval arithmetic of one summary.
type evidence struct {
	k        int // usable pairs behind the estimate
	est, se  float64
	order    float64
	df       float64
	crit     float64 // critical value of the interval (t scale)
	tail     float64 // its nominal one-sided error
	lo, hi   float64 // effect interval (log scale)
	olo, ohi float64 // order effect interval
	bounded  bool
	mde      float64 // log scale
	mdeMax   float64 // at the rule's last look
	perColl  int     // usable pairs per collection behind the estimate
	// pairsNeeded is about how many usable pairs per collection would decide the lane if
	// its effect were its estimate (-1 without a noise estimate).
	pairsNeeded int
}

// power is the decision rule's power for one lane: what it can reproduce and show
// neutral, by the normal approximation of its tests, at a noise sigma (one pass delta,
// log scale) with df degrees of freedom besides the pairs' own.
type power struct {
	sigma   float64
	priorDF float64
	// collSigma, where a lane's collections measure with different noise
	// (noiseByCollection), is the noisiest collection's noise, which the replication tests'
	// power takes, and collPriorDF the fewest degrees of freedom a collection's prior lends
	// (each collection's test then has those and its own pairs'); 0 where one noise serves
	// every collection.
	collSigma, collPriorDF float64
	design                 *Design
	floor                  float64 // log scale
	power                  float64
	crits                  map[int][2]float64 // critical values by pairs per collection (memo)
}

// critAt returns the critical values (t scale) of the replication test and the pooled
// tests at the look for pairs pairs per collection.
func (p *power) critAt(pairs int) (coll, pool float64) {
	if c, ok := p.crits[pairs]; ok {
		return c[0], c[1]
	}
	if p.crits == nil {
		p.crits = map[int][2]float64{}
	}
	coll, pool = p.dfAt(pairs)
	c := [2]float64{tCritical(p.design.CollTail(pairs), coll), tCritical(p.design.PoolTail(pairs), pool)}
	p.crits[pairs] = c
	return c[0], c[1]
}

// dfAt returns the degrees of freedom of the noise of the replication tests and of the
// pooled tests with pairs usable pairs per collection: one estimate's for both, or, where
// each collection has its own noise, a collection's for both (the pooled interval's
// Satterthwaite degrees of freedom lie between the fewest of a collection and their sum:
// the lower end keeps the power a bound the rule reaches).
func (p *power) dfAt(pairs int) (coll, pool float64) {
	if p.collSigma > 0 {
		coll = p.collPriorDF + float64(2*pairs-2)
		return coll, coll
	}
	c := p.design.Collections
	pool = p.priorDF + float64(2*c*pairs-c-1)
	return pool, pool
}

// reproduce returns the probability that the rule reproduces an effect theta > 0 with pairs
// pairs per collection: every collection's replication test and the pooled estimate past
// the floor (a lower bound: the events are positively correlated).
func (p *power) reproduce(theta float64, pairs int) float64 {
	c := float64(p.design.Collections)
	sc := p.sigma / math.Sqrt(2*float64(pairs))
	sp := sc / math.Sqrt(c)
	if p.collSigma > 0 {
		sc = p.collSigma / math.Sqrt(2*float64(pairs))
	}
	if sc == 0 {
		if theta >= p.floor {
			return 1
		}
		return 0
	}
	crit, _ := p.critAt(pairs)
	return math.Pow(phi(theta/sc-crit), c) * phi((theta-p.floor)/sp)
}

// neutral returns the probability that the rule shows an effect theta neutral with pairs
// pairs per collection: the pooled interval inside +-floor.
func (p *power) neutral(theta float64, pairs int) float64 {
	c := float64(p.design.Collections)
	sp := p.sigma / math.Sqrt(2*float64(pairs)*c)
	if sp == 0 {
		if math.Abs(theta) < p.floor {
			return 1
		}
		return 0
	}
	_, crit := p.critAt(pairs)
	return math.Max(0, phi((p.floor-theta)/sp-crit)-phi((-p.floor-theta)/sp+crit))
}

// mde returns the smallest effect the rule reproduces with probability p.power at pairs
// pairs per collection.
func (p *power) mde(pairs int) float64 {
	if pairs < 1 {
		return maxLogRatio
	}
	lo, hi := 0.0, maxLogRatio
	if p.reproduce(hi, pairs) < p.power {
		return maxLogRatio
	}
	for range 60 {
		mid := (lo + hi) / 2
		if p.reproduce(mid, pairs) >= p.power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// decides returns the probability that the rule settles a lane whose effect is theta,
// either way, with pairs pairs per collection.
func (p *power) decides(theta float64, pairs int) float64 {
	return p.reproduce(math.Abs(theta), pairs) + p.neutral(theta, pairs)
}

// pairsNeeded returns about how many usable pairs per collection decide a lane whose effect
// is theta with probability p.power: the smallest K >= have that does, or maxPairsNeeded
// when none up to it does (an effect near the floor needs ever more pairs).
func (p *power) pairsNeeded(theta float64, have int) int {
	have = max(have, 1)
	if p.decides(theta, have) >= p.power {
		return have
	}
	lo, hi := have, 2*have
	for p.decides(theta, hi) < p.power {
		if hi >= maxPairsNeeded {
			return maxPairsNeeded
		}
		lo, hi = hi, min(2*hi, maxPairsNeeded)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.decides(theta, mid) >= p.power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// minBoundedDF is the fewest degrees of freedom of a lane's noise estimate that give it an
// interval: below one (a lane with a single usable pair, its noise drawn only from a weak
// prior of the run's other lanes) a t interval spans from -100% to factors of a million,
// which says nothing; the lane says how many pairs it needs instead.
const minBoundedDF = 1.0

// newEvidence computes the estimate, its interval at the nominal one-sided error tail, the
// order effect's interval and the rule's power from k usable pairs with mean pair mean m and
// mean order effect o, given the lane's noise. round is the look the lane is judged at
// (pairs per collection).
func newEvidence(k int, m, o float64, nz noise, pw power, tail float64, round int) evidence {
	ev := evidence{k: k, est: m, order: o, df: nz.df, pairsNeeded: -1, perColl: round, tail: tail}
	if k == 0 || nz.df < minBoundedDF {
		return ev
	}
	ev.se = math.Sqrt(nz.sigma*nz.sigma/(2*float64(k)) + nz.adjVar)
	ev.crit = tCritical(tail, nz.df)
	ev.lo, ev.hi = m-ev.crit*ev.se, m+ev.crit*ev.se
	ev.olo, ev.ohi = o-ev.crit*ev.se, o+ev.crit*ev.se
	ev.bounded = true
	pw.sigma, pw.crits = nz.sigma, nil
	ev.mde = pw.mde(round)
	if pw.design.MaxPairs > 0 {
		ev.mdeMax = pw.mde(pw.design.MaxPairs)
	} else {
		ev.mdeMax = ev.mde
	}
	ev.pairsNeeded = pw.pairsNeeded(m, round)
	return ev
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

// orderShown reports whether the evidence's order-effect interval excludes 0.
func (ev evidence) orderShown() bool {
	return ev.bounded && (ev.olo > 0 || ev.ohi < 0)
}

// verdictFrom applies the lane rule to one summary's evidence; it returns the verdict
// and its reason. s has its counts filled in. For a collection's summary (Collection > 0)
// the rule is the collection's replication test: its interval at the collection's level
// excludes 0. For the pooled summary (Collection 0), replicated says which way every
// collection reproduced the effect (-1 faster, +1 slower, 0 not all the same way): the
// effect counts as reproduced only when each collection reproduced it and the pooled
// estimate passes the floor.
func verdictFrom(s LaneSummary, ev evidence, fl float64, replicated int) (LaneVerdict, string) {
	n := s.Pairs
	floor := fmtFloor(s.FloorPct)
	pct := func(x float64) string { return fmtDelta(toPct(x)) }
	ci := human.DeltaCI(toPct(ev.est), toPct(ev.lo), toPct(ev.hi))
	pooled := s.Collection == 0
	switch {
	case s.UsablePairs == 0:
		return LaneInsufficient, fmt.Sprintf("no usable pair: all %d pairs insufficient", n)
	case 2*s.UsablePairs < n:
		return LaneInsufficient, fmt.Sprintf("only %d of %d pairs usable; more than half lack data", s.UsablePairs, n)
	case !ev.bounded:
		return LaneInsufficient, fmt.Sprintf("%s: no noise estimate from one usable pair and no other lane to borrow from; run at least 2 pairs", countsText(s))
	case !pooled && ev.hi < 0:
		return LaneReproducedFaster, fmt.Sprintf("effect %s excludes 0 at this collection's replication level; pairs: %s", ci, countsText(s))
	case !pooled && ev.lo > 0:
		return LaneReproducedSlower, fmt.Sprintf("effect %s excludes 0 at this collection's replication level; pairs: %s", ci, countsText(s))
	case pooled && replicated < 0 && ev.est <= -fl:
		return LaneReproducedFaster, fmt.Sprintf("effect %s: reproduced faster in every collection, the estimate past the %s floor; pairs: %s", ci, floor, countsText(s))
	case pooled && replicated > 0 && ev.est >= fl:
		return LaneReproducedSlower, fmt.Sprintf("effect %s: reproduced slower in every collection, the estimate past the %s floor; pairs: %s", ci, floor, countsText(s))
	case pooled && ev.lo > -fl && ev.hi < fl:
		return LaneNeutral, fmt.Sprintf("effect %s lies inside the +-%s floor; pairs: %s", ci, floor, countsText(s))
	case pooled && ev.orderShown() && math.Abs(ev.order) >= fl && math.Abs(ev.order) > math.Abs(ev.est):
		return LaneOrderDependent, fmt.Sprintf("order effect %s [%s, %s] excludes 0, passes the %s floor and outweighs the effect %s: the sign depends on which arm runs first; pairs: %s",
			pct(ev.order), pct(ev.olo), pct(ev.ohi), floor, ci, countsText(s))
	}
	if !pooled {
		return LaneUndecided, fmt.Sprintf("effect %s includes 0 at this collection's replication level; pairs: %s", ci, countsText(s))
	}
	return LaneUndecided, fmt.Sprintf("effect %s: %s; pairs: %s", ci, undecidedWhy(ev, fl, s, replicated), countsText(s))
}

// undecidedWhy says why an undecided pooled lane is undecided, what it rules out and what
// would decide it.
func undecidedWhy(ev evidence, fl float64, s LaneSummary, replicated int) string {
	mde := human.MDE(toPct(ev.mde))
	floor := fmtFloor(s.FloorPct)
	more := ""
	switch {
	case ev.pairsNeeded >= maxPairsNeeded:
		more = "; an effect this close to the floor cannot be decided in any practical number of pairs"
	case ev.pairsNeeded > ev.perColl:
		more = fmt.Sprintf("; about %d more pairs per collection would decide it if the estimate holds", ev.pairsNeeded-ev.perColl)
	}
	ruled := ruledOut(s)
	switch {
	case replicated != 0:
		return fmt.Sprintf("reproduced in every collection, but the estimate is within the %s floor and its interval reaches past it (%s, MDE %s)%s", floor, ruled, mde, more)
	case ev.lo > 0 || ev.hi < 0:
		return fmt.Sprintf("the pooled interval excludes 0, but not every collection reproduced it (%s, MDE %s)%s", ruled, mde, more)
	}
	return fmt.Sprintf("%s; MDE %s at the %s floor%s", ruled, mde, floor, more)
}

// ruledOut states what a summary's interval rules out: "no regression beyond +2.4%, no
// improvement beyond -1.8%".
func ruledOut(s LaneSummary) string {
	switch {
	case !s.Bounded || s.CensoredSlower > 0 && s.CensoredFaster > 0:
		return "nothing ruled out yet"
	case s.CensoredSlower > 0:
		return fmt.Sprintf("no improvement beyond %s; no bound on a regression, since %s", human.Delta(s.NoBetterThanPct), censoredText(s))
	case s.CensoredFaster > 0:
		return fmt.Sprintf("no regression beyond %s; no bound on an improvement, since %s", human.Delta(s.NoWorseThanPct), censoredText(s))
	case !human.Bounded(s.NoBetterThanPct, s.NoWorseThanPct):
		// An interval wider than a factor human.SpanLimit (two pairs of a noisy lane) rules
		// out nothing a reader would act on ("no regression beyond > 1000x slower").
		return "nothing ruled out yet"
	}
	return fmt.Sprintf("no regression beyond %s, no improvement beyond %s", human.Delta(s.NoWorseThanPct), human.Delta(s.NoBetterThanPct))
}

// censoredCounts counts the censored passes of pairs bounded below and above.
func censoredCounts(ps []pairStat) (up, down int) {
	for _, p := range ps {
		up, down = up+p.up, down+p.down
	}
	return up, down
}

// RuledOut states what the summary rules out, in words: "no regression beyond +2.4%, no
// improvement beyond -1.8%" (from its interval), or "nothing ruled out yet".
func (s LaneSummary) RuledOut() string { return ruledOut(s) }

// round1 rounds to one decimal, for thresholds shown with %g.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

// UpperBelow reports whether the summary's effect interval at two-sided error rate alpha
// lies below +limitPct: a change worse than limitPct is ruled out. An alpha of 0 takes the
// summary's own level (its look's share of the error). A summary whose candidate timed out
// (CensoredSlower) rules out no regression.
func (s LaneSummary) UpperBelow(limitPct, alpha float64) bool {
	_, hi, ok := s.logInterval(alpha)
	return ok && s.CensoredSlower == 0 && hi < floorLog(limitPct)
}

// LowerAbove reports whether the summary's effect interval at two-sided error rate alpha
// lies above +limitPct: a change worse than limitPct is shown. An alpha of 0 takes the
// summary's own level. A summary whose base timed out (CensoredFaster) shows no regression.
func (s LaneSummary) LowerAbove(limitPct, alpha float64) bool {
	lo, _, ok := s.logInterval(alpha)
	return ok && s.CensoredFaster == 0 && lo > floorLog(limitPct)
}

// logInterval returns the effect interval at two-sided error rate alpha on the log scale
// (the summary's own interval for alpha 0).
func (s LaneSummary) logInterval(alpha float64) (lo, hi float64, ok bool) {
	if !s.Bounded || s.DFUsed <= 0 {
		return 0, 0, false
	}
	q := s.Crit
	if alpha != 0 {
		if !(alpha > 0 && alpha < 1) {
			return 0, 0, false
		}
		q = tCritical(alpha/2, s.DFUsed)
	}
	return s.EstimateLog - q*s.SELog, s.EstimateLog + q*s.SELog, true
}

// Contrast is the difference of two lanes' effects (a minus b) on the log scale, with its
// interval: their pair means come from different processes, so their errors add.
type Contrast struct {
	Est, Lo, Hi float64
	OK          bool
}

// NewContrast returns the contrast a - b at two-sided error rate alpha (0: the larger of
// the two summaries' own levels' critical values), with the smaller of the two summaries'
// degrees of freedom.
func NewContrast(a, b LaneSummary, alpha float64) Contrast {
	if !a.Bounded || !b.Bounded || a.DFUsed <= 0 || b.DFUsed <= 0 || alpha < 0 || alpha >= 1 {
		return Contrast{Est: a.EstimateLog - b.EstimateLog}
	}
	se := math.Hypot(a.SELog, b.SELog)
	q := math.Max(a.Crit, b.Crit)
	if alpha > 0 {
		q = tCritical(alpha/2, math.Min(a.DFUsed, b.DFUsed))
	}
	est := a.EstimateLog - b.EstimateLog
	return Contrast{Est: est, Lo: est - q*se, Hi: est + q*se, OK: true}
}

// TCritical returns the critical value of a one-sided t test with df degrees of freedom at
// nominal tail p (the z quantile for df beyond a million or 0).
func TCritical(p, df float64) float64 { return tCritical(p, df) }

// FloorLog converts a floor in percent to the log scale on which verdicts compare
// effects: ln(1 + floor/100).
func FloorLog(floorPct float64) float64 { return floorLog(floorPct) }

// LogToPct converts a log-scale effect to percent, lower-is-better (exp(x) - 1).
func LogToPct(x float64) float64 { return toPct(x) }

// Power is what a protocol can resolve at a measured noise under the decision rule: the
// MDE (the smallest effect it reproduces with the configured power), and about how many
// pairs per collection it needs to decide both an unchanged lane (shown neutral) and a
// lane changed by twice the floor (reproduced), each with the configured power.
type Power struct {
	MDEPct      float64
	PairsNeeded int // maxPairsNeeded (100000) when the floor is out of reach
}

// PowerAt returns the power of a protocol of pairs usable pairs per collection over
// collections collections, for pass deltas whose noise (standard deviation, in percent on
// the log scale: LaneSummary.NoisePct) is noisePct, under cfg (its Alpha, Power and
// sequential rule; defaults filled in) and an effect floor of floorPct. It needs pairs x
// collections >= 2 (a noise estimate) and returns a zero Power otherwise.
func PowerAt(noisePct, floorPct float64, pairs, collections int, cfg Config) Power {
	cfg, err := cfg.resolve()
	if err != nil || pairs < 1 || collections < 1 || pairs*collections < 2 || noisePct < 0 {
		return Power{}
	}
	d := cfg.Design
	if d == nil || d.Collections != collections {
		if d, err = NewDesign(cfg, collections); err != nil {
			return Power{}
		}
	}
	pw := &power{sigma: noisePct / 100, design: d, floor: floorLog(floorPct), power: cfg.Power}
	need := func(k int) bool { return pw.neutral(0, k) >= pw.power && pw.reproduce(2*pw.floor, k) >= pw.power }
	needed := maxPairsNeeded
	for k := 1; k <= maxPairsNeeded; k *= 2 {
		if need(k) {
			lo, hi := k/2, k
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if need(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			needed = max(hi, 1)
			break
		}
	}
	if needed <= pairs {
		needed = 0
	}
	return Power{MDEPct: toPct(pw.mde(pairs)), PairsNeeded: needed}
}

// NoiseOf returns the noise of one pass delta (percent, log scale) that a run with the
// given between-process noise and within-run CV (both percent) and n samples per run
// would have: sqrt(2 (between^2 + (pi/2) within^2 / n)), the variance components of
// LaneSummary.fill.
func NoiseOf(betweenPct, withinCVPct float64, n int) float64 {
	b, w := betweenPct/100, withinCVPct/100
	return math.Sqrt(2*(b*b+math.Pi/2*w*w/float64(max(n, 1)))) * 100
}
