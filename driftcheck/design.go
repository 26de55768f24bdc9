package driftcheck

import (
	"fmt"
	"math"
	"slices"
)

// Spending names an error-spending function: how much of a test's error rate a sequential
// run may spend by the time it has measured a fraction t of its largest planned number of
// pairs (the information fraction). Every look then tests at the level its share of the
// error leaves, so the error over all looks together is the stated one, whenever the run
// stops (Lan & DeMets 1983; Jennison & Turnbull 2000, chapter 7).
type Spending string

// Spending functions. For a one-sided error rate a spent up to information fraction t in
// (0, 1]:
//
//	obrien-fleming  a(t) = 2 - 2 Phi(z(1 - a/2) / sqrt(t))     (Lan-DeMets O'Brien-Fleming type)
//	pocock          a(t) = a ln(1 + (e - 1) t)                  (Lan-DeMets Pocock type)
//	power           a(t) = a t^1.5                              (Kim-DeMets, rho 1.5)
//	hsd             a(t) = a (1 - e^(-4 t)) / (1 - e^(-4))      (Hwang-Shih-DeCani, gamma 4)
//
// O'Brien-Fleming spends almost nothing early and costs about 1.05x the pairs of a fixed
// test at the end; Pocock spends evenly, stops big effects early and costs about 1.3x at the
// end; the power family with rho 1.5 lies between them; Hwang-Shih-DeCani with gamma 4
// spends a third of the error by a tenth of the pairs (Pocock a sixth), so lanes that
// decide in a few rounds decide sooner and lanes that need many rounds later.
// docs/methodology.md shows how each does in the simulation and why the default was
// chosen.
const (
	SpendOBrienFleming Spending = "obrien-fleming"
	SpendPocock        Spending = "pocock"
	SpendPower         Spending = "power"
	SpendHSD           Spending = "hsd"
)

// hsdGamma is the Hwang-Shih-DeCani family's parameter: positive spends early.
const hsdGamma = 4

// DefaultSpending is the spending function a sequential run uses unless its spec names
// another.
const DefaultSpending = SpendPocock

// Spendings returns every spending function.
func Spendings() []Spending { return []Spending{SpendOBrienFleming, SpendPocock, SpendPower, SpendHSD} }

// spent returns the error a spends by information fraction t.
func (s Spending) spent(a, t float64) float64 {
	if t >= 1 {
		return a
	}
	if t <= 0 {
		return 0
	}
	switch s {
	case SpendOBrienFleming:
		return 2 - 2*phi(zQuantile(1-a/2)/math.Sqrt(t))
	case SpendPocock:
		return a * math.Log(1+(math.E-1)*t)
	case SpendHSD:
		return a * -math.Expm1(-hsdGamma*t) / -math.Expm1(-hsdGamma)
	default:
		return a * math.Pow(t, 1.5)
	}
}

// valid reports whether s names a spending function ("" is the default).
func (s Spending) valid() bool {
	return s == "" || slices.Contains(Spendings(), s)
}

// Design is the error budget of one analysis: for each look a run may take, the nominal
// one-sided error of the tests made there. A fixed protocol has one look; a sequential run
// one after every round from MinPairs to MaxPairs, round r at information fraction
// r/MaxPairs.
//
// Two families of tests spend error:
//
//   - the replication test of one collection (is this collection's effect above 0, or
//     below?) at the one-sided level Alpha/2, so that a lane reads reproduced in a
//     direction it does not have (which needs every collection to say so) at most Alpha/2
//     of the time whatever the collections' correlation. (Alpha/2)^(1/C) each would hold
//     that rate only for independent collections, and the collections of a run are not:
//     they interleave round by round, so a host's slow minute reaches both; an A/A of
//     lanes/stickiness reproduced 2 of 11 lanes at that level.
//   - the pooled tests (the effect lies below +floor; above -floor; the gate's threshold)
//     at the one-sided level Alpha each: two one-sided tests (TOST) for equivalence, so a
//     lane changed by the floor or more reads neutral at most Alpha of the time, and a
//     guard that regressed by the floor is cleared at most Alpha of the time.
type Design struct {
	Collections        int
	MinPairs, MaxPairs int // 0 for a fixed protocol
	Spending           Spending
	Alpha              float64
	// coll and pool hold the nominal one-sided tail of each look, from MinPairs on (one
	// entry for a fixed protocol).
	coll, pool []float64
}

