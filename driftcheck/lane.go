package driftcheck

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/flipbench/flipbench/internal/human"
)

// collPairs is one collection of one lane and candidate: its passes, the measured pairs
// (with the pass-pair index into passes), and the usable pairs' statistics.
type collPairs struct {
	passes []PassDelta
	pairs  []Pair
	stats  []pairStat
	kept   []int // pair index k (0-based) of each measured pair, set-aside ones included
	aside  []int // pair indexes (0-based) set aside
	// outliers are the set-aside pairs whose statistics lay far outside the lane's others.
	outliers []int
	// adj is each usable pair's carryover correction (log scale), by pair index k.
	adj map[int]float64
}

// laneData is one lane of one candidate, prepared for the analysis: its collections'
// passes and pairs, and its own noise.
type laneData struct {
	lane     Lane
	l, a     int // lane and arm index
	cand     string
	floorPct float64
	fl       float64
	colls    []collPairs
	byColl   [][]pairStat
	// round is the look the lane is judged at: the highest pair index it measured.
	round int
	// adjVar is the variance of the lane's mean carryover correction (noise.adjVar), and
	// confounded says the arm's contrast cannot yet be told from its places' cost.
	adjVar     float64
	confounded bool
	carryNote  string
	// layout is the lane's own analysis of variance over the layout indices, and
	// layoutSharePct the share of the pair means' variance the layouts explain once it is
	// pooled with the other lanes' (layout.go, poolLayouts); 0 with one layout.
	layout         layoutEstimate
	layoutSharePct float64
}

// prepareLane computes the pass deltas of lane l for the candidate with arm index a in
// every collection, and groups them into measured and usable pairs. A pair with a run set
// aside (on the base or this candidate) is measured but not usable.
func prepareLane(in Input, cfg Config, runs []run, lay layout, l, a int, lane Lane, cand string, fit *carryFit, co Carryover) *laneData {
	ld := &laneData{lane: lane, l: l, a: a, cand: cand, floorPct: lane.floorPct(cfg)}
	ld.fl = floorLog(ld.floorPct)
	ld.colls = make([]collPairs, in.Collections)
	ld.byColl = make([][]pairStat, in.Collections)
	if fit != nil && fit.confounded != nil {
		ld.confounded, ld.carryNote = fit.confounded[a], co.Reason
	}
	sign := 1.0 // the corrections are of ln(cand/base); higher-is-better deltas are ln(base/cand)
	if lane.HigherIsBetter {
		sign = -1
	}
	var coefs []float64
	if fit != nil && fit.comps != nil {
		coefs = make([]float64, len(fit.comps[0].v))
	}
	used := 0
	for c := range ld.colls {
		cp := &ld.colls[c]
		cp.passes = make([]PassDelta, in.Passes)
		for p := range cp.passes {
			cp.passes[p] = passDelta(runs[lay.at(c, p, l, 0)], runs[lay.at(c, p, l, a)], lane, in.Base, cand, c+1, p+1, cfg)
		}
	}
	ext := measuredExtremes(ld.colls, runs, lay, l, a)
	for c := range ld.colls {
		cp := &ld.colls[c]
		for k := 0; k < in.Passes/2; k++ {
			if !measured(runs, lay, c, 2*k, l, a) && !measured(runs, lay, c, 2*k+1, l, a) {
				continue // a pair this lane did not run (yet)
			}
			cp.kept = append(cp.kept, k)
			ld.round = max(ld.round, k+1)
			aside := false
			for _, p := range []int{2 * k, 2*k + 1} {
				aside = aside || runs[lay.at(c, p, l, 0)].setAside || runs[lay.at(c, p, l, a)].setAside
			}
			if aside {
				cp.aside = append(cp.aside, k)
				continue
			}
			f, r := 2*k, 2*k+1 // the forward and the reverse pass
			if !runs[lay.at(c, f, l, 0)].forward {
				f, r = r, f
			}
			pf, pr := cp.passes[f], cp.passes[r]
			if pf.Usable && pr.Usable {
				corr := func(p int) float64 {
					return sign * (fit.cost(runs[lay.at(c, p, l, a)]) - fit.cost(runs[lay.at(c, p, l, 0)]))
				}
				cf, cr := corr(f), corr(r)
				xf, xr := ext.value(pf), ext.value(pr)
				order := (xf - xr) / 2
				if cp.adj == nil {
					cp.adj = map[int]float64{}
				}
				cp.adj[k] = (cf + cr) / 2
				st := pairStat{k: k + 1, m: (xf+xr)/2 - (cf+cr)/2, o: order - (cf-cr)/2, order: order}
				for _, pd := range []PassDelta{pf, pr} {
					switch pd.Bound {
					case BoundAtLeast:
						st.up++
					case BoundAtMost:
						st.down++
					}
				}
				cp.stats = append(cp.stats, st)
				if coefs != nil {
					for _, p := range []int{f, r} {
						fit.coef(runs[lay.at(c, p, l, a)], coefs, sign/2)
						fit.coef(runs[lay.at(c, p, l, 0)], coefs, -sign/2)
					}
					used++
				}
			}
		}
		ld.byColl[c] = cp.stats
	}
	if used > 0 {
		for j := range coefs {
			coefs[j] /= float64(used)
		}
		ld.adjVar = fit.variance(coefs)
	}
	ld.rejectOutliers()
	ld.layout.varL, ld.layout.varW, ld.layout.groups, ld.layout.n = layoutComponent(ld.byColl, in.Layouts)
	return ld
}

