package driftcheck

import (
	"fmt"
	"math"
)

// Censored runs. A run killed at the protocol's timeout gives no samples, but it is not
// silent: its level per operation is known to be at least a bound (Observation.AtLeast,
// the wall time until the kill over the operations it had to do). Its pass delta is then
// known on one side only: at least ln(bound/base) when the candidate timed out (the
// delta's numerator), at most ln(cand/bound) when the base did (its denominator; the
// reverse for a higher-is-better lane, whose ratio is inverted).
//
// Such a pass enters its lane conservatively for every verdict:
//
//   - a lane with a pass bounded below (its candidate timed out) is never reproduced faster
//     and never neutral: whatever the other passes say, the candidate sometimes takes at
//     least the bound, which no faster or unchanged candidate does. It rules out no
//     regression either (no upper bound, UpperBelow false), so a guard is never cleared by
//     it. Symmetrically a lane with a pass bounded above (its base timed out) is never
//     reproduced slower or neutral.
//   - For the one direction it can support, the pass's log ratio is replaced by the
//     smaller of its bound and the largest delta the lane measured in a pass of its own
//     (uncensored, usable, not set aside) with that candidate: at least as slow as the
//     slowest measured pass, no more (the larger of the bound and the smallest, for a
//     pass bounded above). The value is at most what the pass would have measured, so a
//     lane reproduced slower with it would be reproduced slower with the truth (more
//     slowness is more evidence); and it lies inside the lane's own range, so a timeout
//     of a thousand times a normal run does not inflate the lane's noise by as much and
//     hide the effect the other passes show.
//
// In an A/A run whose processes time out as often in either arm, a substituted pass is a
// draw from the top (or bottom) of the lane's own deltas, as often up as down, so the
// substituted data stay symmetric about 0 and the lane's t interval keeps its error rate;
// the rule then only takes verdicts away (a lane with passes bounded both ways cannot be
// decided), never adds one. The simulation (cmd/simtables/sim, the rule table's timeout worlds)
// measures both: the A/A rate, and a candidate 30% slower that times out in 10% of its
// runs reproduced slower.

// Bounds of a censored pass delta (PassDelta.Bound).
const (
	// BoundAtLeast: the pass's delta is at least DeltaPct (the candidate timed out).
	BoundAtLeast = "at-least"
	// BoundAtMost: the pass's delta is at most DeltaPct (the base timed out).
	BoundAtMost = "at-most"
)

// censored reports whether a run gave no samples but a bound.
func (r run) censored() bool { return r.present && len(r.values) == 0 && r.bound > 0 }

// censoredDelta compares one candidate run with the base run of the same pass when either
// timed out with a bound: the delta of the bound, as a lower or upper bound of the pass's
// delta. ok is false when neither is censored.
func censoredDelta(pd PassDelta, b, k run, lane Lane, base, cand string) (PassDelta, bool) {
	if !b.censored() && !k.censored() {
		return pd, false
	}
	if b.censored() && k.censored() {
		pd.Note = "both arms timed out: no delta"
		return pd, true
	}
	other, otherArm := k, cand
	pd.Censored = SideBase
	if k.censored() {
		other, otherArm = b, base
		pd.Censored = SideCandidate
	}
	if n := sideNote(other, otherArm); n != "" {
		pd.Note = fmt.Sprintf("%s timed out; %s", armOf(pd.Censored, base, cand), n)
		return pd, true
	}
	if other.median <= 0 {
		pd.Note = fmt.Sprintf("%s timed out; %s median is 0", armOf(pd.Censored, base, cand), otherArm)
		return pd, true
	}
	bv, kv := b.median, k.median
	if b.censored() {
		bv = b.bound
	} else {
		kv = k.bound
	}
	num, den := kv, bv
	// The censored side's value is a lower bound, so the ratio is bounded below when it
	// is the numerator and above when it is the denominator.
	pd.Bound = BoundAtLeast
	if lane.HigherIsBetter {
		num, den = den, num
	}
	if (pd.Censored == SideCandidate) == lane.HigherIsBetter {
		pd.Bound = BoundAtMost
	}
	pd.Usable = true
	pd.LogRatio = math.Max(-maxLogRatio, math.Min(maxLogRatio, math.Log(num/den)))
	pd.DeltaPct = toPct(pd.LogRatio)
	pd.Note = fmt.Sprintf("%s timed out: delta %s", armOf(pd.Censored, base, cand), boundText(pd))
	return pd, true
}

// armOf names the arm of a side.
func armOf(side, base, cand string) string {
	if side == SideBase {
		return base
	}
	return cand
}

// boundText formats a censored pass delta: "at least x100", "at most -99.0%".
func boundText(pd PassDelta) string {
	if pd.Bound == BoundAtMost {
		return "at most " + fmtDelta(pd.DeltaPct)
	}
	return "at least " + fmtDelta(pd.DeltaPct)
}

// passText formats a pass delta for a pair's reason, a censored one as its bound.
func passText(pd PassDelta) string {
	if pd.Bound != "" {
		return boundText(pd)
	}
	return fmtDelta(pd.DeltaPct)
}

// material reports whether a usable pass's delta is known to be at least materialLog away
// from 0: a censored one only when its bound is, in its own direction.
func material(pd PassDelta, materialLog float64) bool {
	switch pd.Bound {
	case BoundAtLeast:
		return pd.LogRatio >= materialLog
	case BoundAtMost:
		return pd.LogRatio <= -materialLog
	}
	return math.Abs(pd.LogRatio) >= materialLog
}