// NewDesign computes the design of an analysis under cfg (defaults filled in) with the
// given number of collections. It is deterministic and costs a few milliseconds for a rule
// of 40 looks: callers that analyse many times (a simulation) compute it once and pass it in
// Config.Design.
func NewDesign(cfg Config, collections int) (*Design, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if collections < 1 {
		return nil, fmt.Errorf("design: %d collections: want at least 1", collections)
	}
	d := &Design{Collections: collections, MinPairs: cfg.MinPairs, MaxPairs: cfg.MaxPairs, Spending: cfg.Spending, Alpha: cfg.Alpha}
	collAlpha := cfg.Alpha / 2
	if cfg.MaxPairs == 0 {
		d.coll, d.pool = []float64{collAlpha}, []float64{cfg.Alpha}
		return d, nil
	}
	ts := make([]float64, 0, cfg.MaxPairs-cfg.MinPairs+1)
	for r := cfg.MinPairs; r <= cfg.MaxPairs; r++ {
		ts = append(ts, float64(r)/float64(cfg.MaxPairs))
	}
	d.coll = boundaries(collAlpha, cfg.Spending, ts)
	d.pool = boundaries(cfg.Alpha, cfg.Spending, ts)
	return d, nil
}

// look returns the index of the look at which a lane with the given number of pairs per
// collection is judged: the round it reached, clamped to the rule's looks.
func (d *Design) look(pairs int) int {
	if d.MaxPairs == 0 {
		return 0
	}
	return min(max(pairs, d.MinPairs), d.MaxPairs) - d.MinPairs
}

// CollTail returns the nominal one-sided error of one collection's replication test at the
// look for the given number of pairs per collection.
func (d *Design) CollTail(pairs int) float64 { return d.coll[d.look(pairs)] }

// PoolTail returns the nominal one-sided error of a pooled test at the look for the given
// number of pairs per collection.
func (d *Design) PoolTail(pairs int) float64 { return d.pool[d.look(pairs)] }

// boundaries returns, for a one-sided test at level alpha whose error is spent by s over
// the increasing information fractions ts, the nominal one-sided tail 1 - Phi(b_k) of each
// look's critical value b_k on the z scale: the recursive numerical integration of
// Armitage, McPherson and Rowe (1969) over the score process S_t (a Brownian motion, Var
// S_t = t), which at look k has crossed b_j sqrt(t_j) at no earlier look j and crosses
// b_k sqrt(t_k) with probability s(t_k) - s(t_{k-1}). The sub-density of S on each look's
// continuation region is carried on a uniform grid (trapezoid rule), whose spacing is an
// eighth of the smallest increment's standard deviation.
func boundaries(alpha float64, s Spending, ts []float64) []float64 {
	out := make([]float64, len(ts))
	const width = 8.0 // the grid reaches this many standard deviations below 0
	h := gridStep(ts)
	var g grid
	prevT, prevSpent := 0.0, 0.0
	for k, t := range ts {
		target := s.spent(alpha, t) - prevSpent
		sd := math.Sqrt(t - prevT)
		var cross func(u float64) float64
		if k == 0 {
			cross = func(u float64) float64 { return 1 - phi(u/sd) }
		} else {
			cross = func(u float64) float64 {
				var p float64
				for i, x := range g.xs {
					p += g.mass[i] * (1 - phi((u-x)/sd))
				}
				return p
			}
		}
		u := math.Inf(1)
		if target > 1e-15 {
			lo, hi := -width*math.Sqrt(t), width*math.Sqrt(t)+width
			for cross(hi) > target && hi < 1e6 {
				hi *= 2
			}
			for range 48 {
				mid := (lo + hi) / 2
				if cross(mid) > target {
					lo = mid
				} else {
					hi = mid
				}
			}
			u = (lo + hi) / 2
		}
		out[k] = tailOf(u / math.Sqrt(t))
		spentNow := prevSpent + target
		if !math.IsInf(u, 1) {
			spentNow = prevSpent + cross(u)
		}
		top := math.Min(u, width*math.Sqrt(t)+width)
		g = g.next(k == 0, sd, -width*math.Sqrt(t), top, h)
		prevT, prevSpent = t, spentNow
	}
	return out
}