// measuredExtremes returns the extremes of the log ratios of lane l's measured passes with
// arm a: usable, uncensored, in a measured pair with no run set aside.
func measuredExtremes(colls []collPairs, runs []run, lay layout, l, a int) extremes {
	var e extremes
	for c, cp := range colls {
		for p, pd := range cp.passes {
			k := p / 2
			if !pd.Usable || pd.Bound != "" || !measured(runs, lay, c, 2*k, l, a) && !measured(runs, lay, c, 2*k+1, l, a) {
				continue
			}
			aside := false
			for _, q := range []int{2 * k, 2*k + 1} {
				aside = aside || runs[lay.at(c, q, l, 0)].setAside || runs[lay.at(c, q, l, a)].setAside
			}
			if !aside {
				e.add(pd.LogRatio)
			}
		}
	}
	return e
}

// outlierReach is how many robust standard deviations a pair's residual must lie from the
// lane's pairs to be set aside as an outlier.
const outlierReach = 5

// rejectOutliers sets aside the usable pairs whose pair mean or order effect lies far
// outside the lane's other pairs (the Hampel identifier): a residual beyond outlierReach
// x 1.4826 x the median absolute residual, the pair means centred on their collection's
// median and the order effects on the lane's median. One disturbed process shifts both of
// its pair's statistics by half its own shift, so a process slowed twofold stands out by
// far while the noise of a quiet pair does not. It needs four usable pairs, sets aside at
// most one pair in five (the farthest first), and keeps every pair of a lane whose
// residuals are all 0 (identical counts).
func (ld *laneData) rejectOutliers() {
	var ord []float64
	centre := make([]float64, len(ld.byColl))
	total := 0
	for c, ps := range ld.byColl {
		ms := make([]float64, len(ps))
		for i, p := range ps {
			ms[i] = p.m
			ord = append(ord, p.o)
		}
		centre[c] = Median(ms)
		total += len(ps)
	}
	if total < 4 {
		return
	}
	oc := Median(ord)
	type far struct {
		c, i int
		by   float64
	}
	var res []float64
	var all []far
	for c, ps := range ld.byColl {
		for i, p := range ps {
			rm, ro := math.Abs(p.m-centre[c]), math.Abs(p.o-oc)
			if rm > 0 {
				res = append(res, rm)
			}
			if ro > 0 {
				res = append(res, ro)
			}
			if p.up+p.down == 0 { // a censored pair's value is a bound, clamped to the lane's range
				all = append(all, far{c, i, math.Max(rm, ro)})
			}
		}
	}
	scale := madScale * Median(res)
	if scale == 0 {
		return
	}
	slices.SortFunc(all, func(a, b far) int { return cmpFloat(b.by, a.by) })
	drop := map[[2]int]bool{}
	for _, f := range all[:min(len(all), max(1, total/5))] {
		if f.by > outlierReach*scale {
			drop[[2]int{f.c, f.i}] = true
		}
	}
	for c := range ld.byColl {
		cp := &ld.colls[c]
		kept := cp.stats[:0:0]
		for i, p := range cp.stats {
			if drop[[2]int{c, i}] {
				cp.aside = append(cp.aside, p.k-1)
				cp.outliers = append(cp.outliers, p.k-1)
				continue
			}
			kept = append(kept, p)
		}
		cp.stats = kept
		ld.byColl[c] = kept
	}
}

