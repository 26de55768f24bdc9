package freshness

import (
	"fmt"
	"time"

	"github.com/flipbench/flipbench/probe"
)

// Policy is a stage B policy: what the scheduler does with a frame no variant can serve
// within its deadline by the conservative forecast.
type Policy uint8

// The stage B policies.
const (
	// FIFO never discards before dispatch: the fastest variant is started.
	FIFO Policy = iota
	// Pessimistic (ADR-0009) discards when the fastest variant's conservative finish,
	// start + p99 x 1.10, is past the deadline.
	Pessimistic
	// Optimistic (ADR-0010) discards only when the fastest variant's optimistic finish,
	// start + p50, is past the deadline; otherwise it starts the fastest variant.
	Optimistic
)

// Policies returns every policy, in declaration order.
func Policies() []Policy { return []Policy{FIFO, Pessimistic, Optimistic} }

// String returns the policy's name: fifo, pessimistic or optimistic.
func (p Policy) String() string {
	switch p {
	case FIFO:
		return "fifo"
	case Pessimistic:
		return "pessimistic"
	case Optimistic:
		return "optimistic"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParsePolicy returns the policy with the given name.
func ParsePolicy(name string) (Policy, error) {
	for _, p := range Policies() {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (want fifo, pessimistic or optimistic)", name)
}

// Decision is stage B's verdict on one frame.
type Decision struct {
	// Start says whether the frame is started; Variant is the variant it runs (an
	// index into Scenario.Variants), valid when Start is set.
	Start   bool
	Variant int
	// Feasible says whether a variant's conservative forecast fits the deadline: the
	// frame started by feasibility, which every policy agrees on.
	Feasible bool
	// Split says that no variant is feasible but the fastest one's optimistic finish
	// fits the deadline: the frames on which ADR-0009 and ADR-0010 disagree.
	Split bool
	// Forecast is the age the decisive forecast predicts at completion: the started
	// variant's conservative finish minus generation when feasible, else the fastest
	// variant's finish by the forecast the policy judged with (conservative for
	// pessimistic, optimistic for optimistic and fifo).
	Forecast time.Duration
}

// Decide is stage B: the decision about a frame generated at gen and considered for
// dispatch at now (scenario times). It is pure; the scheduler calls it for every frame
// a free worker takes from the queue.
func (sc Scenario) Decide(p Policy, gen, now time.Duration) Decision {
	deadline := gen + sc.MaxAge
	fast := sc.Fastest()
	fv := sc.Variants[fast]
	d := Decision{Split: now+fv.Optimistic() <= deadline}
	for i, v := range sc.Variants {
		if finish := now + v.Conservative(); finish <= deadline {
			d = Decision{Start: true, Variant: i, Feasible: true, Forecast: finish - gen}
			break
		}
	}
	probe.StageBDecisions.Add(1)
	if d.Feasible {
		return d
	}
	if d.Split {
		probe.P99MissP50Fit.Add(1)
	}
	switch p {
	case FIFO:
		d.Start, d.Variant, d.Forecast = true, fast, now+fv.Optimistic()-gen
	case Pessimistic:
		d.Forecast = now + fv.Conservative() - gen
	case Optimistic:
		d.Forecast = now + fv.Optimistic() - gen
		if d.Split {
			d.Start, d.Variant = true, fast
		}
	}
	return d
}

// Usable is stage C: a result delivered at done for a frame generated at gen is usable
// when its age is at most MaxAge.
func (sc Scenario) Usable(gen, done time.Duration) bool { return done-gen <= sc.MaxAge }
