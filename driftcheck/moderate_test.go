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

// TestModerateCalibration: a host calibration lends its degrees of freedom, capped, on
// top of the group's prior; a lane whose own noise is far above the calibration keeps the
// group's posterior; no calibration, or a cap of 0, changes nothing.
func TestModerateCalibration(t *testing.T) {
	group := prior{s0sq: 4, d0: 6}
	cal := calibrated(&CalibratedNoise{DeltaPct: 100, DF: 30}, 4) // variance 1, 4 df lent
	if cal.s0sq != 1 || cal.d0 != 4 {
		t.Fatalf("calibrated prior %+v, want variance 1 on 4 df", cal)
	}
	v, d, lent := moderate(2, 2, group, cal)
	// group: (6*4 + 2*2)/8 = 3.5 on 8 df; calibration: (4*1 + 8*3.5)/12 = 32/12 on 12 df
	if math.Abs(v-32.0/12) > 1e-12 || d != 12 || lent != 4 {
		t.Errorf("moderated %g on %g df (%g lent), want %g on 12 (4 lent)", v, d, lent, 32.0/12)
	}
	if v, d, lent := moderate(40, 2, prior{}, cal); v != 40 || d != 2 || lent != 0 { // 40 is far above the calibration's 1
		t.Errorf("a lane far noisier than its calibration: %g on %g df, want its own 40 on 2", v, d)
	}
	if v, d, _ := moderate(0, 0, prior{}, cal); v != 1 || d != 4 { // no pair of its own yet
		t.Errorf("no own estimate: %g on %g df, want the calibration's 1 on 4", v, d)
	}
	for _, none := range []prior{calibrated(nil, 4), calibrated(&CalibratedNoise{DeltaPct: 100, DF: 30}, 0)} {
		if v, d, _ := moderate(2, 2, group, none); v != 3.5 || d != 8 {
			t.Errorf("without a calibration: %g on %g df, want the group's 3.5 on 8", v, d)
		}
	}
}
