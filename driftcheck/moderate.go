package driftcheck

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Shared noise. A lane's own pairs give few degrees of freedom early in a run (one, after
// the first round of two collections), although the run has measured every other lane on
// the same host by then. Each lane's noise is therefore moderated with the noise of the
// run's other lanes, by the empirical Bayes method of limma (Smyth 2004): the lanes'
// variances s_i^2, each with d_i degrees of freedom, are taken as draws around a common
// prior s0^2 with d0 degrees of freedom, fitted to the spread of their logarithms, and each
// lane uses the posterior
//
//	s~_i^2 = (d0 s0^2 + d_i s_i^2) / (d0 + d_i)    with d0 + d_i degrees of freedom.
//
// When the lanes' noises differ widely, d0 comes out small and a lane keeps its own; when
// they agree, d0 is large and a round-1 interval is usable. d0 is capped at the sum of the
// lanes' own degrees of freedom: the prior cannot know more than the data it came from.
// Lanes borrow only within their noise group (Lane.Group): a counted lane (instructions)
// does not borrow from timed ones.

// prior is a fitted prior for the variances of one group of lanes.
type prior struct {
	s0sq float64 // prior variance (log scale squared)
	d0   float64 // prior degrees of freedom; 0 means no prior
}

// moderated returns the posterior variance and degrees of freedom of a lane with variance
// s2 on d degrees of freedom. A lane whose own variance is far above the prior (beyond
// the upper outlierQuantile of s0^2 chi^2_d / d: a noisy lane among quiet ones, which a
// prior fitted to a few lanes may not have seen as different) keeps its own: borrowing
// would narrow its interval on the strength of other lanes' quiet (robust empirical Bayes
// in the spirit of Phipson et al. 2016).
func (p prior) moderated(s2, d float64) (float64, float64) {
	if !p.lends(s2, d) {
		return s2, d
	}
	return (p.d0*p.s0sq + d*s2) / (p.d0 + d), p.d0 + d
}

// lends reports whether the prior lends to a lane with variance s2 on d degrees of
// freedom: it has degrees of freedom, and the lane's own variance is not above its upper
// outlierZ quantile.
func (p prior) lends(s2, d float64) bool {
	return p.d0 > 0 && !(d > 0 && s2 > p.s0sq*chiSquareUpper(d, outlierZ))
}

// calibrated returns the prior a host calibration gives a lane: its variance, with its
// degrees of freedom capped at maxDF (Config.MaxCalibrationDF: a calibration measured on
// another day cannot know the host's noise of today better than a few pairs would); no
// prior when c is nil or maxDF is 0.
func calibrated(c *CalibratedNoise, maxDF float64) prior {
	if c == nil || !(c.DeltaPct > 0) || !(c.DF > 0) || !(maxDF > 0) {
		return prior{}
	}
	sd := c.DeltaPct / 100
	return prior{s0sq: sd * sd, d0: math.Min(c.DF, maxDF)}
}

// moderate returns a lane's posterior variance and degrees of freedom from its own
// variance s2 on d degrees of freedom, the prior of its group pr (the run's other lanes)
// and the prior of its host calibration cal. Each prior is skipped when the lane's own
// variance is far above it (prior.moderated's test, on the lane's own estimate); the
// calibration's adds its degrees of freedom to the group's posterior, and lent says how
// many.
func moderate(s2, d float64, pr, cal prior) (v, df, lent float64) {
	v, df = s2, d
	if d > 0 || pr.d0 > 0 {
		v, df = pr.moderated(s2, d)
	}
	if !cal.lends(s2, d) {
		return v, df, 0
	}
	return (cal.d0*cal.s0sq + df*v) / (cal.d0 + df), cal.d0 + df, cal.d0
}

// outlierZ is the standard normal quantile of the outlier test of moderated: 2.326, the
// upper 1%.
const outlierZ = 2.326

// chiSquareUpper returns about the upper quantile of chi^2_d / d at the standard normal
// quantile z, by the Wilson-Hilferty approximation.
func chiSquareUpper(d, z float64) float64 {
	a := 2 / (9 * d)
	return math.Pow(1-a+z*math.Sqrt(a), 3)
}

// NoiseAtLeast returns the lower end of a one-sided interval at level confidence of a
// noise estimate with df degrees of freedom: noise / sqrt(q), q the upper confidence
// quantile of chi^2_df / df (chiSquareUpper). Without degrees of freedom it is the
// estimate itself. A run that gives a lane up for its noise judges it at this end, since a
// noise measured from a few pairs can be far too high.
func NoiseAtLeast(noisePct, df, confidence float64) float64 {
	if !(df > 0) || math.IsInf(df, 0) {
		return noisePct
	}
	z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(confidence)
	return noisePct / math.Sqrt(chiSquareUpper(df, z))
}

// fitPrior fits the prior to lane variances vs with degrees of freedom ds (Smyth 2004,
// section 6.2: moments of log s^2). Lanes with no degrees of freedom or a zero variance
// (a counted lane with identical counts) do not inform it. It needs at least two lanes.
func fitPrior(vs, ds []float64) prior {
	var es, dfs []float64
	for i, v := range vs {
		if ds[i] <= 0 || !(v > 0) || !finite(math.Log(v)) {
			continue
		}
		es = append(es, math.Log(v)-digamma(ds[i]/2)+math.Log(ds[i]/2))
		dfs = append(dfs, ds[i])
	}
	n := len(es)
	if n < 2 {
		return prior{}
	}
	var mean, total float64
	for i, e := range es {
		mean += e
		total += dfs[i]
	}
	mean /= float64(n)
	var ss, tg float64
	for i, e := range es {
		ss += (e - mean) * (e - mean)
		tg += trigamma(dfs[i] / 2)
	}
	evar := ss/float64(n-1) - tg/float64(n)
	d0 := total
	if evar > 0 {
		d0 = math.Min(2*trigammaInverse(evar), total)
	}
	return prior{s0sq: math.Exp(mean + digamma(d0/2) - math.Log(d0/2)), d0: d0}
}

// digamma returns psi(x) for x > 0: the recurrence up to x >= 6, then the asymptotic
// series.
func digamma(x float64) float64 {
	var r float64
	for x < 6 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	return r + math.Log(x) - 0.5/x - f*(1.0/12-f*(1.0/120-f*(1.0/252-f*(1.0/240-f/132))))
}

// trigamma returns psi'(x) for x > 0.
func trigamma(x float64) float64 {
	var r float64
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	return r + 1/x + f/2 + f/x*(1.0/6-f*(1.0/30-f*(1.0/42-f/30)))
}

// trigammaInverse solves trigamma(y) = x for y > 0 (Newton's method as in limma).
func trigammaInverse(x float64) float64 {
	switch {
	case x > 1e7:
		return 1 / math.Sqrt(x)
	case x < 1e-6:
		return 1 / x
	}
	y := 0.5 + 1/x
	for range 50 {
		tri := trigamma(y)
		dif := tri * (1 - tri/x) / trigammaDeriv(y)
		y += dif
		if y <= 0 {
			y = 1e-8
		}
		if -dif/y < 1e-8 {
			break
		}
	}
	return y
}

// trigammaDeriv returns psi”(x) for x > 0.
func trigammaDeriv(x float64) float64 {
	var r float64
	for x < 6 {
		r -= 2 / (x * x * x)
		x++
	}
	f := 1 / (x * x)
	return r - 1/(x*x) - 1/(x*x*x) - f*f*(0.5-f*(1.0/6-f*(1.0/6-f*0.3)))
}