// cmpFloat compares two floats for sorting.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// setAside finds the contaminated runs of the input and marks them: a run whose robust CV
// is above the clean-CV threshold and at least CVAsymmetry times the typical CV of its lane
// and arm (the median over the arm's runs of the lane, or over all the lane's runs while
// the arm has fewer than four). A neighbour's burst makes one process noisier than its
// peers, while a real effect that adds spread adds it to every run of the arm, so the
// typical CV of the arm follows it. The choice depends only on the spread, never on the
// delta, so it cannot favour either direction.
func setAside(in Input, cfg Config, runs []run, lay layout) []SetAside {
	arms := append([]string{in.Base}, in.Candidates...)
	out := []SetAside{}
	for l, lane := range in.Lanes {
		var laneCVs []float64
		armCVs := make([][]float64, lay.arms)
		for c := range lay.collections {
			for p := range lay.passes {
				for a := range lay.arms {
					if r := runs[lay.at(c, p, l, a)]; cvUsable(r) {
						laneCVs = append(laneCVs, r.cvPct)
						armCVs[a] = append(armCVs[a], r.cvPct)
					}
				}
			}
		}
		typicals := make([]float64, lay.arms) // each arm's typical CV, or the lane's
		laneTypical := Median(laneCVs)
		for a := range lay.arms {
			typicals[a] = laneTypical
			if len(armCVs[a]) >= 4 {
				typicals[a] = Median(armCVs[a])
			}
		}
		for c := range lay.collections {
			for p := range lay.passes {
				for a := range lay.arms {
					r := &runs[lay.at(c, p, l, a)]
					if r.present && r.desched != "" {
						r.setAside = true
						out = append(out, SetAside{Lane: lane.Name, Arm: arms[a], Collection: c + 1, Pass: p + 1, CVPct: r.cvPct, TypicalCVPct: typicals[a],
							Reason: "descheduled: " + r.desched})
						continue
					}
					if !cvUsable(*r) {
						continue
					}
					typical := typicals[a]
					if r.cvPct > cfg.CleanCVPct && r.cvPct >= cfg.CVAsymmetry*typical {
						r.setAside = true
						out = append(out, SetAside{Lane: lane.Name, Arm: arms[a], Collection: c + 1, Pass: p + 1, CVPct: r.cvPct, TypicalCVPct: typical,
							Reason: fmt.Sprintf("within-run CV %s is %s the typical %s of %s's runs of %s, beyond the %s clean-CV threshold: a disturbed process",
								fmtCV(r.cvPct), ratioText(r.cvPct, typical), fmtCV(typical), arms[a], lane.Name, fmtCV(cfg.CleanCVPct))})
					}
				}
			}
		}
	}
	return out
}

// cvUsable reports whether a run has a robust CV.
func cvUsable(r run) bool { return r.present && len(r.values) >= minSamples && r.median != 0 }

// ratioText says how many times a is b: "6.2x"; "far above" when b is 0.
func ratioText(a, b float64) string {
	if b == 0 {
		return "far above"
	}
	return fmt.Sprintf("%.1fx", a/b)
}

