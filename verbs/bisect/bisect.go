// Package bisect finds the commit of a first-parent history where a Go benchmark got
// slower (or faster), answering every step with order-flipped pass pairs and an interval
// instead of one noisy yes or no.
//
// A bisection is a sequence of comparisons, each one flipbench compare of two commits
// (PipelineMeasurer: arms built from git and cached by tree, the sequential protocol,
// a receipt):
//
//  1. the baseline, GOOD against BAD, which must reproduce the change in the hunted
//     direction (Slower, or Faster for an improvement hunt); otherwise the bisection is
//     refused with the numbers;
//  2. midpoints of the first-parent history GOOD..BAD, each against GOOD, measured until
//     its interval lies wholly on one side of the halfway mark (Halfway: half of the
//     GOOD->BAD effect on the log scale) or its budget is spent: beyond the mark the
//     midpoint is bad, short of it good (Classify); a commit that does not build is
//     skipped, as git bisect skip does; a step that cannot be decided stops the search
//     as undecided, saying how many pairs it would need;
//  3. the step itself: the first bad commit against the last good one (its first
//     parent, unless skipped commits lie between), whose effect and interval the summary
//     gives; a step effect that is only part of GOOD->BAD, or a midpoint measured
//     between GOOD and BAD, means two or more step changes in the range, and the outcome
//     says so.
//
// Run drives the search over any Measurer, so the search and the rule are tested with a
// fake one; the outcome is data (Outcome), rendered by Write.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// Direction is what the bisection hunts: the first commit that made the lane slower, or
// faster.
type Direction string

// The directions.
const (
	Slower Direction = "slower"
	Faster Direction = "faster"
)

// sign is +1 for Slower and -1 for Faster: effects times sign are positive in the hunted
// direction.
func (d Direction) sign() float64 {
	if d == Faster {
		return -1
	}
	return 1
}

// verdict is the lane verdict that reproduces the direction.
func (d Direction) verdict() driftcheck.LaneVerdict {
	if d == Faster {
		return driftcheck.LaneReproducedFaster
	}
	return driftcheck.LaneReproducedSlower
}

// Commit is one commit: its full hash and subject.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// Short is the commit's abbreviated hash.
func (c Commit) Short() string { return receipt.ShortHash(c.Hash) }

// Range is the history a bisection searches: GOOD, BAD, and the first-parent commits
// from GOOD (exclusive) to BAD (inclusive), oldest first, so BAD is the last.
type Range struct {
	Good    Commit   `json:"good"`
	Bad     Commit   `json:"bad"`
	Commits []Commit `json:"commits"`
}

// Effect is one lane's pooled evidence from one comparison, in percent of the base
// (positive is slower, whatever the unit).
type Effect struct {
	Lane        string                 `json:"lane"`
	Verdict     driftcheck.LaneVerdict `json:"verdict"`
	EstimatePct float64                `json:"estimate_pct"`
	LowPct      float64                `json:"ci_low_pct"`
	HighPct     float64                `json:"ci_high_pct"`
	// Bounded is false when there is no interval (no noise estimate yet).
	Bounded    bool    `json:"bounded"`
	Confidence float64 `json:"confidence"`
	// Pairs is the usable pass pairs; PairsNeeded the decision rule's estimate of the
	// pairs per collection its verdict needs; MDEPct its minimum detectable effect.
	Pairs       int     `json:"pairs"`
	PairsNeeded int     `json:"pairs_needed"`
	MDEPct      float64 `json:"mde_pct"`
	Reason      string  `json:"reason"`
}

// EffectOf is the Effect of a pooled lane summary.
func EffectOf(s driftcheck.LaneSummary) Effect {
	return Effect{Lane: s.Lane, Verdict: s.Verdict, EstimatePct: s.EstimatePct, LowPct: s.CILowPct, HighPct: s.CIHighPct,
		Bounded: s.Bounded, Confidence: s.Confidence, Pairs: s.UsablePairs, PairsNeeded: s.PairsNeeded, MDEPct: s.MDEPct, Reason: s.Reason}
}

