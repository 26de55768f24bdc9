// Package probe holds incidence counters for the code under test: named event counts that
// tell an experiment how often the situation it optimises actually happens.
//
// The counters cost nothing in a normal build. Unless the program is built with
//
//	go test -tags flipbench_probe ...
//
// Enabled is the constant false, Counter.Add is an empty method on an integer constant
// (the compiler inlines it to nothing), and Counter.Load returns 0. Code under test may
// therefore call
//
//	probe.CheapParkedBehindCostly.Add(1)
//
// on its hottest path, and may guard work that exists only to feed a counter (a scan of a
// queue, say) with `if probe.Enabled { ... }`, which the compiler removes as dead code.
// A default build of a program that uses probe holds no probe state at all.
//
// In a probe build (-tags flipbench_probe) Enabled is true and each counter is a
// process-wide atomic count. That is the one exception to flipbench's rule against
// package-level mutable state: a probe is a counter that the code under test bumps
// wherever the event happens, without a handle threaded through its API, so it is
// global by nature. The exception lives only behind the build tag (probe_on.go), is
// safe for concurrent use, and is read as a delta (Take before and after the work,
// then Snapshot.Sub), never reset, so two readers cannot disturb each other.
//
// The counters form a small fixed set, named after the events of the bundled systems under
// test (examples/readerpool, examples/pluginhost, examples/freshness). Their names (Counter.Name) are the units a lane reports them in
// with testing.B.ReportMetric and the names an experiment's incidence gate refers to
// (incidence.total, incidence.eligible); see docs/incidence.md.
package probe

import "fmt"

// Counter names one incidence counter. The constants below are the whole set.
type Counter uint8

// The reader pool's counters. Each is counted once per read at dispatch, in the pool's
// dispatcher (examples/readerpool/dispatch.go), which documents the exact moments.
const (
	// Dispatches counts reads that asked the pool for a worker.
	Dispatches Counter = iota
	// Cheap counts reads classified cheap when they asked: a statement the pool has
	// seen complete and that never returned more than 64 rows.
	Cheap
	// Costly counts reads classified costly: never seen, or once above 64 rows.
	Costly
	// Parked counts reads that found no worker they could take and waited.
	Parked
	// CheapWaited counts cheap reads that parked: cheap reads that waited for a worker
	// at all.
	CheapWaited
	// CheapParkedBehindCostly counts cheap reads that parked while at least one costly
	// read was already parked: the reads a cheap-first wake order would serve sooner.
	CheapParkedBehindCostly

	// The plugin scheduler's counters. Each is counted once per call when it enters the
	// scheduler's queue (examples/pluginhost/dispatch.go documents the exact moment).

	// Calls counts calls accepted into the plugin scheduler's queue.
	Calls
	// CallsQueued counts accepted calls that could not be admitted at once and waited.
	CallsQueued
	// LightQueuedBehindOtherTenant counts calls that waited, next in line for their own
	// registration, while an earlier queued call of another tenant with more active
	// workers than theirs was waiting too: the calls first-come first-served admits after
	// that tenant's and a fewest-active-first order may admit before it.
	LightQueuedBehindOtherTenant

	// The freshness scheduler's counters, counted at stage B in Scenario.Decide
	// (examples/freshness/policy.go).

	// StageBDecisions counts frames a free worker took from the queue and stage B
	// decided about, whatever the policy.
	StageBDecisions
	// P99MissP50Fit counts stage B decisions where no variant's conservative forecast
	// (p99 x 1.10) fits the frame's deadline but the fastest variant's optimistic one
	// (p50) does: the frames ADR-0010 starts and ADR-0009 discards.
	P99MissP50Fit

	numCounters
)

// Name returns the counter's name: lower case words joined by hyphens, usable as a Go
// benchmark metric unit ("cheap-parked-behind-costly").
func (c Counter) Name() string {
	switch c {
	case Dispatches:
		return "dispatches"
	case Cheap:
		return "cheap"
	case Costly:
		return "costly"
	case Parked:
		return "parked"
	case CheapWaited:
		return "cheap-waited"
	case CheapParkedBehindCostly:
		return "cheap-parked-behind-costly"
	case Calls:
		return "calls"
	case CallsQueued:
		return "calls-queued"
	case LightQueuedBehindOtherTenant:
		return "light-queued-behind-other-tenant"
	case StageBDecisions:
		return "stage-b-decisions"
	case P99MissP50Fit:
		return "p99-miss-p50-fit"
	}
	return fmt.Sprintf("counter(%d)", uint8(c))
}

// String returns the counter's name.
func (c Counter) String() string { return c.Name() }

// Counters returns every counter, in declaration order.
func Counters() []Counter {
	out := make([]Counter, numCounters)
	for i := range out {
		out[i] = Counter(i)
	}
	return out
}

// ReaderPoolCounters returns the reader pool's counters (examples/readerpool), in
// declaration order: what its release suite reports.
func ReaderPoolCounters() []Counter {
	return []Counter{Dispatches, Cheap, Costly, Parked, CheapWaited, CheapParkedBehindCostly}
}

// PluginHostCounters returns the plugin scheduler's counters (examples/pluginhost), in
// declaration order: what its tenant-mix suite reports.
func PluginHostCounters() []Counter {
	return []Counter{Calls, CallsQueued, LightQueuedBehindOtherTenant}
}

// FreshnessCounters returns the freshness scheduler's counters (examples/freshness), in
// declaration order.
func FreshnessCounters() []Counter { return []Counter{StageBDecisions, P99MissP50Fit} }

// Names returns every counter's name, in declaration order.
func Names() []string {
	out := make([]string, numCounters)
	for i := range out {
		out[i] = Counter(i).Name()
	}
	return out
}

// Lookup returns the counter with the given name.
func Lookup(name string) (Counter, bool) {
	for i := range numCounters {
		if c := Counter(i); c.Name() == name {
			return c, true
		}
	}
	return 0, false
}

// Snapshot holds the value of every counter at one moment.
type Snapshot [numCounters]uint64

// Take reads every counter. In a default build it returns all zeros.
func Take() Snapshot {
	var s Snapshot
	for i := range s {
		s[i] = Counter(i).Load()
	}
	return s
}

// Sub returns the counts between an earlier snapshot and s: what happened in between.
func (s Snapshot) Sub(earlier Snapshot) Snapshot {
	var d Snapshot
	for i := range s {
		d[i] = s[i] - earlier[i]
	}
	return d
}

// Get returns the value of counter c in the snapshot.
func (s Snapshot) Get(c Counter) uint64 {
	if c >= numCounters {
		return 0
	}
	return s[c]
}
