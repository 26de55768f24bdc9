package driftcheck

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/flipbench/flipbench/internal/human"
)

// Carryover models, from the most to the least that the design lets a lane's runs tell
// apart from its arms.
const (
	// CarryPlaceAndAfter: the cost of a run's place among its lane's runs in the pass and
	// the effect of the arm whose process ran just before it.
	CarryPlaceAndAfter = "place and previous process"
	// CarryPlace: the cost of a run's place only; the previous process's arm shows no
	// effect, is not separable from the arms in this design (the schedule before
	// designs: two arms back to back in every lane), or was not recorded.
	CarryPlace = "place"
	// CarryConfounded: an arm has not yet taken enough places for its contrast to be
	// told apart from its place's cost (three or more arms, before the design has
	// rotated): the lane stays undecided for that arm.
	CarryConfounded = "confounded"
	// CarryNone: too few complete passes to fit.
	CarryNone = "none"
)

// Carryover is what one lane's runs say about what a run's place in its pass costs:
// Places are the effects of running second, third, ... among the lane's runs of a pass,
// each against running first (a cold cache, a file the first run creates), and After the
// effects of following a candidate's process rather than the base's (a candidate that
// heats the CPU). They are estimated by least squares from every complete pass of the
// lane (a crossover-trial model: pass, arm, place and previous process), and the pair
// means of the arm contrasts are corrected by them (Pair.AdjustPct).
type Carryover struct {
	Lane  string `json:"lane"`
	Model string `json:"model"`
	// Places and After are the estimates with their intervals at 1 - Alpha / (the number
	// of effects) two-sided; empty when the model does not include them.
	Places []Effect `json:"places"`
	After  []Effect `json:"after"`
	// DF is the residual degrees of freedom of the fit.
	DF int `json:"df"`
	// Detected is set when an interval excludes 0.
	Detected bool `json:"detected"`
	// LeftOut are the complete passes left out of the fit because an arm's contrast in
	// them lies far from the lane's others (a host blip, a contaminated process): one such
	// pass where the design is irregular would otherwise set a place or previous-process
	// effect by itself, and the correction would carry it into every pair.
	LeftOut []PassRef `json:"left_out,omitempty"`
	Reason  string    `json:"reason"`
}

// PassRef names one pass of a collection.
type PassRef struct {
	Collection int `json:"collection"`
	Pass       int `json:"pass"`
}

// Effect is one estimated effect with its interval, in percent.
type Effect struct {
	Label   string  `json:"label"`
	Pct     float64 `json:"pct"`
	LowPct  float64 `json:"low_pct"`
	HighPct float64 `json:"high_pct"`
}

// carryFit is a lane's fitted carryover model on the log scale: place[pos] and
// after[arm] (both 0 for the reference: the first place, following the base or nothing).
type carryFit struct {
	model       string
	place       []float64
	after       []float64
	confounded  []bool // by arm: its contrast cannot be told from its place yet
	sigma2      float64
	comps       []comp // the fit's right singular vectors over the singular values
	nTheta, nPi int
}

// comp is one component of the fit's pseudo-inverse: a right singular vector and its
// singular value.
type comp struct {
	v []float64
	s float64
}

// cost is the fitted cost of run r's place and predecessor, on the log scale.
func (f *carryFit) cost(r run) float64 {
	if f == nil || f.place == nil {
		return 0
	}
	c := f.place[r.pos]
	if r.after > 0 && f.after != nil {
		c += f.after[r.after]
	}
	return c
}

// coef returns the design row of run r in the fit's parameters (arms, places, after),
// as the fit's columns are laid out, for the variance of a correction.
func (f *carryFit) coef(r run, into []float64, sign float64) {
	if r.pos > 0 {
		into[f.nTheta+r.pos-1] += sign
	}
	if f.model == CarryPlaceAndAfter && r.after > 0 {
		into[f.nTheta+f.nPi+r.after-1] += sign
	}
}

// variance returns the variance of the linear combination c of the fit's parameters.
func (f *carryFit) variance(c []float64) float64 {
	v := 0.0
	for _, cp := range f.comps {
		d := 0.0
		for j, x := range c {
			d += x * cp.v[j]
		}
		v += d * d / (cp.s * cp.s)
	}
	return f.sigma2 * v
}

