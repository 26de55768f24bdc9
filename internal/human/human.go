// Package human formats numbers for people: every measured value, delta, percentage and
// count that flipbench prints (terminal tables, progress lines, receipts, experiment
// pages, the site, the gate's summary, drift tables) goes through it, so they all read
// the same way.
//
// The rules, after benchstat and hyperfine:
//
//   - A value is scaled to its unit with an SI or binary prefix, as benchstat does
//     (golang.org/x/perf/benchunit): ns/op becomes seconds ("120.4µs", "3.50ms"), B/op
//     bytes ("12.0MiB"), any other unit keeps its name after the number ("1.20M rows/s",
//     "3 allocs"). Three significant digits, four from 100 up (one decimal), integers
//     below 1000 exactly.
//   - No number is ever written in e-notation.
//   - A delta is a signed percentage with one decimal ("-12.1%", "+0.4%"), and a factor
//     once the candidate takes at least twice the base ("x186" for 186 times the base, not
//     "+18500.0%"); an effect with its interval (DeltaCI) is a factor beyond 2x either way
//     ("x1/4.00" for a quarter of the base). A delta that rounds to zero is "0.0%", never
//     "-0.0%".
package human

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Value formats a measured value in its unit as a lane printed it: "120.4µs" (ns/op),
// "12.0MiB" (B/op), "3 allocs" (allocs/op), "1.20M rows/s". A value that is not finite
// is "-".
func Value(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	tv, tu := benchunit.Tidy(v, unit)
	return scaled(tv, tu) + unitSuffix(tu)
}

// Quantity formats a value for a column that already names its unit: like Value, but a
// unit other than a time or a byte count is left out ("1.20M" for 1.2e6 rows/s, "120.4µs"
// for ns/op, "12.0MiB" for B/op).
func Quantity(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	tv, tu := benchunit.Tidy(v, unit)
	suffix := unitSuffix(tu)
	if strings.HasPrefix(suffix, " ") {
		suffix = ""
	}
	return scaled(tv, tu) + suffix
}

// scaled formats a tidied value with the prefix its unit's class takes.
func scaled(v float64, unit string) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a < 1000 && a == math.Trunc(a) && !isTime(unit) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := benchunit.CommonScale([]float64{v}, benchunit.ClassOf(unit))
	x := v / s.Factor
	return Sig(x) + s.Prefix
}

// isTime reports whether a tidied unit is a time (seconds per something): those are scaled
// even when whole ("2.00s", not "2s").
func isTime(unit string) bool { return unit == "sec" || strings.HasPrefix(unit, "sec/") }

// unitSuffix returns what follows the number and its prefix for a tidied unit: "s" for
// sec/op, "B" for B/op, "s/row" for sec/row, " allocs" for allocs/op, " rows/s" for rows/s,
// "" for no unit.
func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	base, perOp := strings.CutSuffix(unit, "/op")
	if !perOp {
		base = unit
	}
	switch {
	case base == "sec":
		return "s"
	case strings.HasPrefix(base, "sec/"):
		return "s/" + strings.TrimPrefix(base, "sec/")
	case base == "B" || strings.HasPrefix(base, "B/"):
		return base
	}
	return " " + base
}

// Sig formats x with three significant digits, four from 100 up (one decimal), and never
// in e-notation: "3.50", "12.0", "120.4", "0.00123", "1234567.0".
func Sig(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x == 0:
		return "0"
	case a >= 9.995:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 0.9995:
		return strconv.FormatFloat(x, 'f', 2, 64)
	default:
		// Three significant digits of a number below 1: as many decimals as that takes.
		d := 2 - int(math.Floor(math.Log10(a)))
		return strconv.FormatFloat(x, 'f', min(d, 20), 64)
	}
}

// Num formats a plain number, a count or a threshold without a unit: integers exactly
// ("1048576"), a number of at most four significant digits as it is ("0.05", "0.125"),
// any other with Sig ("3.14").
func Num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if digits := strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ".", ""), "0"); len(digits) <= 4 {
		return s
	}
	return Sig(x)
}