// fitPriors fits the noise prior of every noise group at every look some lane of it is
// judged at: from every lane of the group as its data stood at that look (the runs of
// later rounds left out, runs set aside and pairs rejected as they were then). A lane
// that stopped at round r is then judged exactly as at the look where it stopped, however
// long the other lanes ran on.
func fitPriors(in Input, cfg Config, runsAt func(round int) []run, lay layout, lanes []*laneData, rep *Report) map[string]map[int]priors {
	out := map[string]map[int]priors{}
	last := 0
	for _, ld := range lanes {
		last = max(last, ld.round)
	}
	atRound := map[int][]*laneData{last: lanes}
	for _, ld := range lanes {
		g := ld.lane.Group
		if out[g] == nil {
			out[g] = map[int]priors{}
		}
		if _, done := out[g][ld.round]; done || ld.round == 0 {
			continue
		}
		then, ok := atRound[ld.round]
		if !ok {
			then = lanesAt(in, cfg, runsAt(ld.round), lay)
			atRound[ld.round] = then
		}
		var vs, ds []float64
		cvs, cds := make([][]float64, lay.collections), make([][]float64, lay.collections)
		for _, o := range then {
			if o.lane.Group != g {
				continue
			}
			s2, df := residual(o.byColl, 0)
			vs, ds = append(vs, s2), append(ds, float64(df))
			s2c, dfc := residualByCollection(o.byColl)
			for c := range s2c {
				cvs[c], cds[c] = append(cvs[c], s2c[c]), append(cds[c], float64(dfc[c]))
			}
		}
		ps := priors{all: fitPrior(vs, ds)}
		if p := ps.all; p.d0 > 0 {
			rep.Priors = append(rep.Priors, Prior{Group: g, Round: ld.round, Lanes: len(vs), S0Pct: math.Sqrt(p.s0sq) * 100, D0: p.d0})
		}
		if lay.collections > 1 {
			for c := range cvs {
				p := fitPrior(cvs[c], cds[c])
				ps.byColl = append(ps.byColl, p)
				if p.d0 > 0 {
					rep.Priors = append(rep.Priors, Prior{Group: g, Round: ld.round, Collection: c + 1, Lanes: len(cvs[c]), S0Pct: math.Sqrt(p.s0sq) * 100, D0: p.d0})
				}
			}
		}
		out[g][ld.round] = ps
	}
	slices.SortFunc(rep.Priors, func(a, b Prior) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Round, b.Round), cmp.Compare(a.Collection, b.Collection))
	})
	return out
}

// priors are a noise group's priors at one look: fitted to its lanes' noise over all
// collections, and to their noise in each collection (for a lane whose collections
// measure with different noise, noiseByCollection; none with one collection).
type priors struct {
	all    prior
	byColl []prior
}

// lanesAt prepares every lane and candidate from early, the runs as a look after some
// round saw them (runsAt), with runs set aside as they would have been then.
func lanesAt(in Input, cfg Config, early []run, lay layout) []*laneData {
	for i := range early {
		early[i].setAside = false
	}
	setAside(in, cfg, early, lay)
	out, _ := prepareLanes(in, cfg, early, lay)
	return out
}

// runsAt returns the runs of the first round rounds only (pass pairs 1..round of each
// collection) as a look after that round saw them: of a pass measured again (full holds
// every attempt), the latest attempt measured by then. runs are the runs analysed.
func runsAt(full Input, runs []run, lay layout, armIdx, laneIdx map[string]int, remeasured bool, round int) []run {
	early := make([]run, len(runs))
	if !remeasured {
		copy(early, runs)
		for c := range lay.collections {
			for p := 2 * round; p < lay.passes; p++ {
				for l := range lay.lanes {
					for a := range lay.arms {
						early[lay.at(c, p, l, a)] = run{}
					}
				}
			}
		}
		return early
	}
	then := full
	then.Observations = slices.DeleteFunc(slices.Clone(full.Observations), func(o Observation) bool {
		return o.Pass > 2*round || o.MeasuredRound() > round
	})
	then, _, _, _ = attempts(then) // full was resolved without error
	var scratch Report
	_ = index(then, lay, armIdx, laneIdx, early, &scratch) // a subset of an indexed input
	return early
}