// grid is the sub-density of the score on a look's continuation region: points xs (a
// uniform grid of spacing h and the region's top) with quadrature masses.
type grid struct {
	xs, mass []float64
}

// next returns the sub-density after an increment of standard deviation sd, on the region
// [lo, top]: from the normal density itself when first, else by convolving g's masses
// with the increment's density. Grid points are multiples of h, so the kernel depends only
// on the difference of indexes and is computed once per offset.
func (g grid) next(first bool, sd, lo, top, h float64) grid {
	i0, i1 := int(math.Ceil(lo/h)), int(math.Floor(top/h))
	var xs []float64
	for i := i0; i <= i1; i++ {
		xs = append(xs, float64(i)*h)
	}
	if len(xs) == 0 || top-xs[len(xs)-1] > h*1e-9 {
		xs = append(xs, top)
	}
	dens := make([]float64, len(xs))
	if first {
		for j, y := range xs {
			dens[j] = normalDensity(y/sd) / sd
		}
		return grid{xs: xs, mass: weights(xs, dens)}
	}
	// Old points on the uniform grid are multiples of h too, except a last one at the old
	// top; the kernel for two grid points depends only on their index offset.
	base := int(math.Round(g.xs[0] / h))
	nOld := len(g.xs)
	if top := g.xs[nOld-1]; math.Abs(top-math.Round(top/h)*h) > h*1e-9 {
		nOld-- // the old top is off the grid
	}
	// Offsets run from i0 - (base + nOld) to i1 - base.
	off := max(base+nOld-i0, 0) + 1
	kernel := make([]float64, off+max(i1-base, 0)+2)
	for d := range kernel {
		kernel[d] = normalDensity(float64(d-off)*h/sd) / sd
	}
	for j, y := range xs {
		var v float64
		onY := j < i1-i0+1
		for i := range nOld {
			if onY {
				v += g.mass[i] * kernel[(i0+j)-(base+i)+off]
			} else {
				v += g.mass[i] * normalDensity((y-g.xs[i])/sd) / sd
			}
		}
		for i := nOld; i < len(g.xs); i++ {
			v += g.mass[i] * normalDensity((y-g.xs[i])/sd) / sd
		}
		dens[j] = v
	}
	return grid{xs: xs, mass: weights(xs, dens)}
}

// gridStep returns the grid spacing for looks at information fractions ts: an eighth of
// the standard deviation of the smallest increment between looks.
func gridStep(ts []float64) float64 {
	inc := ts[0]
	for i := 1; i < len(ts); i++ {
		inc = math.Min(inc, ts[i]-ts[i-1])
	}
	return math.Max(math.Sqrt(inc)/8, 1e-3)
}

// weights turns density values on a grid into quadrature masses (trapezoid rule).
func weights(xs, fs []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		var w float64
		if i > 0 {
			w += (xs[i] - xs[i-1]) / 2
		}
		if i+1 < len(xs) {
			w += (xs[i+1] - xs[i]) / 2
		}
		out[i] = fs[i] * w
	}
	return out
}

// tailOf returns 1 - Phi(z), 0 for +Inf.
func tailOf(z float64) float64 {
	if math.IsInf(z, 1) {
		return 0
	}
	return 1 - phi(z)
}

// phi is the standard normal distribution function.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normalDensity is the standard normal density.
func normalDensity(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// zQuantile is the p-quantile of the standard normal distribution.
func zQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// tCritical returns the critical value of a one-sided t test with df degrees of freedom
// at nominal tail p (the t boundary with the tail of a z boundary, Jennison & Turnbull's
// significance level approach): +Inf for p = 0.
func tCritical(p float64, df float64) float64 {
	if p <= 0 {
		return math.Inf(1)
	}
	if p >= 0.5 {
		return 0
	}
	if df <= 0 || math.IsInf(df, 1) || df > 1e6 {
		return zQuantile(1 - p)
	}
	return tQuantileF(1-p, df)
}
