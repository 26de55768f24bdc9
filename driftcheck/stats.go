package driftcheck

import (
	"math"
	"slices"
)

// madScale turns a median absolute deviation into an estimate of the standard deviation
// of normally distributed data.
const madScale = 1.4826

// medianSorted returns the median of sorted, non-empty xs.
func medianSorted(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Median returns the median of xs (the mean of the middle two when their number is even)
// without modifying xs, or 0 when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return medianSorted(s)
}

// mad returns the (unscaled) median absolute deviation of non-empty xs around m.
func mad(xs []float64, m float64) float64 {
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	slices.Sort(dev)
	return medianSorted(dev)
}

// robustCVPct returns 1.4826 x MAD / |median| x 100 for sorted xs with the given median.
// The caller guarantees len(xs) >= 2 and m != 0.
func robustCVPct(xs []float64, m float64) float64 {
	return madScale * mad(xs, m) / math.Abs(m) * 100
}

// mean returns the arithmetic mean of non-empty xs.
func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0)
}
