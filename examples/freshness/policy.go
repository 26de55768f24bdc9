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
	// start + p99 x 1.10, is past the freshness limit (generation + max_age).
	Pessimistic
	// Optimistic (ADR-0010) discards only when the fastest variant's optimistic finish,
	// start + p50, is past the freshness limit; otherwise it starts the fastest variant.
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
	// Split says that no variant is feasible (none keeps the promise by the
	// conservative forecast) and the fastest one is too old by its conservative forecast
	// but fresh by its optimistic one: the frames on which ADR-0009 and ADR-0010
	// disagree.
	Split bool
	// Forecast is the age the decisive forecast predicts at completion: the started
	// variant's conservative finish minus generation when feasible, else the fastest
	// variant's finish by the forecast the policy judged with (conservative for
	// pessimistic, optimistic for optimistic and fifo).
	Forecast time.Duration
}

// Decide is stage B: the decision about a frame generated at gen and considered for
// dispatch at now (scenario times), with every variant allowed. It is pure; see
// DecideFrom.
func (sc Scenario) Decide(p Policy, gen, now time.Duration) Decision {
	return sc.DecideFrom(p, gen, now, 0)
}

// DecideFrom is stage B with the variants before index from (more preferred than the
// scheduler's current variant under hysteresis) left out of feasibility. Feasibility
// judges by the promise (gen + Deadline), the discard and the split by freshness (gen +
// MaxAge): a frame no variant can promise for may still be fresh. It is pure; the
// scheduler calls it for every frame a free worker takes from the queue.
func (sc Scenario) DecideFrom(p Policy, gen, now time.Duration, from int) Decision {
	promise, fresh := gen+sc.DeadlineAfterGen(), gen+sc.MaxAge
	fast := sc.Fastest()
	fv := sc.Variants[fast]
	probe.StageBDecisions.Add(1)
	for i := from; i < len(sc.Variants); i++ {
		if finish := now + sc.Variants[i].Conservative(); finish <= promise {
			return Decision{Start: true, Variant: i, Feasible: true, Forecast: finish - gen}
		}
	}
	consFresh := now+fv.Conservative() <= fresh
	d := Decision{Split: !consFresh && now+fv.Optimistic() <= fresh}
	if d.Split {
		probe.P99MissP50Fit.Add(1)
	}
	switch p {
	case FIFO:
		d.Start, d.Variant, d.Forecast = true, fast, now+fv.Optimistic()-gen
	case Pessimistic:
		// ADR-0009: the freshness check uses the conservative forecast too
		d.Forecast = now + fv.Conservative() - gen
		d.Start = consFresh
	case Optimistic:
		d.Forecast = now + fv.Optimistic() - gen
		d.Start = consFresh || d.Split
	}
	if d.Start {
		d.Variant = fast
	}
	return d
}

// Usable is stage C: a result delivered at done for a frame generated at gen is usable
// when its age is at most MaxAge.
func (sc Scenario) Usable(gen, done time.Duration) bool { return done-gen <= sc.MaxAge }