// fitCarryover fits the carryover model of lane l from its complete passes (every arm
// present, none set aside, positive medians): log median = pass + arm + place [+ the arm
// of the previous process], with the richest model the design identifies.
func fitCarryover(in Input, cfg Config, runs []run, lay layout, l int) (*carryFit, Carryover) {
	out := Carryover{Lane: in.Lanes[l].Name, Model: CarryNone, Places: []Effect{}, After: []Effect{}}
	cd := carryDataOf(runs, lay, l, floorLog(in.Lanes[l].floorPct(cfg)))
	out.LeftOut = cd.leftOut
	if cd.groups < 2 {
		out.Reason = "fewer than two complete passes: not fitted"
		return nil, out
	}
	s, model, unused, ok := cd.choose(in, cfg)
	if !ok {
		return cd.unfitted(in, s, out)
	}
	k := cd.k
	fit := s.fit
	fit.model = model
	fit.place = make([]float64, k)
	for j := 1; j < k; j++ {
		fit.place[j] = s.beta[cd.nTheta+j-1]
	}
	if model == CarryPlaceAndAfter {
		fit.after = make([]float64, k)
		for a := 1; a < k; a++ {
			fit.after[a] = s.beta[cd.nTheta+cd.nPi+a-1]
		}
	}
	out.Model, out.DF = model, s.df
	cd.describe(in, cfg, s, model, unused, &out)
	return fit, out
}

// carryObs is one run of a complete pass in the carryover fit: its log median, its arm
// and the pass (group) it belongs to.
type carryObs struct {
	y          float64
	arm, group int
	r          run
}

// carryData is a lane's complete passes, ready to fit: k arms, nTheta arm and nPi place
// parameters; known says whether any run's previous process is known.
type carryData struct {
	all            []carryObs
	leftOut        []PassRef
	byGroup        [][]int // the rows of each complete pass
	groups         int
	known          bool
	k, nTheta, nPi int
}

// carrySolved is one least-squares fit: the parameters, their standard errors, which are
// estimable, the residual degrees of freedom.
type carrySolved struct {
	beta, se []float64
	est      []bool
	df       int
	fit      *carryFit
}

// carryDataOf gathers lane l's complete passes: every arm present, none set aside, with
// enough samples and a positive median, and none an outlier (outlierPasses; fl is the
// lane's floor on the log scale).
func carryDataOf(runs []run, lay layout, l int, fl float64) carryData {
	k := lay.arms
	cd := carryData{k: k, nTheta: k - 1, nPi: k - 1}
	var complete []passAt
	for c := range lay.collections {
		for p := range lay.passes {
			ok := true
			for a := range k {
				r := runs[lay.at(c, p, l, a)]
				if !r.present || r.setAside || len(r.values) < minSamples || r.median <= 0 {
					ok = false
					break
				}
			}
			if ok {
				complete = append(complete, passAt{c, p})
			}
		}
	}
	out := outlierPasses(complete, runs, lay, l, fl)
	for _, ref := range complete {
		if out[ref] {
			cd.leftOut = append(cd.leftOut, PassRef{Collection: ref.c + 1, Pass: ref.p + 1})
			continue
		}
		for a := range k {
			r := runs[lay.at(ref.c, ref.p, l, a)]
			cd.all = append(cd.all, carryObs{math.Log(r.median), a, cd.groups, r})
			cd.known = cd.known || r.after >= 0
		}
		cd.groups++
	}
	cd.byGroup = make([][]int, cd.groups)
	for i, o := range cd.all {
		cd.byGroup[o.group] = append(cd.byGroup[o.group], i)
	}
	return cd
}

// passAt is a pass of the layout: collection and pass, from 0.
type passAt struct{ c, p int }

// outlierPasses returns the passes among complete in which some candidate's log contrast
// with the base lies further from the median of its contrasts than blipSigmas robust
// standard deviations and twice the floor fl: the rule that flags a host blip
// (passDeltas), applied before the fit so that one disturbed process cannot pose as a
// carryover. It needs minOutlierPasses complete passes; a place cost moves
// every forward or reverse pass alike, which widens the spread instead of standing out.
func outlierPasses(complete []passAt, runs []run, lay layout, l int, fl float64) map[passAt]bool {
	out := map[passAt]bool{}
	if len(complete) < minOutlierPasses {
		return out
	}
	for a := 1; a < lay.arms; a++ {
		d := make([]float64, len(complete))
		for i, ref := range complete {
			d[i] = math.Log(runs[lay.at(ref.c, ref.p, l, a)].median / runs[lay.at(ref.c, ref.p, l, 0)].median)
		}
		m := Median(d)
		limit := math.Max(blipSigmas*madScale*mad(d, m), 2*fl)
		for i, ref := range complete {
			if math.Abs(d[i]-m) > limit {
				out[ref] = true
			}
		}
	}
	return out
}