// Rule says when a comparison has measured enough.
type Rule struct {
	// Halfway, when set, measures the lane until its interval lies wholly on one side of
	// MarkPct (a midpoint step); otherwise until the decision rule's verdict is decided
	// (reproduced or neutral: the baseline and the final step).
	Halfway bool    `json:"halfway,omitempty"`
	MarkPct float64 `json:"mark_pct,omitempty"`
}

// Pending reports whether a lane with effect e needs more pairs under the rule.
func (r Rule) Pending(e Effect) bool {
	if !r.Halfway {
		return !e.Verdict.Decided()
	}
	return !e.Bounded || (e.LowPct <= r.MarkPct && r.MarkPct <= e.HighPct)
}

// Pair is one comparison a bisection asks for: Cand against Base.
type Pair struct {
	Base, Cand Commit
	// Lane is the one lane to measure; "" measures every lane the bisection's benchmark
	// expression selects (the baseline, before a lane is chosen).
	Lane string
	Rule Rule
}

// Measurement is what one comparison found.
type Measurement struct {
	// Lanes are the candidate's pooled effects, one per lane.
	Lanes []Effect
	// Receipt is the receipt page ("" when nothing was measured).
	Receipt string
	// Identical is set when the two binaries are the same: nothing can have changed and
	// nothing was measured.
	Identical bool
}

// Measurer runs one comparison.
type Measurer interface {
	Measure(ctx context.Context, p Pair) (Measurement, error)
}

// BuildError is returned by a Measurer when the candidate commit does not build: the
// bisection skips that commit.
type BuildError struct {
	Commit Commit
	Err    error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("commit %s does not build: %v", e.Commit.Short(), e.Err)
}

// Unwrap returns the build's error.
func (e *BuildError) Unwrap() error { return e.Err }

// Request is one bisection.
type Request struct {
	Range     Range
	Direction Direction
	// Lane is the lane to follow; "" follows the baseline's lane with the largest effect
	// reproduced in Direction.
	Lane string
	// Known are the steps of an earlier bisection of the same range (a resumed one):
	// a decided comparison among them is not measured again.
	Known []Step
	// Save, when set, is called with the outcome so far after every step, so an
	// interrupted bisection loses at most the step in flight.
	Save func(*Outcome) error
}

// Kind says what a step compared.
type Kind string

// The kinds of step.
const (
	// KindBaseline is BAD against GOOD.
	KindBaseline Kind = "baseline"
	// KindMidpoint is a commit of the range against GOOD.
	KindMidpoint Kind = "midpoint"
	// KindStep is the first bad commit against the last good one.
	KindStep Kind = "step"
)

// Side is which side of the change a midpoint is on.
type Side string

// The sides.
const (
	SideGood      Side = "good"
	SideBad       Side = "bad"
	SideUndecided Side = "undecided"
	SideSkipped   Side = "skipped"
)

