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
	for i, r := range p.Runs {
		order := driftcheck.OrderOf(r.Pass)
		switch {
		case !arms[r.Arm] || !lanes[r.Lane]:
			bad("runs[%d]: unknown arm %q or lane %q", i, r.Arm, r.Lane)
		case r.Collection < 1 || r.Collection > pr.Collections || r.Pass < 1 || r.Pass > pr.Passes:
			bad("runs[%d]: collection %d pass %d is outside the protocol", i, r.Collection, r.Pass)
		case r.Order != order:
			bad("runs[%d]: pass %d runs %s, want %s", i, r.Pass, r.Order, order)
		case seen[r.Key()]:
			bad("runs[%d]: %+v scheduled twice", i, r.Key())
		}
		seen[r.Key()] = true
		if len(errs) >= 5 {
			break
		}
	}
	if p.Shard != nil && len(errs) == 0 {
		if err := p.Shard.validate(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxCount bounds every count of a plan's protocol. flipbench plans far less (see the
// spec package's limits); the bound keeps a hand-edited plan from overflowing warmup +
// samples or the schedule's size.
const maxCount = 1 << 20

// GroupKey identifies the runs that are compared with each other: one lane in one pass,
// every arm back to back.
type GroupKey struct {
	Collection, Pass int
	Lane             string
}

// Group returns the record's comparison group.
func (r Record) Group() GroupKey { return GroupKey{r.Collection, r.Pass, r.Lane} }
