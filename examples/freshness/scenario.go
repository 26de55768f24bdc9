package freshness

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// SafetyPct is the conservative forecast's margin over a variant's p99, in percent:
// p99 x 1.10, as in the decision record.
const SafetyPct = 110

// z99 is the standard normal quantile of 0.99: a log-normal runtime with median p50 and
// spread sigma reaches p50 x exp(z99 x sigma) at its 99th percentile.
const z99 = 2.3263478740408408

// Variant is one way to compute a frame's result, with its runtime profile.
type Variant struct {
	// Name names the variant in decisions and reports.
	Name string
	// P50 and P99 are the median and the 99th percentile of its runtime.
	P50, P99 time.Duration
}

// Conservative returns the runtime the feasibility check plans with: p99 x 1.10.
func (v Variant) Conservative() time.Duration { return v.P99 * SafetyPct / 100 }

// Optimistic returns the runtime of the favourable case: p50.
func (v Variant) Optimistic() time.Duration { return v.P50 }

// sigma returns the spread of the variant's log-normal runtime distribution.
func (v Variant) sigma() float64 {
	if v.P99 <= v.P50 {
		return 0
	}
	return math.Log(float64(v.P99)/float64(v.P50)) / z99
}

// Mean returns the mean of the variant's runtime distribution: p50 x exp(sigma^2 / 2).
func (v Variant) Mean() time.Duration {
	s := v.sigma()
	return time.Duration(float64(v.P50) * math.Exp(s*s/2))
}

// Runtime returns the runtime of a frame whose difficulty is z (a standard normal draw):
// p50 x exp(sigma x z). z = 0 is the median, z = 2.326 the 99th percentile.
func (v Variant) Runtime(z float64) time.Duration {
	return time.Duration(float64(v.P50) * math.Exp(v.sigma()*z))
}

// Scenario is a contract and a load for the scheduler.
type Scenario struct {
	// Name names the scenario in reports.
	Name string
	// Workers is the number of workers.
	Workers int
	// Variants are the ways to compute a frame, in order of preference: feasibility
	// starts the first one whose conservative forecast fits.
	Variants []Variant
	// MaxAge is how old a result may be when it is delivered and still be usable: the
	// freshness limit stage B's discard and stage C's verdict judge by.
	MaxAge time.Duration
	// Deadline is the promise: how soon after its generation a started frame's result
	// is due. Feasibility (which variant, if any, can keep the promise by the
	// conservative forecast) judges by it; it is a separate number from MaxAge, as in the
	// record (a promise missed costs a late result; a result past MaxAge is worthless).
	// Zero means MaxAge.
	Deadline time.Duration
	// Hysteresis, when set, makes variant choice sticky (spec 12.4 of the record):
	// downgrade at once, upgrade only after a stable reserve. Nil: every frame takes the
	// most preferred feasible variant.
	Hysteresis *Hysteresis
	// Transport is the delay between a frame's generation and its arrival at the
	// scheduler.
	Transport time.Duration
	// Load is the arrival rate times the fastest variant's mean runtime, per worker:
	// 1.25 asks for a quarter more work than the workers can do.
	Load float64
	// QueueCap is how many frames may wait for a worker; an arriving frame supersedes
	// the oldest waiting one when the queue is full. The record's scenarios use 1: only
	// the newest frame waits (see ScenarioA).
	QueueCap int
	// Duration is the span of scenario time over which frames are generated. A run
	// lasts until the last frame has its outcome.
	Duration time.Duration
}