// Step is one comparison of a bisection.
type Step struct {
	Kind Kind   `json:"kind"`
	Base Commit `json:"base"`
	Cand Commit `json:"cand"`
	// Position is the candidate's place in the range, 1-based (BAD is the last).
	Position int  `json:"position"`
	Rule     Rule `json:"rule"`
	// Lanes are every lane's effects (the baseline); Effect the followed lane's.
	Lanes  []Effect `json:"lanes,omitempty"`
	Effect *Effect  `json:"effect,omitempty"`
	// Side is a midpoint's side; Reason says why (or why the step is undecided, with
	// the pairs it would need).
	Side   Side   `json:"side,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Between, when set, says the midpoint measured between GOOD and BAD (or beyond
	// them): a sign of two or more step changes in the range.
	Between   string `json:"between,omitempty"`
	Receipt   string `json:"receipt,omitempty"`
	Identical bool   `json:"identical,omitempty"`
	// Reused is set for a step taken from Request.Known instead of measured.
	Reused bool `json:"reused,omitempty"`
}

// Status is how a bisection ended.
type Status string

// The statuses.
const (
	// StatusFound: the first slower (or faster) commit is named.
	StatusFound Status = "found"
	// StatusUndecided: a step could not be decided within its budget.
	StatusUndecided Status = "undecided"
	// StatusRefused: the baseline did not reproduce the change in the hunted direction.
	StatusRefused Status = "refused"
)

// Outcome is a bisection's result.
type Outcome struct {
	Good      Commit    `json:"good"`
	Bad       Commit    `json:"bad"`
	Direction Direction `json:"direction"`
	// Commits is the number of commits in GOOD..BAD.
	Commits int `json:"commits"`
	// Lane is the followed lane; Total its GOOD->BAD effect and MarkPct the halfway mark
	// the midpoints are judged against.
	Lane    string  `json:"lane,omitempty"`
	Total   *Effect `json:"total,omitempty"`
	MarkPct float64 `json:"mark_pct,omitempty"`
	Steps   []Step  `json:"steps"`
	Status  Status  `json:"status"`
	// Reason says why a bisection was refused or is undecided, and what to do.
	Reason string `json:"reason,omitempty"`
	// LastGood and FirstBad bound the change: every commit up to LastGood is on GOOD's
	// side, FirstBad and every later one on BAD's. Suspects are FirstBad and the skipped
	// commits before it that may hold the change instead (only FirstBad when none).
	LastGood *Commit  `json:"last_good,omitempty"`
	FirstBad *Commit  `json:"first_bad,omitempty"`
	Suspects []Commit `json:"suspects,omitempty"`
	// StepEffect is the effect of FirstBad against LastGood.
	StepEffect *Effect `json:"step_effect,omitempty"`
	// Multiple is set when the range holds two or more step changes; MultipleReasons say
	// what showed it.
	Multiple        bool     `json:"multiple,omitempty"`
	MultipleReasons []string `json:"multiple_reasons,omitempty"`
}

// Measured counts the comparisons measured beyond the baseline (not reused, skipped or
// identical).
func (o *Outcome) Measured() int {
	n := 0
	for _, s := range o.Steps {
		if s.Kind != KindBaseline && !s.Reused && !s.Identical && s.Side != SideSkipped {
			n++
		}
	}
	return n
}

// Run bisects req.Range with m.
func Run(ctx context.Context, m Measurer, req Request) (*Outcome, error) {
	if len(req.Range.Commits) == 0 {
		return nil, errors.New("empty range: no commits between GOOD and BAD")
	}
	if req.Direction == "" {
		req.Direction = Slower
	}
	b := &bisection{m: m, req: req, o: &Outcome{Good: req.Range.Good, Bad: req.Range.Bad, Direction: req.Direction,
		Commits: len(req.Range.Commits), Steps: []Step{}}}
	if err := b.baseline(ctx); err != nil || b.o.Status == StatusRefused {
		return b.o, err
	}
	lo, hi, err := b.search(ctx)
	if err != nil || b.o.Status == StatusUndecided {
		return b.o, err
	}
	return b.o, b.finish(ctx, lo, hi)
}

// bisection is the state of one Run.
type bisection struct {
	m   Measurer
	req Request
	o   *Outcome
}

// measure measures (or finds in req.Known) one step and appends it to the outcome.
func (b *bisection) measure(ctx context.Context, st Step) (*Step, error) {
	if k, ok := b.known(st); ok {
		b.o.Steps = append(b.o.Steps, k)
		return &b.o.Steps[len(b.o.Steps)-1], nil
	}
	lane := b.o.Lane
	meas, err := b.m.Measure(ctx, Pair{Base: st.Base, Cand: st.Cand, Lane: lane, Rule: st.Rule})
	var be *BuildError
	switch {
	case errors.As(err, &be) && st.Kind == KindMidpoint:
		st.Side, st.Reason = SideSkipped, buildReason(be.Err)
	case err != nil:
		return nil, fmt.Errorf("measuring %s against %s: %w", st.Cand.Short(), st.Base.Short(), err)
	default:
		st.Receipt, st.Identical = meas.Receipt, meas.Identical
		if lane == "" {
			st.Lanes = meas.Lanes
		} else if st.Identical {
			st.Effect = &Effect{Lane: lane, Verdict: driftcheck.LaneNeutral, Bounded: true, Reason: "the binaries are identical: nothing measured"}
		} else {
			for _, e := range meas.Lanes {
				if e.Lane == lane {
					st.Effect = &e
				}
			}
			if st.Effect == nil {
				return nil, fmt.Errorf("measuring %s against %s: lane %s was not measured", st.Cand.Short(), st.Base.Short(), lane)
			}
		}
	}
	b.o.Steps = append(b.o.Steps, st)
	return &b.o.Steps[len(b.o.Steps)-1], nil
}

// known returns the step of req.Known that compared the same commits, lane and rule,
// when it was decided.
func (b *bisection) known(st Step) (Step, bool) {
	for _, k := range b.req.Known {
		if k.Kind != st.Kind || k.Base.Hash != st.Base.Hash || k.Cand.Hash != st.Cand.Hash || k.Rule != st.Rule {
			continue
		}
		if st.Kind == KindMidpoint && (k.Side == SideUndecided || k.Side == "") {
			continue
		}
		if st.Kind != KindBaseline && b.o.Lane != "" && k.Side != SideSkipped && (k.Effect == nil || k.Effect.Lane != b.o.Lane) {
			continue
		}
		k.Reused = true
		return k, true
	}
	return Step{}, false
}

// save passes the outcome so far to req.Save.
func (b *bisection) save() error {
	if b.req.Save == nil {
		return nil
	}
	return b.req.Save(b.o)
}

// baseline measures BAD against GOOD and chooses the lane, or refuses.
func (b *bisection) baseline(ctx context.Context) error {
	r := b.req.Range
	st, err := b.measure(ctx, Step{Kind: KindBaseline, Base: r.Good, Cand: r.Bad, Position: len(r.Commits)})
	if err != nil {
		return err
	}
	if st.Identical {
		b.o.Status = StatusRefused
		b.o.Reason = fmt.Sprintf("GOOD (%s) and BAD (%s) build identical binaries: nothing between them can have changed the benchmarks", r.Good.Short(), r.Bad.Short())
		return b.save()
	}
	lane, err := chooseLane(st.Lanes, b.req.Lane, b.req.Direction)
	if err != nil {
		b.o.Status = StatusRefused
		b.o.Reason = fmt.Sprintf("BAD (%s) is not reproduced %s than GOOD (%s): %v", r.Bad.Short(), b.req.Direction, r.Good.Short(), err)
		if slices.ContainsFunc(st.Lanes, func(e Effect) bool { return !e.Verdict.Decided() && (b.req.Lane == "" || e.Lane == b.req.Lane) }) {
			b.o.Reason += "; an undecided baseline may decide with more pairs: run again with a higher --max-pairs (and --budget)"
		}
		return b.save()
	}
	st.Effect = &lane
	b.o.Lane, b.o.Total, b.o.MarkPct = lane.Lane, &lane, Halfway(lane.EstimatePct)
	return b.save()
}

// chooseLane returns the lane to follow: want, or the lane with the largest effect
// reproduced in dir. Its error lists every lane's numbers.
func chooseLane(lanes []Effect, want string, dir Direction) (Effect, error) {
	var best *Effect
	for i, e := range lanes {
		if e.Verdict != dir.verdict() || (want != "" && e.Lane != want) {
			continue
		}
		if best == nil || math.Abs(e.EstimatePct) > math.Abs(best.EstimatePct) {
			best = &lanes[i]
		}
	}
	if best != nil {
		return *best, nil
	}
	if len(lanes) == 0 {
		return Effect{}, errors.New("no lane was measured")
	}
	var parts []string
	for _, e := range lanes {
		if want == "" || e.Lane == want {
			part := fmt.Sprintf("%s %s %s", e.Lane, EffectText(e), e.Verdict)
			if e.Reason != "" {
				part += " (" + e.Reason + ")"
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return Effect{}, fmt.Errorf("lane %s was not measured", want)
	}
	return Effect{}, errors.New(joinSemi(parts))
}

// search bisects the range: it returns the indexes (into Range.Commits, -1 for GOOD) of
// the last good and the first bad commit.
func (b *bisection) search(ctx context.Context) (lo, hi int, err error) {
	cs := b.req.Range.Commits
	lo, hi = -1, len(cs)-1
	skipped := map[int]bool{}
	rule := Rule{Halfway: true, MarkPct: b.o.MarkPct}
	for {
		i := pick(lo, hi, skipped)
		if i < 0 {
			return lo, hi, nil
		}
		st, err := b.measure(ctx, Step{Kind: KindMidpoint, Base: b.req.Range.Good, Cand: cs[i], Position: i + 1, Rule: rule})
		if err != nil {
			return lo, hi, err
		}
		if st.Side != SideSkipped {
			st.Side, st.Reason, st.Between = Classify(*st.Effect, *b.o.Total, b.o.MarkPct, b.req.Direction)
			if st.Identical {
				st.Side, st.Reason, st.Between = SideGood, "its binary is identical to GOOD's: nothing measured", ""
			}
		}
		if st.Between != "" {
			b.multiple(fmt.Sprintf("%s (%d/%d) %s", cs[i].Short(), i+1, len(cs), st.Between))
		}
		switch st.Side {
		case SideSkipped:
			skipped[i] = true
		case SideGood:
			lo = i
		case SideBad:
			hi = i
		case SideUndecided:
			b.o.Status = StatusUndecided
			b.o.Reason = fmt.Sprintf("step %d, %s (%d/%d) against GOOD, is undecided: %s", len(b.o.Steps)-1, cs[i].Short(), i+1, len(cs), st.Reason)
			b.bounds(lo, hi, skipped)
			return lo, hi, b.save()
		}
		if err := b.save(); err != nil {
			return lo, hi, err
		}
	}
}

// pick returns the commit to measure next: of the commits strictly between lo and hi that
// were not skipped, the one nearest the middle (the earlier of two as near), or -1 when
// none is left.
func pick(lo, hi int, skipped map[int]bool) int {
	best, dist := -1, math.Inf(1)
	mid := float64(lo+hi) / 2
	for i := lo + 1; i < hi; i++ {
		if d := math.Abs(float64(i) - mid); !skipped[i] && d < dist {
			best, dist = i, d
		}
	}
	return best
}

// bounds records what the search knows: the last good commit, the first bad one, and
// the skipped commits between them that may hold the change instead.
func (b *bisection) bounds(lo, hi int, skipped map[int]bool) {
	cs := b.req.Range.Commits
	good := b.req.Range.Good
	if lo >= 0 {
		good = cs[lo]
	}
	bad := cs[hi]
	b.o.LastGood, b.o.FirstBad = &good, &bad
	b.o.Suspects = nil
	for i := lo + 1; i <= hi; i++ {
		if skipped[i] || i == hi {
			b.o.Suspects = append(b.o.Suspects, cs[i])
		}
	}
}

// finish measures the step (the first bad commit against the last good one) and says
// whether it is the whole change.
func (b *bisection) finish(ctx context.Context, lo, hi int) error {
	cs := b.req.Range.Commits
	skipped := map[int]bool{}
	for _, s := range b.o.Steps {
		if s.Side == SideSkipped {
			for i, c := range cs {
				if c.Hash == s.Cand.Hash {
					skipped[i] = true
				}
			}
		}
	}
	b.bounds(lo, hi, skipped)
	b.o.Status = StatusFound
	if lo == -1 && hi == len(cs)-1 {
		// The step is the baseline: nothing else to measure.
		b.o.StepEffect = b.o.Total
		return b.save()
	}
	st, err := b.measure(ctx, Step{Kind: KindStep, Base: *b.o.LastGood, Cand: *b.o.FirstBad, Position: hi + 1})
	if err != nil {
		return err
	}
	b.o.StepEffect = st.Effect
	st.Reason = StepReason(*st.Effect, *b.o.Total, b.req.Direction)
	if whole := Whole(*st.Effect, *b.o.Total, b.req.Direction); whole != "" {
		b.multiple(fmt.Sprintf("the step at %s %s", b.o.FirstBad.Short(), whole))
	}
	return b.save()
}

// multiple records a sign of two or more step changes.
func (b *bisection) multiple(reason string) {
	b.o.Multiple = true
	b.o.MultipleReasons = append(b.o.MultipleReasons, reason)
}