// Tidy rewrites the signed zero deltas of text written by older flipbench versions ("-0.0%",
// "+0.0%") as "0.0%", so stored reasons read like new ones.
func Tidy(text string) string {
	if !strings.Contains(text, "0.0%") {
		return text
	}
	r := strings.NewReplacer("-0.0%", "0.0%", "+0.0%", "0.0%")
	return r.Replace(text)
}

// Bytes formats a byte count with a binary prefix: "12.0MiB", "512B".
func Bytes(b float64) string { return Value(b, "B") }

// Percent formats an unsigned percentage (a CV, a noise level, an MDE, a share): one
// decimal below 100 ("2.1%"), whole from 100 ("250%").
func Percent(p float64) string {
	switch {
	case math.IsNaN(p) || math.IsInf(p, 0):
		return "-"
	case math.Abs(p) >= 99.95:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
	s := strconv.FormatFloat(p, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return s + "%"
}

// Pct formats a signed percentage with one decimal: "-12.1%", "+0.4%", "0.0%" for
// anything that rounds to zero. Use Delta for a change that may be large.
func Pct(d float64) string {
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return "-"
	case d >= 99.95:
		return "+" + strconv.FormatFloat(d, 'f', 0, 64) + "%"
	case d <= -99.95:
		return strconv.FormatFloat(d, 'f', 0, 64) + "%"
	}
	s := strconv.FormatFloat(d, 'f', 1, 64)
	switch {
	case s == "0.0" || s == "-0.0":
		return "0.0%"
	case d > 0:
		return "+" + s + "%"
	}
	return s + "%"
}

// Delta formats a change given in percent of the base: a signed percentage ("-12.1%",
// "+95.3%"), or a factor once the change is at least twice the base ("x2.00", "x186"
// for +18500%). Improvements stay percentages: they lie between 0 and -100% (and a
// sign-flipped higher-is-better pass delta, which may go below -100%, has no factor to
// show).
func Delta(d float64) string {
	if d >= 100 && !math.IsInf(d, 0) {
		return "x" + factorDigits(1+d/100)
	}
	return Pct(d)
}

// DeltaCI formats an effect with its interval, all three in percent of the base and
// ratio-consistent (100 x (ratio - 1), as the drift check's estimates are): "-12.1%
// [-15.0%, -9.1%]", or as factors when the estimate is beyond 2x either way ("x186 [x170,
// x203]", "x1/4.00 [x1/5.00, x1/3.33]" for a candidate four times as fast).
func DeltaCI(est, lo, hi float64) string {
	r, rlo, rhi := 1+est/100, 1+lo/100, 1+hi/100
	if (r >= 2 || r > 0 && r <= 0.5) && rlo > 0 && !math.IsInf(est, 0) && !math.IsInf(hi, 0) {
		return ratio(r) + " [" + ratio(rlo) + ", " + ratio(rhi) + "]"
	}
	return Pct(est) + " [" + Pct(lo) + ", " + Pct(hi) + "]"
}

// ratio formats a positive ratio as a factor: "x2.13", "x186", "x1/4.00" below 1.
func ratio(r float64) string {
	if r < 1 {
		return "x1/" + factorDigits(1/r)
	}
	return "x" + factorDigits(r)
}

// factorDigits writes a factor of at least 1 with three significant digits, whole from
// 100: "2.13", "18.7", "186", "18900".
func factorDigits(f float64) string {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return "∞"
	case f >= 999.5:
		// Three significant digits, the rest zeros: x18900, not x18874.
		k := math.Pow(10, math.Floor(math.Log10(f))-2)
		return strconv.FormatFloat(math.Round(f/k)*k, 'f', 0, 64)
	case f >= 99.5:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 9.995:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// Spread formats a value with the half-width of its interval in percent of it, as
// benchstat does: "1.20ms ±2%"; "±∞" when there is no interval.
func Spread(v, lo, hi float64, unit string, bounded bool) string {
	s := Value(v, unit)
	if !bounded {
		return s + " ±∞"
	}
	if v == 0 {
		return s
	}
	w := math.Max(hi-v, v-lo) / math.Abs(v) * 100
	if w < 0.95 {
		return s + " ±" + strconv.FormatFloat(w, 'f', 1, 64) + "%"
	}
	return s + " ±" + strconv.FormatFloat(w, 'f', 0, 64) + "%"
}