// minOutlierPasses is how many complete passes a lane needs before any is left out of its
// carryover fit as an outlier: fewer give no median and spread to stand out from.
const minOutlierPasses = 5

// design returns the fit's design matrix and response, both centred within each pass so
// that the pass's own level drops out; withAfter adds the previous process's arm.
func (cd carryData) design(withAfter bool) (*mat.Dense, []float64) {
	cols := cd.nTheta + cd.nPi
	if withAfter {
		cols += cd.k - 1
	}
	x := mat.NewDense(len(cd.all), cols, nil)
	y := make([]float64, len(cd.all))
	for i, o := range cd.all {
		y[i] = o.y
		if o.arm > 0 {
			x.Set(i, o.arm-1, 1)
		}
		if o.r.pos > 0 {
			x.Set(i, cd.nTheta+o.r.pos-1, 1)
		}
		if withAfter && o.r.after > 0 {
			x.Set(i, cd.nTheta+cd.nPi+o.r.after-1, 1)
		}
	}
	for _, rows := range cd.byGroup {
		for j := -1; j < cols; j++ {
			sum := 0.0
			for _, i := range rows {
				if j < 0 {
					sum += y[i]
				} else {
					sum += x.At(i, j)
				}
			}
			m := sum / float64(len(rows))
			for _, i := range rows {
				if j < 0 {
					y[i] -= m
				} else {
					x.Set(i, j, x.At(i, j)-m)
				}
			}
		}
	}
	return x, y
}

// solve fits the model by a thin SVD (gonum), keeping the components above a relative
// tolerance; ok is false when a parameter is not estimable or no degree of freedom is
// left.
func (cd carryData) solve(withAfter bool) (carrySolved, bool) {
	x, y := cd.design(withAfter)
	n, cols := x.Dims()
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThin) {
		return carrySolved{}, false
	}
	vals := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	tol := 1e-9 * float64(max(n, cols))
	if len(vals) > 0 {
		tol *= vals[0]
	}
	s := carrySolved{beta: make([]float64, cols), se: make([]float64, cols), est: make([]bool, cols), fit: &carryFit{nTheta: cd.nTheta, nPi: cd.nPi}}
	rank := 0
	for i, sv := range vals {
		if sv <= tol {
			continue
		}
		rank++
		uy := 0.0
		for r := range n {
			uy += u.At(r, i) * y[r]
		}
		vi := make([]float64, cols)
		for j := range cols {
			vi[j] = v.At(j, i)
			s.beta[j] += uy / sv * vi[j]
		}
		s.fit.comps = append(s.fit.comps, comp{vi, sv})
	}
	s.df = n - cd.groups - rank
	rss := 0.0
	for r := range n {
		pred := 0.0
		for j := range cols {
			pred += x.At(r, j) * s.beta[j]
		}
		rss += (y[r] - pred) * (y[r] - pred)
	}
	s.fit.sigma2 = rss / float64(max(s.df, 1))
	ok := s.df >= 1
	for j := range cols {
		proj := 0.0 // the projection of e_j on the row space
		for _, cp := range s.fit.comps {
			proj += cp.v[j] * cp.v[j]
		}
		s.est[j] = proj > 1-1e-8
		ok = ok && s.est[j]
		unit := make([]float64, cols)
		unit[j] = 1
		s.se[j] = math.Sqrt(s.fit.variance(unit))
	}
	return s, ok
}

