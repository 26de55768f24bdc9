package driftcheck_test

import (
	"slices"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{name: "empty", xs: nil, want: 0},
		{name: "one", xs: []float64{7}, want: 7},
		{name: "odd, unsorted", xs: []float64{3, 1, 2}, want: 2},
		{name: "even: mean of the middle two", xs: []float64{4, 1, 3, 2}, want: 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			if got := driftcheck.Median(in); got != tt.want {
				t.Errorf("Median(%v) = %g, want %g", tt.xs, got, tt.want)
			}
			if !slices.Equal(in, tt.xs) {
				t.Errorf("Median modified its input: %v, was %v", in, tt.xs)
			}
		})
	}
}
