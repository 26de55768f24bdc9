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
//   - A delta is a signed percentage with one decimal ("-12.1%", "+0.4%"); a change of
//     twice or half the base adds its factor in words ("-52.2% (2.09x faster)", "+100%
//     (2.00x slower)"), never a reciprocal ("x1/2.09"). An effect with its interval
//     (DeltaCI) adds the factor from a 10% change ("+12.0% [+8.0%, +16.0%] (1.12x
//     slower)"); an interval too wide to mean anything is "needs more pairs", never
//     printed unbounded; a factor beyond 1000 is "> 1000x slower". A delta that rounds
//     to zero is "0.0%", never "-0.0%".
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

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

// Count writes n with the singular or the plural noun: "1 collection", "4 passes".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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

// FactorLimit is the largest factor written as a number: a change beyond it is "> 1000x
// slower" (or faster), with no percentage, which would be six digits or more.
const FactorLimit = 1000

// FactorFrom is the ratio from which an effect with its interval (DeltaCI) adds its
// factor in words: a change of 10% or more either way ("+12.0% ... (1.12x slower)").
const FactorFrom = 1.1

// SpanLimit is the widest interval DeltaCI prints, as the ratio of its upper to its lower
// end: an interval spanning more than a factor of 100 (or one with an end at or below
// -100%) says nothing a reader can use, and is written "needs more pairs".
const SpanLimit = 100

// Delta formats a change given in percent of the base: a signed percentage ("-12.1%",
// "+95.3%"), with the factor in words once the candidate takes at least twice the base
// or at most half ("+100% (2.00x slower)", "-52.2% (2.09x faster)"), and the factor alone
// beyond FactorLimit ("> 1000x slower"). A sign-flipped higher-is-better delta below
// -100% has no factor and stays a percentage.
func Delta(d float64) string { return deltaWords(d, "slower", "faster") }

// Amount formats a change of an amount (bytes, allocations, a count, a peak RSS) as Delta
// does, the factor in words "more" and "less": "+100% (2.00x more)", "-75.0% (4.00x
// less)".
func Amount(d float64) string { return deltaWords(d, "more", "less") }

// deltaWords is Delta with the words for a larger and a smaller candidate.
func deltaWords(d float64, up, down string) string {
	switch r := 1 + d/100; {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return "-"
	case r >= FactorLimit || r > 0 && r <= 1.0/FactorLimit:
		return factorIn(d, up, down)
	case r >= 2 || r > 0 && r <= 0.5:
		return Pct(d) + " (" + factorIn(d, up, down) + ")"
	}
	return Pct(d)
}

// Factor writes a change given in percent of the base as a factor in words: "2.09x
// faster" for -52.2%, "1.12x slower" for +12%, "> 1000x slower" beyond FactorLimit,
// "unchanged" for 0, and "" when the change has no factor (a sign-flipped
// higher-is-better delta at or below -100%, or a value that is not finite).
func Factor(d float64) string { return factorIn(d, "slower", "faster") }

// factorIn is Factor with the words for a larger and a smaller candidate.
func factorIn(d float64, up, down string) string {
	r := 1 + d/100
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0) || r <= 0:
		return ""
	case r == 1:
		return "unchanged"
	case r > 1:
		return factorWords(r, up)
	}
	return factorWords(1/r, down)
}

// factorWords writes f (at least 1) with its direction: "2.09x faster", "> 1000x slower".
func factorWords(f float64, dir string) string {
	if f >= FactorLimit-0.5 {
		return "> " + strconv.Itoa(FactorLimit) + "x " + dir
	}
	return factorDigits(f) + "x " + dir
}

// DeltaCI formats an effect with its interval, all three in percent of the base and
// ratio-consistent (100 x (ratio - 1), as the drift check's estimates are): "-12.1%
// [-15.0%, -9.1%]", with the factor in words from FactorFrom ("-52.2% [-55.0%, -49.0%]
// (2.09x faster)", "+12.0% [+8.0%, +16.0%] (1.12x slower)"). An interval that spans more
// than SpanLimit, or reaches -100%, is not printed: "+4.5% (needs more pairs)". An
// estimate beyond FactorLimit is its factor alone ("> 1000x slower").
func DeltaCI(est, lo, hi float64) string {
	r := 1 + est/100
	switch {
	case math.IsNaN(est) || math.IsInf(est, 0):
		return "-"
	case r >= FactorLimit || r > 0 && r <= 1.0/FactorLimit:
		return Factor(est)
	case !Bounded(lo, hi):
		return Pct(est) + " (needs more pairs)"
	}
	s := Pct(est) + " [" + Pct(lo) + ", " + Pct(hi) + "]"
	if r >= FactorFrom || r > 0 && r <= 1/FactorFrom {
		s += " (" + Factor(est) + ")"
	}
	return s
}

// Bounded reports whether an interval in percent of the base is one DeltaCI prints: both
// ends finite, the lower above -100%, spanning at most a factor of SpanLimit.
func Bounded(lo, hi float64) bool {
	rlo, rhi := 1+lo/100, 1+hi/100
	return !math.IsNaN(lo) && !math.IsNaN(hi) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) &&
		rlo > 0 && rhi/rlo <= SpanLimit
}

// factorDigits writes a factor of at least 1 with three significant digits, whole from
// 100: "2.13", "18.7", "186".
func factorDigits(f float64) string {
	switch {
	case f >= 99.5:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 9.995:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// Spread formats a value with the half-width of its interval in percent of it, as
// benchstat does: "1.20ms ±2%"; the value alone when there is no interval (never "±∞").
func Spread(v, lo, hi float64, unit string, bounded bool) string {
	s := Value(v, unit)
	if !bounded || v == 0 {
		return s
	}
	w := math.Max(hi-v, v-lo) / math.Abs(v) * 100
	switch {
	case w > SpreadLimit:
		// Processes a factor ten or more apart: the digits would say nothing more.
		return s + " ±>" + strconv.Itoa(SpreadLimit) + "%"
	case w < 0.95:
		return s + " ±" + strconv.FormatFloat(w, 'f', 1, 64) + "%"
	}
	return s + " ±" + strconv.FormatFloat(w, 'f', 0, 64) + "%"
}

// SpreadLimit is the widest half-width, in percent of the value, Spread and MDE write
// in digits; beyond it they write ">1000%" ("1.18µs ±100572%" and "MDE 33101035%" said
// no more).
const SpreadLimit = 1000

// MDE formats a minimum detectable effect in percent: "4.2%", ">1000%" beyond
// SpreadLimit.
func MDE(pct float64) string {
	if pct > SpreadLimit {
		return ">" + strconv.Itoa(SpreadLimit) + "%"
	}
	return Percent(pct)
}

// RoundUp rounds a duration up for a person: to whole seconds, to whole minutes beyond ten
// minutes (a budget to ask for, a time a run would take).
func RoundUp(d time.Duration) time.Duration {
	unit := time.Second
	if d > 10*time.Minute {
		unit = time.Minute
	}
	return (d + unit - 1).Truncate(unit)
}

// Level formats a confidence level given as a fraction: 0.9 is "90%", 0.975 "97.5%".
func Level(c float64) string { return Num(math.Round(c*1000)/10) + "%" }