// prepareLanes prepares every lane and candidate from runs, fitting each lane's carryover
// model once for all its candidates, and returns the lanes (candidates in order, each
// with every lane) and each lane's carryover.
func prepareLanes(in Input, cfg Config, runs []run, lay layout) ([]*laneData, []Carryover) {
	fits := make([]*carryFit, len(in.Lanes))
	cos := make([]Carryover, len(in.Lanes))
	for l := range in.Lanes {
		fits[l], cos[l] = fitCarryover(in, cfg, runs, lay, l)
	}
	var out []*laneData
	for ci, cand := range in.Candidates {
		for l, lane := range in.Lanes {
			out = append(out, prepareLane(in, cfg, runs, lay, l, ci+1, lane, cand, fits[l], cos[l]))
		}
	}
	poolLayouts(out)
	return out, cos
}

// summarize judges the lane in every collection and pooled, with its noise moderated by
// the prior of its group at its look, and appends its passes, pairs and summaries to rep.
func (ld *laneData) summarize(rep *Report, in Input, cfg Config, runs []run, lay layout, prs priors) {
	pr := prs.all
	s2, df := residual(ld.byColl, 0)
	nz := noise{own: df, ownSD: math.Sqrt(s2), adjVar: ld.adjVar}
	cal := calibrated(ld.lane.Calibration, cfg.MaxCalibrationDF)
	if v, d, lent := moderate(s2, float64(df), pr, cal); d > 0 {
		nz.sigma, nz.df, nz.lent = math.Sqrt(v), d, lent
	}
	j := judging{nz: nz, pw: power{design: cfg.Design, floor: ld.fl, power: cfg.Power, priorDF: pr.d0 + nz.lent},
		samples: sampleCount(runs, lay, ld.l, ld.a)}
	j.byColl, j.collNoiseP = ld.noiseByCollection(nz, prs.byColl, cal)
	if cn := j.byColl; cn != nil {
		j.nz = cn.pooled
		j.pw.collSigma, j.pw.collPriorDF = cn.noisiest, cn.collPriorDF
	}
	var all []pairStat
	j.within, all = ld.judgePairs(in, cfg, runs, lay, materialLog(ld.fl, nz))
	pooled := newSummary(ld.lane, ld.cand, 0, ld.floorPct)
	colls := ld.judgeCollections(rep, in, runs, lay, j, &pooled)
	if pooled.Pairs == 0 && pooled.SetAside == 0 {
		return
	}
	ld.judgePooled(rep, j, all, colls, &pooled)
	rep.Pooled = append(rep.Pooled, pooled)
}

// judging is what every one of a lane's summaries is judged with: its moderated noise,
// the power it is planned for, the median within-process CV of its runs and its samples
// per run.
type judging struct {
	nz      noise
	pw      power
	within  float64
	samples int
	// byColl, where the lane's collections measure with different noise, is each
	// collection's (nz is then the pooled estimate's); collNoiseP is Bartlett's p-value
	// of the test (0 without one).
	byColl     *collNoise
	collNoiseP float64
}

// collectionVerdicts is what the collections' summaries tell the pooled one: how many
// collections reproduced each direction (-1 faster, 1 slower) of how many ran, and the
// bounded collections' means and standard errors (for the heterogeneity test).
type collectionVerdicts struct {
	repro      map[int]int
	ran        int
	means, ses []float64
}