// Validate reports what makes the scenario unusable, every problem at once.
func (sc Scenario) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if sc.Workers < 1 {
		bad("workers %d: want at least 1", sc.Workers)
	}
	if len(sc.Variants) == 0 {
		bad("variants: want at least one")
	}
	for i, v := range sc.Variants {
		switch {
		case v.Name == "":
			bad("variants[%d]: no name", i)
		case v.P50 <= 0:
			bad("variant %s: p50 %v: want a positive duration", v.Name, v.P50)
		case v.P99 < v.P50:
			bad("variant %s: p99 %v is below its p50 %v", v.Name, v.P99, v.P50)
		}
	}
	if sc.MaxAge <= 0 {
		bad("max_age %v: want a positive duration", sc.MaxAge)
	}
	if sc.Deadline < 0 {
		bad("deadline %v: want zero (max_age) or a positive duration", sc.Deadline)
	}
	if h := sc.Hysteresis; h != nil && (h.Reserve < 0 || h.After < 1) {
		bad("hysteresis: reserve %v, after %d: want a reserve >= 0 and at least 1 decision", h.Reserve, h.After)
	}
	if sc.Transport < 0 {
		bad("transport %v: want zero or a positive duration", sc.Transport)
	}
	if !(sc.Load > 0) || math.IsInf(sc.Load, 0) {
		bad("load %v: want a positive factor (1.25 is 125%%)", sc.Load)
	}
	if sc.QueueCap < 1 {
		bad("queue %d: want at least 1", sc.QueueCap)
	}
	if sc.Duration <= 0 {
		bad("duration %v: want a positive duration", sc.Duration)
	}
	if len(errs) > 0 {
		return fmt.Errorf("scenario %s: %w", sc.Name, errors.Join(errs...))
	}
	if sc.Interval() <= 0 {
		return fmt.Errorf("scenario %s: load %v leaves no time between frames", sc.Name, sc.Load)
	}
	return nil
}

// Hysteresis is the variant hysteresis: a frame that cannot keep its promise with the
// current variant moves to a faster one at once; the scheduler moves back to the next
// more preferred variant only after After consecutive decisions in which that variant
// would have kept the promise with Reserve to spare.
type Hysteresis struct {
	Reserve time.Duration
	After   int
}

// DeadlineAfterGen returns the promise horizon: Deadline, or MaxAge when it is zero.
func (sc Scenario) DeadlineAfterGen() time.Duration {
	if sc.Deadline > 0 {
		return sc.Deadline
	}
	return sc.MaxAge
}

// Fastest returns the index of the variant with the smallest p50 (the first of equals).
func (sc Scenario) Fastest() int {
	best := 0
	for i, v := range sc.Variants {
		if v.P50 < sc.Variants[best].P50 {
			best = i
		}
	}
	return best
}

// Interval returns the time between two frames: the fastest variant's mean runtime
// divided by Workers x Load.
func (sc Scenario) Interval() time.Duration {
	if len(sc.Variants) == 0 || sc.Workers < 1 || !(sc.Load > 0) {
		return 0
	}
	return time.Duration(float64(sc.Variants[sc.Fastest()].Mean()) / (float64(sc.Workers) * sc.Load))
}

// Frames returns how many frames the scenario generates: one every Interval from 0 to
// just before Duration.
func (sc Scenario) Frames() int {
	iv := sc.Interval()
	if iv <= 0 || sc.Duration <= 0 {
		return 0
	}
	return int((sc.Duration + iv - 1) / iv)
}

// The seed's runtime profile: p50 41 ms, and a p99 whose conservative forecast
// (p99 x 1.10) is 68 ms, rounded up so that it is 68 ms to the nanosecond.
const (
	seedP50 = 41 * time.Millisecond
	seedP99 = (68*time.Millisecond*100 + SafetyPct - 1) / SafetyPct
)

// SeedVariant returns the decision record's runtime profile, named "fast": p50 41 ms and
// p99 61.8 ms, so that p99 x 1.10 is 68 ms.
func SeedVariant() Variant { return Variant{Name: "fast", P50: seedP50, P99: seedP99} }

