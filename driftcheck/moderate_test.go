package driftcheck

import (
	"math"
	"testing"
)

// TestNoiseAtLeast checks the optimistic end of a noise estimate against the chi-square
// quantiles: at 2 degrees of freedom and 90%, q(chi^2_2) = 4.605, so the end is
// sqrt(2/4.605) = 0.659 of the estimate (Wilson-Hilferty gives 0.662); at 200, 0.94; none
// without degrees of freedom.
func TestNoiseAtLeast(t *testing.T) {
	for _, tt := range []struct{ df, want float64 }{{2, 0.659}, {200, 0.940}, {0, 1}} {
		if got := NoiseAtLeast(1, tt.df, 0.9); math.Abs(got-tt.want) > 0.005 {
			t.Errorf("df %g: %.4f, want about %.3f", tt.df, got, tt.want)
		}
	}
}