// judgePairs gives each kept pass pair of every collection its verdict (set aside when
// it is an outlier or holds a contaminated run) and returns the median within-process CV
// of the lane's usable runs and every collection's pair statistics.
func (ld *laneData) judgePairs(in Input, cfg Config, runs []run, lay layout, material float64) (float64, []pairStat) {
	var withinCVs []float64
	var all []pairStat
	for c := range ld.colls {
		cp := &ld.colls[c]
		for _, k := range cp.kept {
			f, r := cp.passes[2*k], cp.passes[2*k+1]
			if f.Order == OrderReverse {
				f, r = r, f
			}
			pr := pairVerdict(f, r, k+1, in.Base, cfg, ld.floorPct, material)
			if adj, ok := cp.adj[k]; ok && adj != 0 {
				pr.AdjustPct = toPct(adj)
				pr.MeanPct = toPct((f.LogRatio+r.LogRatio)/2 - adj)
			}
			switch {
			case slices.Contains(cp.outliers, k):
				pr.SetAside, pr.Outlier, pr.Verdict = true, true, DriftSuspected
				pr.Reason = fmt.Sprintf("set aside: its pair mean or order effect lies more than %d robust standard deviations from the lane's other pairs (a disturbed process); %s", outlierReach, pr.Reason)
			case slices.Contains(cp.aside, k):
				pr.SetAside, pr.Verdict = true, DriftSuspected
				pr.Reason = "set aside: a run of this pair was contaminated (see the set-aside runs); " + pr.Reason
			}
			cp.pairs = append(cp.pairs, pr)
		}
		for i := range cp.passes {
			for _, arm := range []int{0, ld.a} {
				if r := runs[lay.at(c, i, ld.l, arm)]; cvUsable(r) && !r.setAside {
					withinCVs = append(withinCVs, r.cvPct)
				}
			}
		}
		all = append(all, cp.stats...)
	}
	return Median(withinCVs), all
}

// judgeCollections judges the lane in each collection that kept pairs, appends its
// passes, pairs and summary to rep, counts its pairs into pooled, and returns what the
// pooled verdict needs of them.
func (ld *laneData) judgeCollections(rep *Report, in Input, runs []run, lay layout, j judging, pooled *LaneSummary) collectionVerdicts {
	cv := collectionVerdicts{repro: map[int]int{}}
	d := j.pw.design
	for c := range ld.colls {
		cp := &ld.colls[c]
		if len(cp.kept) == 0 {
			continue
		}
		cv.ran++
		m, o := 0.0, 0.0
		if len(cp.stats) > 0 {
			m, _ = meanPairs(cp.stats)
			o = orderEffect(cp.stats)
		}
		nz := j.nz
		if j.byColl != nil {
			nz = j.byColl.byColl[c]
		}
		ev := newEvidence(len(cp.stats), m, o, nz, j.pw, d.CollTail(ld.round), ld.round)
		s := newSummary(ld.lane, ld.cand, c+1, ld.floorPct)
		s.countPairs(cp.pairs)
		pooled.countPairs(cp.pairs)
		passDeltas(&s, cp.passes, cp.kept, runs, lay, c, ld.l, ld.a, ld.lane, ld.floorPct)
		s.fill(ev, nz, j.within, j.samples)
		s.CensoredSlower, s.CensoredFaster = censoredCounts(cp.stats)
		s.Verdict, s.Reason = verdictFrom(s, ev, ld.fl, 0)
		ld.hold(&s)
		censor(&s)
		switch s.Verdict {
		case LaneReproducedFaster:
			cv.repro[-1]++
		case LaneReproducedSlower:
			cv.repro[1]++
		}
		if ev.bounded {
			cv.means, cv.ses = append(cv.means, m), append(cv.ses, ev.se)
		}
		warnLane(rep, cp, ld.lane, ld.cand, in.Base, c+1, s)
		rep.Passes = append(rep.Passes, cp.passes...)
		rep.Pairs = append(rep.Pairs, cp.pairs...)
		rep.Lanes = append(rep.Lanes, s)
	}
	return cv
}

