package freshness

import (
	"fmt"
	"time"
)

// The doctor's checks, in the order it reports them.
const (
	// CheckLoad: the frames ask for no more work than the workers can do (load <= 100%).
	CheckLoad = "load"
	// CheckTypical: a typical run is fresh: max_age >= p50 + transport for the fastest
	// variant. When it fails no policy can deliver much.
	CheckTypical = "typical"
	// CheckConservative: the conservative forecast of stage B's fallback fits: max_age >=
	// p99 x 1.10 + transport for the fastest variant (the one a frame no variant can
	// promise is judged with). When it fails, a stage B that discards on that forecast
	// (pessimistic, ADR-0009) discards every frame no variant can promise (in scenario A,
	// every frame) before it starts.
	CheckConservative = "conservative"
	// CheckDeadline, only for a scenario whose Deadline is set apart from max_age: the
	// promise can be kept: deadline >= p99 x 1.10 + transport for some variant. When it
	// fails, feasibility promises nothing and every frame goes to stage B's fallback.
	CheckDeadline = "deadline"
)

// Finding is the outcome of one of the doctor's checks, with its numbers.
type Finding struct {
	Check string
	// OK says whether the contract passes the check.
	OK bool
	// Message states the numbers and, for a failed check, what it means and what to do.
	Message string
}

// String formats the finding as "ok   check: message" or "FAIL check: message".
func (f Finding) String() string {
	mark := "ok  "
	if !f.OK {
		mark = "FAIL"
	}
	return mark + " " + f.Check + ": " + f.Message
}

// Diagnosis is the doctor's report on one scenario.
type Diagnosis struct {
	Scenario string
	Findings []Finding
}

// OverCommitted reports whether any check failed: a contract the scheduler cannot keep,
// known before anything runs.
func (d Diagnosis) OverCommitted() bool {
	for _, f := range d.Findings {
		if !f.OK {
			return true
		}
	}
	return false
}

// Failed returns the failed checks' findings.
func (d Diagnosis) Failed() []Finding {
	var out []Finding
	for _, f := range d.Findings {
		if !f.OK {
			out = append(out, f)
		}
	}
	return out
}

// Doctor checks a scenario's contract before anything runs (see the Check constants).
// It needs nothing but the scenario: the checks are arithmetic on the profile, the
// transport delay, max_age and the load. It fails only on a scenario that does not
// validate.
func Doctor(sc Scenario) (Diagnosis, error) {
	if err := sc.Validate(); err != nil {
		return Diagnosis{}, err
	}
	d := Diagnosis{Scenario: sc.Name}
	add := func(check string, ok bool, format string, args ...any) {
		d.Findings = append(d.Findings, Finding{Check: check, OK: ok, Message: fmt.Sprintf(format, args...)})
	}

	fast := sc.Variants[sc.Fastest()]
	rate := 1 / sc.Interval().Seconds()
	if sc.Load > 1 {
		add(CheckLoad, false, "load %.0f%% > 100%%: %d workers get %.4g frames/s of %s mean work (variant %s), %.0f%% more than they can do; "+
			"the queue stays full and frames are superseded or late whatever stage B does: add workers or lower the frame rate",
			sc.Load*100, sc.Workers, rate, ms(fast.Mean()), fast.Name, (sc.Load-1)*100)
	} else {
		add(CheckLoad, true, "load %.0f%% <= 100%%: %d workers get %.4g frames/s of %s mean work (variant %s)",
			sc.Load*100, sc.Workers, rate, ms(fast.Mean()), fast.Name)
	}

	typical := fast.Optimistic() + sc.Transport
	if typical > sc.MaxAge {
		add(CheckTypical, false, "max_age %s < p50 + transport = %s + %s = %s (variant %s): even a typical run that starts the moment its frame arrives "+
			"delivers a result too old; no policy can deliver much: raise max_age or add a faster variant",
			ms(sc.MaxAge), ms(fast.Optimistic()), ms(sc.Transport), ms(typical), fast.Name)
	} else {
		add(CheckTypical, true, "max_age %s >= p50 + transport = %s + %s = %s (variant %s): a typical run is fresh with %s to wait for a worker",
			ms(sc.MaxAge), ms(fast.Optimistic()), ms(sc.Transport), ms(typical), fast.Name, ms(sc.MaxAge-typical))
	}

	// A frame no variant can promise is judged with the fastest variant (stage B's
	// fallback), so the discard check is on its conservative forecast; the promise check
	// below is on the variant with the smallest one.
	best := sc.Variants[0]
	for _, v := range sc.Variants {
		if v.Conservative() < best.Conservative() {
			best = v
		}
	}
	cons := fast.Conservative() + sc.Transport
	if cons > sc.MaxAge {
		lost := "every frame and delivers nothing"
		if len(sc.Variants) > 1 || sc.DeadlineAfterGen() != sc.MaxAge {
			lost = "every frame no variant can promise"
		}
		add(CheckConservative, false, "max_age %s < p99 x 1.10 + transport = %s + %s = %s (variant %s): by the conservative forecast a frame is too old "+
			"before any queueing, so a stage B that discards on it (pessimistic, ADR-0009) discards %s; "+
			"max_age is of the order of the runtime: raise max_age to at least %s, add a faster variant, or discard only on p50 (optimistic, ADR-0010)",
			ms(sc.MaxAge), ms(fast.Conservative()), ms(sc.Transport), ms(cons), fast.Name, lost, ms(cons))
	} else {
		add(CheckConservative, true, "max_age %s >= p99 x 1.10 + transport = %s + %s = %s (variant %s): the conservative forecast fits with %s to wait for a worker",
			ms(sc.MaxAge), ms(fast.Conservative()), ms(sc.Transport), ms(cons), fast.Name, ms(sc.MaxAge-cons))
	}
	promise := best.Conservative() + sc.Transport
	if sc.Deadline > 0 && sc.Deadline != sc.MaxAge {
		if promise > sc.Deadline {
			add(CheckDeadline, false, "deadline %s < p99 x 1.10 + transport = %s (variant %s): no variant can promise even a frame that starts at once; "+
				"every frame goes to stage B's fallback: raise the deadline to at least %s or add a faster variant",
				ms(sc.Deadline), ms(promise), best.Name, ms(promise))
		} else {
			add(CheckDeadline, true, "deadline %s >= p99 x 1.10 + transport = %s (variant %s): a frame can be promised with %s to wait for a worker",
				ms(sc.Deadline), ms(promise), best.Name, ms(sc.Deadline-promise))
		}
	}
	return d, nil
}

// ms formats a duration in milliseconds with up to four significant digits: "68 ms",
// "61.82 ms".
func ms(d time.Duration) string { return fmt.Sprintf("%.4g ms", float64(d)/float64(time.Millisecond)) }
