package receipt

import (
	"errors"
	"fmt"

	"github.com/flipbench/flipbench/driftcheck"
)

// ArmNames returns the plan's arm names, base first.
func (p *Plan) ArmNames() []string {
	names := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		names[i] = a.Name
	}
	return names
}

// Validate checks that a plan can be run and analysed: at least a base and one candidate,
// each with a binary and a command, unique lanes, a sane protocol, and a schedule that is
// exactly every (collection, pass, lane, arm) once with the order its pass number implies.
// A plan.json edited by hand or cut short fails here, before anything is measured.
func (p *Plan) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(p.Arms) < 2 {
		bad("arms: want a base and at least one candidate, have %d arms", len(p.Arms))
	}
	arms := map[string]bool{}
	for i, a := range p.Arms {
		switch {
		case a.Name == "":
			bad("arms[%d]: no name", i)
		case arms[a.Name]:
			bad("arms[%d]: %s listed twice", i, a.Name)
		}
		arms[a.Name] = true
		if a.Bin == "" || len(a.Command) == 0 {
			bad("arms[%d] (%s): no binary or no command", i, a.Name)
		}
	}
	lanes := map[string]bool{}
	for i, l := range p.Lanes {
		if l.Name == "" || lanes[l.Name] {
			bad("lanes[%d]: empty or repeated lane name %q", i, l.Name)
		}
		lanes[l.Name] = true
	}
	if len(p.Lanes) == 0 {
		bad("lanes: none")
	}
	pr := p.Protocol
	if pr.Samples < 1 || pr.Warmup < 0 || pr.Collections < 1 || pr.Passes < 2 || pr.Passes%2 != 0 {
		bad("protocol: %d samples, %d warmup, %d passes, %d collections: want samples >= 1, warmup >= 0, an even number of passes >= 2, collections >= 1",
			pr.Samples, pr.Warmup, pr.Passes, pr.Collections)
	}
	if pr.Samples > maxCount || pr.Warmup > maxCount || pr.Passes > maxCount || pr.Collections > maxCount {
		bad("protocol: %d samples, %d warmup, %d passes, %d collections: a count above %d was not planned by flipbench",
			pr.Samples, pr.Warmup, pr.Passes, pr.Collections, maxCount)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if want := int64(pr.Collections) * int64(pr.Passes) * int64(len(p.Lanes)) * int64(len(p.Arms)); int64(len(p.Runs)) != want {
		bad("runs: %d scheduled, the protocol makes %d", len(p.Runs), want)
	}
	seen := map[Key]bool{}
	designed := len(p.Runs) > 0 && p.Runs[0].Position > 0
	for i, r := range p.Runs {
		switch {
		case !arms[r.Arm] || !lanes[r.Lane]:
			bad("runs[%d]: unknown arm %q or lane %q", i, r.Arm, r.Lane)
		case r.Collection < 1 || r.Collection > pr.Collections || r.Pass < 1 || r.Pass > pr.Passes:
			bad("runs[%d]: collection %d pass %d is outside the protocol", i, r.Collection, r.Pass)
		case !designed && r.Order != driftcheck.OrderOf(r.Pass):
			bad("runs[%d]: pass %d runs %s, want %s", i, r.Pass, r.Order, driftcheck.OrderOf(r.Pass))
		case designed && r.Order != driftcheck.OrderForward && r.Order != driftcheck.OrderReverse:
			bad("runs[%d]: order %q, want %s or %s", i, r.Order, driftcheck.OrderForward, driftcheck.OrderReverse)
		case designed != (r.Position > 0) || r.Position > len(p.Arms):
			bad("runs[%d]: position %d, want 1..%d in every run of a designed plan and 0 in every run of an older one", i, r.Position, len(p.Arms))
		case seen[r.Key()]:
			bad("runs[%d]: %+v scheduled twice", i, r.Key())
		}
		seen[r.Key()] = true
		if len(errs) >= 5 {
			break
		}
	}
	if designed && len(errs) == 0 {
		if err := p.validateDesign(); err != nil {
			errs = append(errs, err)
		}
	}
	if p.Shard != nil && len(errs) == 0 {
		if err := p.Shard.validate(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateDesign checks a designed schedule: in every pass each lane runs every arm at a
// position of its own, and in the second pass of a pair in the reverse of the first
// pass's positions, with the opposite order.
func (p *Plan) validateDesign() error {
	type slot struct {
		Collection, Pair int
		Lane             string
	}
	type half struct {
		order string
		pos   map[string]int
	}
	pairs := map[slot][2]half{}
	k := len(p.Arms)
	for _, r := range p.Runs {
		s := slot{r.Collection, Round(r.Pass), r.Lane}
		h := pairs[s]
		i := (r.Pass - 1) % 2
		if h[i].pos == nil {
			h[i] = half{order: r.Order, pos: map[string]int{}}
		}
		if h[i].order != r.Order {
			return fmt.Errorf("runs: collection %d pass %d lane %s runs in both orders", r.Collection, r.Pass, r.Lane)
		}
		for arm, at := range h[i].pos {
			if at == r.Position {
				return fmt.Errorf("runs: collection %d pass %d lane %s: arms %s and %s both at position %d", r.Collection, r.Pass, r.Lane, arm, r.Arm, at)
			}
		}
		h[i].pos[r.Arm] = r.Position
		pairs[s] = h
	}
	for s, h := range pairs {
		if h[0].order == h[1].order {
			return fmt.Errorf("runs: collection %d pair %d lane %s runs %s in both passes, want one forward and one reverse", s.Collection, s.Pair, s.Lane, h[0].order)
		}
		for arm, at := range h[0].pos {
			if h[1].pos[arm] != k+1-at {
				return fmt.Errorf("runs: collection %d pair %d lane %s: arm %s at position %d then %d, want the reverse (%d)", s.Collection, s.Pair, s.Lane, arm, at, h[1].pos[arm], k+1-at)
			}
		}
	}
	return nil
}

// maxCount bounds every count of a plan's protocol. flipbench plans far less (see the
// spec package's limits); the bound keeps a hand-edited plan from overflowing warmup +
// samples or the schedule's size.
const maxCount = 1 << 20

// GroupKey identifies the runs that are compared with each other: one lane in one pass
// (one attempt of it), every arm back to back.
type GroupKey struct {
	Collection, Pass int
	Lane             string
	Attempt          int
}

// Group returns the record's comparison group.
func (r Record) Group() GroupKey { return GroupKey{r.Collection, r.Pass, r.Lane, r.Attempt} }