// judgePooled judges the lane pooled over its collections: reproduced only in the
// direction every collection that ran reproduced, with the collections' disagreement
// and an order effect the pair means cancel named in its reason.
func (ld *laneData) judgePooled(rep *Report, j judging, all []pairStat, cv collectionVerdicts, pooled *LaneSummary) {
	for _, s := range rep.Lanes {
		if s.Lane == ld.lane.Name && s.Arm == ld.cand {
			pooled.Passes += s.Passes
			pooled.Faster += s.Faster
		}
	}
	var deltas []float64
	for c := range ld.colls {
		for _, pd := range ld.colls[c].passes {
			if k := (pd.Pass - 1) / 2; pd.Usable && pd.Bound == "" && slices.Contains(ld.colls[c].kept, k) && !slices.Contains(ld.colls[c].aside, k) {
				deltas = append(deltas, pd.DeltaPct)
			}
		}
	}
	if len(deltas) > 0 {
		pooled.MedianDeltaPct, pooled.MeanDeltaPct = Median(deltas), mean(deltas)
	}
	m, o := 0.0, 0.0
	switch {
	case j.byColl != nil: // the collections weighted by their precision
		m, o = j.byColl.mean, orderEffect(all)
	case len(all) > 0:
		m, _ = meanPairs(all)
		o = orderEffect(all)
	}
	ev := newEvidence(len(all), m, o, j.nz, j.pw, j.pw.design.PoolTail(ld.round), ld.round)
	pooled.fill(ev, j.nz, j.within, j.samples)
	pooled.HeterogeneityP = heterogeneity(cv.means, cv.ses, m)
	pooled.CollectionNoiseP, pooled.NoiseByCollection = j.collNoiseP, j.byColl != nil
	replicated := 0
	switch {
	case cv.ran > 0 && cv.repro[-1] == cv.ran:
		replicated = -1
	case cv.ran > 0 && cv.repro[1] == cv.ran:
		replicated = 1
	}
	pooled.CensoredSlower, pooled.CensoredFaster = censoredCounts(all)
	pooled.Verdict, pooled.Reason = verdictFrom(*pooled, ev, ld.fl, replicated)
	ld.hold(pooled)
	censor(pooled)
	if pooled.HeterogeneityP < heterogeneityP {
		pooled.Reason += fmt.Sprintf("; the collections disagree (Cochran's Q %s): %s", pText(pooled.HeterogeneityP), collectionEffects(rep, ld))
	}
	if j.byColl != nil {
		pooled.Reason += "; " + j.byColl.noiseNote()
	}
	if hl, ok := hodgesLehmann(all); ok {
		pooled.HodgesLehmannPct = toPct(hl)
		if (pooled.Verdict == LaneReproducedFaster || pooled.Verdict == LaneReproducedSlower) && (hl < ev.lo || hl > ev.hi) {
			pooled.Reason += fmt.Sprintf("; the pair means' Hodges-Lehmann estimate %s lies outside the interval: a few pairs carry the mean (the set-aside runs and host blips say which)", fmtDelta(toPct(hl)))
		}
	}
	if ld.layoutSharePct > 0 {
		pooled.LayoutSharePct = ld.layoutSharePct
		pooled.Reason += fmt.Sprintf("; the builds' code layouts explain %.0f%% of the pair means' spread", ld.layoutSharePct) + LayoutShareWhy
	}
	if ev.orderShown() && pooled.Verdict != LaneOrderDependent {
		pooled.Reason += fmt.Sprintf("; an order effect of %s was measured, which the pair means cancel", fmtDelta(toPct(ev.order)))
	}
}

// hold keeps a summary undecided while the lane's arm contrast is confounded with its
// places' cost (Carryover): a verdict then could be the design's, not the arm's.
func (ld *laneData) hold(s *LaneSummary) {
	switch s.Verdict {
	case LaneReproducedFaster, LaneReproducedSlower, LaneNeutral:
		if ld.confounded {
			s.Reason = fmt.Sprintf("would read %s, but %s; %s", s.Verdict, ld.carryNote, s.Reason)
			s.Verdict = LaneUndecided
		}
	}
}

// heterogeneityP is the Cochran's Q p-value below which a pooled reason says the
// collections disagree.
const heterogeneityP = 0.001