// ScenarioA returns the decision record's scenario A at 125% load: four workers, the
// seed's profile, transport 3 ms, max_age 66 ms and the deadline equal to it, over three
// seconds of frames (361). Its contract is over-committed (see Doctor): p99 x 1.10 +
// transport is 71 ms, above max_age before any queueing, and the frames ask for more
// work than the workers have.
//
// The record describes no queue. One waiting frame (QueueCap 1: a newer frame supersedes
// it) is what its numbers imply: its first-come first-served baseline delivered 282
// usable results because real runtimes sit near p50, so nearly every result it completed
// was fresh; a deeper queue at 125% load makes a frame wait about a runtime and arrive
// too old (with 4 waiting, fifo delivers about 100 usable of 361; with an open queue 12).
// Over three seconds fifo delivers 276 usable on average over seeds 1 to 20, within 2% of
// the record's 282, which is why the run is three seconds long (the record gives no
// length; the workers can complete at most about 288 frames in it).
func ScenarioA() Scenario {
	return Scenario{Name: "A", Workers: 4, Variants: []Variant{SeedVariant()},
		MaxAge: 66 * time.Millisecond, Transport: 3 * time.Millisecond,
		Load: 1.25, QueueCap: 1, Duration: 3 * time.Second}
}

// Variants returns a scenario with two variants in order of preference: full (p50 30 ms,
// p99 40 ms) and fast (p50 20 ms but a long tail, p99 45 ms), four workers at 100% of the
// fast variant's capacity, transport 3 ms, a promise (Deadline) of 55 ms apart from a
// freshness limit (MaxAge) of 50 ms, two waiting frames, and the record's variant
// hysteresis (down at once, up after 8 decisions in a row with 3 ms to spare). With one
// waiting frame, as in scenario A, supersession keeps every frame young enough for full
// and the policies never differ; two let frames wait past the promise. A frame that
// starts within 8 ms of its arrival can be promised with full (3 + 44 <= 55); one that
// waited longer can be promised with neither, and fast's conservative forecast (3 + 49.5)
// is past max_age even without waiting: the pessimistic stage B discards it, the
// optimistic one starts the fastest variant when its p50 forecast is fresh (a wait of up
// to 27 ms) and stage C judges the result.
func Variants() Scenario {
	return Scenario{Name: "variants", Workers: 4,
		Variants: []Variant{
			{Name: "full", P50: 30 * time.Millisecond, P99: 40 * time.Millisecond},
			{Name: "fast", P50: 20 * time.Millisecond, P99: 45 * time.Millisecond},
		},
		MaxAge: 50 * time.Millisecond, Deadline: 55 * time.Millisecond, Transport: 3 * time.Millisecond,
		Hysteresis: &Hysteresis{Reserve: 3 * time.Millisecond, After: 8},
		Load:       1, QueueCap: 2, Duration: time.Second}
}

// Comfortable returns a scenario every policy serves alike: the seed's profile at 50%
// load with a max_age of 250 ms, far above p99 x 1.10 + transport, so every frame starts
// at once and every result is usable.
func Comfortable() Scenario {
	return Scenario{Name: "comfortable", Workers: 4, Variants: []Variant{SeedVariant()},
		MaxAge: 250 * time.Millisecond, Transport: 3 * time.Millisecond,
		Load: 0.5, QueueCap: 1, Duration: time.Second}
}

// Underload returns a scenario whose contract the conservative forecast can keep: the
// seed's profile at 80% load with a max_age of 76 ms, 5 ms above p99 x 1.10 + transport.
// A frame that waits more than those 5 ms for a worker is discarded by the pessimistic
// policy and may still be started by the optimistic one; starting it must not cost other
// frames their usable results.
func Underload() Scenario {
	return Scenario{Name: "underload", Workers: 4, Variants: []Variant{SeedVariant()},
		MaxAge: 76 * time.Millisecond, Transport: 3 * time.Millisecond,
		Load: 0.8, QueueCap: 1, Duration: time.Second}
}

// Scenarios returns the named scenarios: A, variants, comfortable and underload.
func Scenarios() []Scenario { return []Scenario{ScenarioA(), Variants(), Comfortable(), Underload()} }

// LookupScenario returns the named scenario.
func LookupScenario(name string) (Scenario, bool) {
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}