// extremes are the smallest and largest log ratio of a lane's measured (uncensored)
// usable passes with one candidate, which a censored pass's substitute is clamped to.
type extremes struct {
	lo, hi float64
	ok     bool
}

// add takes a measured pass's log ratio into the extremes.
func (e *extremes) add(x float64) {
	if !e.ok {
		e.lo, e.hi, e.ok = x, x, true
		return
	}
	e.lo, e.hi = math.Min(e.lo, x), math.Max(e.hi, x)
}

// value returns the log ratio a pass enters the lane's statistics with: its own, or for
// a censored one the substitute that is conservative for the one direction it supports.
func (e extremes) value(pd PassDelta) float64 {
	switch {
	case pd.Bound == BoundAtLeast && e.ok:
		return math.Min(pd.LogRatio, e.hi)
	case pd.Bound == BoundAtMost && e.ok:
		return math.Max(pd.LogRatio, e.lo)
	}
	return pd.LogRatio
}

// censor keeps a summary from the verdicts its censored passes cannot support, and from
// ruling out what they do not rule out: with a pass bounded below (the candidate timed
// out) no reproduced-faster, no neutral and no bound on a regression; with one bounded
// above, no reproduced-slower, no neutral and no bound on an improvement.
func censor(s *LaneSummary) {
	up, down := s.CensoredSlower, s.CensoredFaster
	if up == 0 && down == 0 {
		return
	}
	blocked := false
	switch s.Verdict {
	case LaneReproducedFaster:
		blocked = up > 0
	case LaneReproducedSlower:
		blocked = down > 0
	case LaneNeutral:
		blocked = true
	}
	if blocked {
		s.Reason = fmt.Sprintf("would read %s, but %s; %s", s.Verdict, censoredText(*s), s.Reason)
		s.Verdict = LaneUndecided
	}
	if up > 0 {
		s.NoWorseThanPct = 0
	}
	if down > 0 {
		s.NoBetterThanPct = 0
	}
}

// censoredText says which censored passes a summary holds and what they allow: "the
// candidate timed out in 2 passes, which count toward slower only".
func censoredText(s LaneSummary) string {
	var parts []string
	if s.CensoredSlower > 0 {
		parts = append(parts, fmt.Sprintf("%s timed out in %s, which count toward slower only", s.Arm, passesText(s.CensoredSlower)))
	}
	if s.CensoredFaster > 0 {
		parts = append(parts, fmt.Sprintf("the base timed out in %s, which count toward faster only", passesText(s.CensoredFaster)))
	}
	return joinSemi(parts)
}

// passesText counts passes: "1 pass", "3 passes".
func passesText(n int) string {
	if n == 1 {
		return "1 pass"
	}
	return fmt.Sprintf("%d passes", n)
}

// unfinished lists the runs of in (every attempt: full) that gave no samples, with what
// became of each one's pass: measured again (a later attempt analysed: chosen holds the
// attempt analysed of each pass measured again), entered as a censored bound (rep's pass
// deltas say so), or left without a delta.
func unfinished(full Input, chosen map[passKey]int, rep *Report) []Unfinished {
	out := []Unfinished{}
	higher := map[string]bool{}
	for _, l := range full.Lanes {
		higher[l.Name] = l.HigherIsBetter
	}
	for _, o := range full.Observations {
		if len(o.Samples) > 0 {
			continue
		}
		u := Unfinished{Lane: o.Lane, Arm: o.Arm, Collection: o.Collection, Pass: o.Pass, Attempt: o.Attempt, Error: o.Failed, TimedOut: o.TimedOut, AtLeast: o.AtLeast}
		if u.Error == "" {
			u.Error = "no samples"
		}
		k := passKey{o.Collection, o.Pass, o.Lane}
		switch a, again := chosen[k]; {
		case again && a > o.Attempt:
			u.Remeasured = true
			u.Outcome = fmt.Sprintf("its lane's pass was measured again (measurement %d is analysed)", a+1)
		default:
			u.Outcome = passFate(&u, full.Base, higher[o.Lane], rep)
		}
		out = append(out, u)
	}
	return out
}

// passFate says what became of the pass of an unfinished run that was not measured again,
// and marks it censored when its bound entered a pass delta.
func passFate(u *Unfinished, base string, higher bool, rep *Report) string {
	var notes []string
	for _, pd := range rep.Passes {
		if pd.Lane != u.Lane || pd.Collection != u.Collection || pd.Pass != u.Pass || (u.Arm != base && pd.Arm != u.Arm) {
			continue
		}
		if pd.Bound != "" {
			u.Censored = true
			continue
		}
		notes = append(notes, pd.Note)
	}
	pair := (u.Pass + 1) / 2
	switch {
	case u.Censored:
		u.Toward = DirectionFaster
		if (u.Arm != base) != higher {
			u.Toward = DirectionSlower
		}
		return fmt.Sprintf("censored: its pair %d counts toward %s only (a timed-out run's level is at least its bound)", pair, u.Toward)
	case len(notes) > 0:
		return fmt.Sprintf("its pass has no delta (%s): pair %d insufficient", notes[0], pair)
	}
	return fmt.Sprintf("pair %d insufficient", pair)
}