// pText formats a small p-value without e-notation: "p = 0.00042", "p < 0.0001".
func pText(p float64) string {
	if p < 0.0001 {
		return "p < 0.0001"
	}
	return "p = " + human.Sig(p)
}

// heterogeneity returns the p-value of Cochran's Q test that collection means with
// standard errors ses estimate one effect (pooled estimate m); 1 with fewer than two.
func heterogeneity(means, ses []float64, m float64) float64 {
	if len(means) < 2 {
		return 1
	}
	var q float64
	for i, x := range means {
		if ses[i] <= 0 {
			if x != m {
				return 0
			}
			continue
		}
		q += (x - m) * (x - m) / (ses[i] * ses[i])
	}
	return chiSquaredTail(q, len(means)-1)
}

// chiSquaredTail returns P(X > q) for X chi-squared with k degrees of freedom: exact for
// k = 1 and 2, the Wilson-Hilferty approximation beyond.
func chiSquaredTail(q float64, k int) float64 {
	switch {
	case q <= 0:
		return 1
	case k == 1:
		return 2 * (1 - phi(math.Sqrt(q)))
	case k == 2:
		return math.Exp(-q / 2)
	}
	v := 2 / (9 * float64(k))
	z := (math.Cbrt(q/float64(k)) - (1 - v)) / math.Sqrt(v)
	return 1 - phi(z)
}

// collectionEffects lists a lane's collection estimates: "collection 1 -5.0%, collection 2
// +1.2%".
func collectionEffects(rep *Report, ld *laneData) string {
	var parts []string
	for _, s := range rep.Lanes {
		if s.Lane == ld.lane.Name && s.Arm == ld.cand {
			parts = append(parts, fmt.Sprintf("collection %d %s", s.Collection, fmtDelta(s.EstimatePct)))
		}
	}
	return joinComma(parts)
}

// LayoutShareWhy ends the reason's sentence on the layouts' share of a lane's spread. A
// reason is part of a receipt's stored analysis, which a receipt is checked against, so its
// words stay as they are; a table that shortens the reason replaces this clause whole.
const LayoutShareWhy = ", which the interval carries (a lower bound of layout's part: only the functions' order moves)"

// fill copies the evidence into the summary, in percent, and splits the noise into its
// between-process part: a pass delta compares the medians of two runs, each of which
// varies by the process's own level (between) and by the sampling error of a median of n
// samples (about sqrt(pi/2) x CV / sqrt(n)), so
//
//	noise^2 = 2 (between^2 + (pi/2) within^2 / n)
func (s *LaneSummary) fill(ev evidence, nz noise, withinCVPct float64, n int) {
	s.EstimateLog, s.SELog, s.DF, s.DFUsed, s.CalibrationDF = ev.est, ev.se, nz.own, nz.df, nz.lent
	s.OwnNoisePct = nz.ownSD * 100
	s.EstimatePct = toPct(ev.est)
	s.OrderEffectPct = toPct(ev.order)
	s.PairsNeeded = ev.pairsNeeded
	s.WithinCVPct = withinCVPct
	s.Round = ev.perColl
	if !ev.bounded {
		return
	}
	s.Bounded = true
	s.Crit, s.Tail = ev.crit, ev.tail
	s.Confidence = 1 - 2*ev.tail
	s.CILowPct, s.CIHighPct = toPct(ev.lo), toPct(ev.hi)
	s.NoBetterThanPct, s.NoWorseThanPct = s.CILowPct, s.CIHighPct
	s.OrderLowPct, s.OrderHighPct = toPct(ev.olo), toPct(ev.ohi)
	s.MDEPct, s.MDEMaxPct = toPct(ev.mde), toPct(ev.mdeMax)
	s.NoisePct = nz.sigma * 100
	if n > 0 {
		w := withinCVPct / 100
		between := nz.sigma*nz.sigma/2 - math.Pi/2*w*w/float64(n)
		s.BetweenPct = math.Sqrt(math.Max(0, between)) * 100
	}
}
