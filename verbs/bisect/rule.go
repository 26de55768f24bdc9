package bisect

import (
	"fmt"
	"math"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
)

// Halfway is the mark a midpoint is judged against: half of the GOOD->BAD effect
// totalPct on the log scale (the geometric middle of GOOD's and BAD's times), so that a
// 2x slowdown (+100%) has its mark at +41.4% and a halving (-50%) at -29.3%.
func Halfway(totalPct float64) float64 {
	return 100 * (math.Sqrt(1+totalPct/100) - 1)
}

// Classify decides the side of a midpoint M from its effect e against GOOD, the
// GOOD->BAD effect total and the halfway mark (in the hunted direction dir):
//
//   - bad, when e's interval lies wholly beyond the mark: more than half of the change
//     happened at or before M;
//   - good, when e's interval lies wholly short of the mark;
//   - undecided otherwise (the interval holds the mark, or there is none yet), with the
//     pairs per collection that would about halve the interval enough.
//
// between is set when e shows M measurably between GOOD and BAD (its interval beyond 0
// and short of the GOOD->BAD interval) or beyond either end: more than one commit of the
// range changed the lane.
func Classify(e, total Effect, markPct float64, dir Direction) (side Side, reason, between string) {
	s := dir.sign()
	lo, hi := oriented(e, s)
	mark := s * markPct
	tlo, thi := oriented(total, s)
	eff := EffectText(e)
	switch {
	case !e.Bounded:
		side, reason = SideUndecided, fmt.Sprintf("effect %s against GOOD has no interval yet; measure at least 2 pass pairs (--max-pairs)", eff)
	case lo > mark:
		side, reason = SideBad, fmt.Sprintf("effect %s against GOOD lies beyond the halfway mark %s", eff, human.Pct(markPct))
	case hi < mark:
		side, reason = SideGood, fmt.Sprintf("effect %s against GOOD lies short of the halfway mark %s", eff, human.Pct(markPct))
	default:
		side = SideUndecided
		reason = fmt.Sprintf("effect %s against GOOD holds the halfway mark %s after %d pass pairs", eff, human.Pct(markPct), e.Pairs)
		if n := pairsForMark(e, markPct); n > 0 {
			reason += fmt.Sprintf("; about %d pairs per collection would decide it: rerun with --max-pairs %d (and a --budget that buys them) and --resume", n, n)
		} else {
			reason += "; its estimate is at the mark, so more pairs may not decide it: the midpoint may hold part of the change (two or more step changes)"
		}
	}
	if e.Bounded && total.Bounded {
		switch {
		case lo > 0 && hi < tlo:
			between = fmt.Sprintf("measured between GOOD and BAD (%s against GOOD, GOOD->BAD %s)", eff, EffectText(total))
		case hi < 0:
			between = fmt.Sprintf("measured beyond GOOD, the other way (%s against GOOD)", eff)
		case lo > thi:
			between = fmt.Sprintf("measured beyond BAD (%s against GOOD, GOOD->BAD %s)", eff, EffectText(total))
		}
	}
	return side, reason, between
}

// oriented returns e's interval times sign s, low end first.
func oriented(e Effect, s float64) (lo, hi float64) {
	if s > 0 {
		return e.LowPct, e.HighPct
	}
	return -e.HighPct, -e.LowPct
}

// pairsForMark estimates the usable pairs per collection at which e's interval, shrinking
// as one over the square root of the pairs, would no longer hold the mark: 0 when the
// estimate is at the mark or there is no interval.
func pairsForMark(e Effect, markPct float64) int {
	if !e.Bounded || e.Pairs <= 0 || e.LowPct <= -100 {
		return 0
	}
	half := (math.Log1p(e.HighPct/100) - math.Log1p(e.LowPct/100)) / 2
	d := math.Abs(math.Log1p(e.EstimatePct/100) - math.Log1p(markPct/100))
	if d < 1e-9 || half <= 0 {
		return 0
	}
	n := math.Ceil(float64(e.Pairs) * (half / d) * (half / d))
	if n > 1000 {
		return 0
	}
	return max(int(n), e.Pairs+1)
}

// Whole says why a step effect is not the whole GOOD->BAD change ("" when it may be): its
// interval lies short of the GOOD->BAD interval (other commits carry the rest) or beyond
// it (a later commit took part of it back).
func Whole(step, total Effect, dir Direction) string {
	if !step.Bounded || !total.Bounded {
		return ""
	}
	s := dir.sign()
	lo, hi := oriented(step, s)
	tlo, thi := oriented(total, s)
	switch {
	case hi < tlo:
		return fmt.Sprintf("is %s, less than GOOD->BAD %s: other commits of the range carry the rest", EffectText(step), EffectText(total))
	case lo > thi:
		return fmt.Sprintf("is %s, more than GOOD->BAD %s: a later commit of the range took part of it back", EffectText(step), EffectText(total))
	}
	return ""
}

// StepReason says what the step's own comparison showed.
func StepReason(step, total Effect, dir Direction) string {
	if step.Verdict == dir.verdict() {
		if Whole(step, total, dir) == "" {
			return fmt.Sprintf("%s, %s: the whole GOOD->BAD change (%s) as far as the intervals tell", EffectText(step), step.Verdict, EffectText(total))
		}
		return fmt.Sprintf("%s, %s", EffectText(step), step.Verdict)
	}
	return fmt.Sprintf("%s, %s: the step measured alone is not reproduced %s (%s); the search's steps were, but check it with more pairs", EffectText(step), step.Verdict, dir, step.Reason)
}

// EffectText formats an effect with its interval: "+98.0% [+90.0%, +106.5%] (1.98x
// slower)".
func EffectText(e Effect) string {
	switch {
	case e.Bounded:
		return human.DeltaCI(e.EstimatePct, e.LowPct, e.HighPct)
	case e.Pairs == 0:
		return "(no usable pair)"
	}
	return human.Delta(e.EstimatePct) + " (no interval)"
}

// buildReason says in one line why a commit does not build: the compiler's first error
// (the first line after the first that is not a "# package" header), or else the
// error's first line.
func buildReason(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return "does not build: " + l
		}
	}
	return "does not build: " + firstLine(err.Error())
}

// firstLine returns the first non-empty line of s.
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return s
}

// joinSemi joins parts with "; ".
func joinSemi(parts []string) string { return strings.Join(parts, "; ") }