// choose fits the richest model the data identify: with the previous process's arm where
// it is known and the fit shows an effect of it (correcting for an estimate of nothing
// would widen every interval of the lane by its noise; unused then lists the effects not
// taken out), else with places only.
func (cd carryData) choose(in Input, cfg Config) (s carrySolved, model string, unused []Effect, ok bool) {
	model = CarryPlaceAndAfter
	if cd.known {
		s, ok = cd.solve(true)
	}
	if ok {
		crit := tCritical(cfg.Alpha/2/float64(cd.k-1), float64(s.df))
		shown := false
		for a := 1; a < cd.k; a++ {
			b, se := s.beta[cd.nTheta+cd.nPi+a-1], s.se[cd.nTheta+cd.nPi+a-1]
			unused = append(unused, Effect{Label: "after " + armName(in, a), Pct: toPct(b), LowPct: toPct(b - crit*se), HighPct: toPct(b + crit*se)})
			shown = shown || b-crit*se > 0 || b+crit*se < 0
		}
		if !shown {
			ok = false
		} else {
			unused = nil
		}
	}
	if !ok {
		model = CarryPlace
		s, ok = cd.solve(false)
	}
	return s, model, unused, ok
}

// unfitted says why a lane has no carryover fit: with three or more arms, the arms not
// yet separable from their places are confounded (undecided until the design rotates).
func (cd carryData) unfitted(in Input, s carrySolved, out Carryover) (*carryFit, Carryover) {
	if cd.k < 3 || s.est == nil {
		out.Reason = "too few complete passes to fit"
		return nil, out
	}
	out.Model = CarryConfounded
	conf := make([]bool, cd.k)
	var names []string
	for a := 1; a < cd.k; a++ {
		if !s.est[a-1] || s.df < 1 {
			conf[a] = true
			names = append(names, armName(in, a))
		}
	}
	if len(names) == 0 { // the arms are estimable, the places are not: no correction needed
		out.Model = CarryNone
		out.Reason = "the places are not separable yet: no correction"
		return nil, out
	}
	out.Reason = fmt.Sprintf("%s not yet separable from the cost of its place: the design has not rotated far enough (undecided until it has)", strings.Join(names, ", "))
	return &carryFit{model: CarryConfounded, confounded: conf}, out
}

// describe fills out's places and previous-process effects with their intervals at the
// family level, whether any is detected, and the sentence that says so.
func (cd carryData) describe(in Input, cfg Config, s carrySolved, model string, unused []Effect, out *Carryover) {
	k := cd.k
	effects := cd.nPi
	if model == CarryPlaceAndAfter {
		effects += k - 1
	}
	crit := tCritical(cfg.Alpha/2/float64(effects), float64(s.df))
	effect := func(label string, j int) Effect {
		b, se := s.beta[j], s.se[j]
		e := Effect{Label: label, Pct: toPct(b), LowPct: toPct(b - crit*se), HighPct: toPct(b + crit*se)}
		out.Detected = out.Detected || b-crit*se > 0 || b+crit*se < 0
		return e
	}
	for j := 1; j < k; j++ {
		out.Places = append(out.Places, effect(fmt.Sprintf("place %d", j+1), cd.nTheta+j-1))
	}
	if model == CarryPlaceAndAfter {
		for a := 1; a < k; a++ {
			out.After = append(out.After, effect("after "+armName(in, a), cd.nTheta+cd.nPi+a-1))
		}
	}
	var parts []string
	for _, e := range append(append([]Effect{}, out.Places...), out.After...) {
		parts = append(parts, e.Label+" "+human.DeltaCI(e.Pct, e.LowPct, e.HighPct))
	}
	ref := "against the first place"
	if model == CarryPlaceAndAfter {
		ref += " and following the base"
	}
	verdict := "none detected"
	if out.Detected {
		verdict = "detected, taken out of the arm contrasts"
		if k == 2 && model == CarryPlace {
			verdict = "detected; the flip cancels it in every pair"
		}
	}
	out.Reason = fmt.Sprintf("%s (%s, %d df): %s", strings.Join(parts, ", "), ref, s.df, verdict)
	if n := len(out.LeftOut); n > 0 {
		passes := "passes"
		if n == 1 {
			passes = "pass"
		}
		out.Reason += fmt.Sprintf("; %d %s left out of the fit, an arm's contrast far from the lane's others", n, passes)
	}
	if len(unused) > 0 {
		var ps []string
		for _, e := range unused {
			ps = append(ps, e.Label+" "+human.DeltaCI(e.Pct, e.LowPct, e.HighPct))
		}
		out.Reason += fmt.Sprintf("; the previous process shows no effect (%s, against following the base), so none is taken out", strings.Join(ps, ", "))
	}
}

// armName returns the name of arm index a (0 is the base).
func armName(in Input, a int) string {
	if a == 0 {
		return in.Base
	}
	return in.Candidates[a-1]
}
