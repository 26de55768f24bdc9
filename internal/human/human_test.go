package human

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{120400, "ns/op", "120.4µs"},
		{3.5e6, "ns/op", "3.50ms"},
		{171000, "ns/op", "171.0µs"},
		{12.5, "ns/op", "12.5ns"},
		{2e9, "ns/op", "2.00s"},
		{0, "ns/op", "0s"},
		{0.25, "ns/op", "0.250ns"},
		{12 << 20, "B/op", "12.0MiB"},
		{512, "B/op", "512B"},
		{1536, "B/op", "1.50KiB"},
		{3, "allocs/op", "3 allocs"},
		{1234567, "allocs/op", "1.23M allocs"},
		{1.5e6, "rows/s", "1.50M rows/s"},
		{42, "", "42"},
		{4.2, "", "4.20"},
		{5e6, "MB/s", "4.55TiB/s"},
		{250, "ns/row", "250.0ns/row"},
		{math.NaN(), "ns/op", "-"},
		{1e-5, "ns/op", "0.0100ps"},
	} {
		got := Value(c.v, c.unit)
		if c.want == "0.0100ps" {
			// Below the smallest prefix benchunit knows: no e-notation, whatever the digits.
			if ePattern.MatchString(got) {
				t.Errorf("Value(%g, %q) = %q: e-notation", c.v, c.unit, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Value(%g, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestDelta(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{
		{-12.14, "-12.1%"},
		{0.44, "+0.4%"},
		{-0.04, "0.0%"},
		{0.04, "0.0%"},
		{0, "0.0%"},
		{95.3, "+95.3%"},
		{100, "+100% (2.00x slower)"},
		{18874.2, "+18874% (190x slower)"},
		{18500, "+18500% (186x slower)"},
		{-50, "-50.0% (2.00x faster)"},
		{-52.2, "-52.2% (2.09x faster)"},
		{-49, "-49.0%"},
		{-75, "-75.0% (4.00x faster)"},
		{-99.46, "-99.5% (185x faster)"},
		{-99.95, "> 1000x faster"},
		{-250, "-250%"},
		{1e9, "> 1000x slower"},
		{99900, "> 1000x slower"},
		{99800, "+99800% (999x slower)"},
	} {
		if got := Delta(c.d); got != c.want {
			t.Errorf("Delta(%g) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestDeltaCI(t *testing.T) {
	for _, c := range []struct {
		est, lo, hi float64
		want        string
	}{
		{-12.1, -15, -9.1, "-12.1% [-15.0%, -9.1%] (1.14x faster)"},
		{-0.01, -0.3, 0.2, "0.0% [-0.3%, +0.2%]"},
		{18500, 16900, 20200, "+18500% [+16900%, +20200%] (186x slower)"},
		{150, 90, 210, "+150% [+90.0%, +210%] (2.50x slower)"},
		{120, -20, 260, "+120% [-20.0%, +260%] (2.20x slower)"},
		{-75, -80, -70, "-75.0% [-80.0%, -70.0%] (4.00x faster)"},
		{-52.2, -55, -49, "-52.2% [-55.0%, -49.0%] (2.09x faster)"},
		{12, 8, 16, "+12.0% [+8.0%, +16.0%] (1.12x slower)"},
		{-9.5, -12, -7, "-9.5% [-12.0%, -7.0%] (1.10x faster)"},
		{9.5, 7, 12, "+9.5% [+7.0%, +12.0%]"},
		{-99.99999, -99.999999, -99.9999, "> 1000x faster"},
		{-49, -52, -46, "-49.0% [-52.0%, -46.0%] (1.96x faster)"},
		// Intervals that say nothing are not printed.
		{4.5, -100, 99999900, "+4.5% (needs more pairs)"},
		{4.5, math.Inf(-1), math.Inf(1), "+4.5% (needs more pairs)"},
		{20, -90, 2000, "+20.0% (needs more pairs)"},
		{math.NaN(), 0, 0, "-"},
	} {
		if got := DeltaCI(c.est, c.lo, c.hi); got != c.want {
			t.Errorf("DeltaCI(%g, %g, %g) = %q, want %q", c.est, c.lo, c.hi, got, c.want)
		}
	}
}

func TestPctPercentNum(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Pct(-0.049), "0.0%"},
		{Pct(3.25), "+3.2%"},
		{Pct(-120), "-120%"},
		{Pct(121.4), "+121%"},
		{Percent(2.14), "2.1%"},
		{Percent(-0.01), "0.0%"},
		{Percent(250), "250%"},
		{Num(1048576), "1048576"},
		{Num(1e12), "1000000000000"},
		{Num(0.125), "0.125"},
		{Num(3.14159), "3.14"},
		{Num(1e-7), "0.0000001"},
		{Num(0.05), "0.05"},
		{Num(1234.56), "1234.6"},
		{Sig(1234567.8), "1234567.8"},
		{Bytes(12 << 20), "12.0MiB"},
		{Quantity(1.2e6, "rows/s"), "1.20M"},
		{Tidy("effect -0.0% [-10.0%, +0.0%] and +0.0% then -20.0%"), "effect 0.0% [-10.0%, 0.0%] and 0.0% then -20.0%"},
		{Quantity(70, "usable/s"), "70"},
		{Quantity(120400, "ns/op"), "120.4µs"},
		{Quantity(2048, "B/op"), "2.00KiB"},
		{Spread(1.2e6, 1.18e6, 1.23e6, "ns/op", true), "1.20ms ±2%"},
		{Spread(1.2e6, 1.199e6, 1.201e6, "ns/op", true), "1.20ms ±0.1%"},
		{Spread(1.2e6, 0, 0, "ns/op", false), "1.20ms"},
		{Factor(-52.2), "2.09x faster"},
		{Factor(12), "1.12x slower"},
		{Factor(0), "unchanged"},
		{Amount(100), "+100% (2.00x more)"},
		{Amount(-75), "-75.0% (4.00x less)"},
		{Amount(20), "+20.0%"},
		{Factor(-150), ""},
		{Factor(1e6), "> 1000x slower"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// ePattern matches a number in e-notation.
var ePattern = regexp.MustCompile(`[0-9][eE][-+]?[0-9]`)

// TestNoENotation formats values across thirty orders of magnitude with every function
// and checks that none is written in e-notation and no zero carries a minus sign.
func TestNoENotation(t *testing.T) {
	units := []string{"ns/op", "B/op", "allocs/op", "rows/s", "", "MB/s", "instructions/op"}
	for exp := -15; exp <= 15; exp++ {
		for _, m := range []float64{1, 1.234, 9.9999, -3.3} {
			x := m * math.Pow(10, float64(exp))
			outs := []string{Sig(x), Num(x), Percent(x), Pct(x), Delta(x), DeltaCI(x, x/2, x*2), Bytes(math.Abs(x)),
				Spread(math.Abs(x), math.Abs(x)*0.9, math.Abs(x)*1.1, "ns/op", true)}
			for _, u := range units {
				outs = append(outs, Value(x, u))
			}
			for _, s := range outs {
				if ePattern.MatchString(s) {
					t.Errorf("%g: %q is in e-notation", x, s)
				}
				if strings.Contains(s, "x1/") || strings.Contains(s, "∞") {
					t.Errorf("%g: %q writes a reciprocal factor or an infinity", x, s)
				}
				if regexp.MustCompile(`-0\.0+%|-0%`).MatchString(s) {
					t.Errorf("%g: %q is a negative zero", x, s)
				}
			}
		}
	}
}

func TestRoundUp(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{1500 * time.Millisecond, 2 * time.Second},
		{3 * time.Second, 3 * time.Second},
		{10 * time.Minute, 10 * time.Minute},
		{10*time.Minute + time.Second, 11 * time.Minute},
	} {
		if got := RoundUp(tc.in); got != tc.want {
			t.Errorf("RoundUp(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestBeyondSpreadLimit: spreads and MDEs beyond a factor ten are not written in digits.
func TestBeyondSpreadLimit(t *testing.T) {
	if got, want := Spread(118, 0, 118*1006.72, "B", true), Value(118, "B")+" ±>1000%"; got != want {
		t.Errorf("Spread = %q, want %q", got, want)
	}
	if got, want := Spread(118, 118*0.98, 118*1.02, "B", true), Value(118, "B")+" ±2%"; got != want {
		t.Errorf("Spread = %q, want %q", got, want)
	}
	if got, want := MDE(33101035), ">1000%"; got != want {
		t.Errorf("MDE = %q, want %q", got, want)
	}
	if got, want := MDE(4.21), "4.2%"; got != want {
		t.Errorf("MDE = %q, want %q", got, want)
	}
}
