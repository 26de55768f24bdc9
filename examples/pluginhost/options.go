package pluginhost

import (
	"errors"
	"fmt"
	"time"
)

// Policy is the admission order among eligible queued calls: the one switch experiments
// flip (experiment 40 compares the two).
type Policy int

const (
	// PolicyDefault is the build's default: PolicyFIFO, or PolicyFair in a build with
	// -tags pluginhost_fair (see DefaultPolicy).
	PolicyDefault Policy = iota
	// PolicyFIFO admits the eligible call that arrived first, whoever its tenant.
	PolicyFIFO
	// PolicyFair admits a call of the tenant with the fewest active workers; the tenant
	// served least recently breaks a tie, arrival order breaks the rest.
	PolicyFair
)

// String returns "fifo", "fair" or "default".
func (p Policy) String() string {
	switch p {
	case PolicyDefault:
		return "default"
	case PolicyFIFO:
		return "fifo"
	case PolicyFair:
		return "fair"
	}
	return fmt.Sprintf("policy(%d)", int(p))
}

// WorkClass is a registration's class, declared by the application: heavy calls have a
// longer timeout and their own limits.
type WorkClass int

const (
	// Normal calls are short; they time out after Options.NormalTimeout.
	Normal WorkClass = iota
	// Heavy calls time out after Options.HeavyTimeout and are limited globally
	// (Options.MaxHeavyCalls) and per tenant (Options.MaxHeavyCallsPerTenant); the
	// workers of heavy registrations may reserve at most half the memory budget.
	Heavy
)

// String returns "normal" or "heavy".
func (c WorkClass) String() string {
	if c == Heavy {
		return "heavy"
	}
	return "normal"
}

// Profile describes a plugin's worker: what the launcher starts and the memory admission
// reserves for it.
type Profile struct {
	// Name and Version identify the plugin program; they are reported, not interpreted.
	Name, Version string
	// MemoryMiB is the memory declared for one worker, reserved against the budget for
	// as long as the worker exists (running or idle). Required, > 0.
	MemoryMiB int
	// Timeout, when > 0, caps a call's execution below its class timeout.
	Timeout time.Duration
	// Args and Env are added to the launcher's program arguments and environment.
	Args, Env []string
	// Reuse is set only by operator-reviewed configuration: ReuseApprovedSessions lets a
	// worker whose call completed cleanly clean up its session and go back to a shared
	// pool, from which a call of any registration with the same profile takes it. The
	// launcher's workers must be SessionWorkers.
	Reuse ReusePolicy
}

// ReusePolicy says whether a profile's used workers may serve another registration.
type ReusePolicy int

const (
	// ReuseNone: a used worker serves only its registration (the default).
	ReuseNone ReusePolicy = iota
	// ReuseApprovedSessions: after each clean call the worker's session is cleaned up
	// and the worker returns to the profile's pool.
	ReuseApprovedSessions
)

// Options configures a Scheduler. A zero field takes its default (the Default...
// constants); MaxWorkers and MaxIdleWorkers stay unlimited at zero.
type Options struct {
	// MemoryBudgetMiB is the memory the scheduler may reserve for workers: the sum of
	// their profiles' MemoryMiB never exceeds it. It is assigned by the application
	// from its deployment after headroom; the scheduler does not look at free memory.
	MemoryBudgetMiB int
	// MaxWorkers, when > 0, is a ceiling on worker processes (running, starting or
	// idle), for controlled comparisons. Zero: the count follows demand and the budget.
	MaxWorkers int
	// MaxConcurrentStarts limits how many workers start at once. A cold call beyond it
	// waits for a start slot within its deadline.
	MaxConcurrentStarts int
	// MaxHeavyCalls and MaxHeavyCallsPerTenant limit running heavy calls in all and per
	// tenant.
	MaxHeavyCalls, MaxHeavyCallsPerTenant int
	// NormalTimeout and HeavyTimeout bound a call's execution by its class. The deadline
	// starts at admission and includes the worker's start and the exchange.
	NormalTimeout, HeavyTimeout time.Duration
	// IdleTimeout is how long an idle used worker stays resident; pressure may evict it
	// sooner.
	IdleTimeout time.Duration
	// MaxIdleWorkers, when > 0, bounds the idle residency cache of used workers by
	// count: beyond it the least recently used one is stopped. Pristine workers do not
	// count; PristineReserve bounds them.
	MaxIdleWorkers int
	// MaxQueuedCalls bounds the calls waiting for admission; MaxCallBytes bounds the
	// serialized size of one call. Beyond either a call is rejected at once.
	MaxQueuedCalls, MaxCallBytes int
	// SweepInterval is how often cancelled and expired queued calls are removed and
	// idle workers past IdleTimeout stopped.
	SweepInterval time.Duration
	// Policy is the admission order.
	Policy Policy
	// PristineReserve, when > 0, is the shared cap of the pristine reserve: one ready,
	// never-used worker per profile requested within IdleTimeout, started only into free
	// budget while nothing is queued (residency.go). Zero: no reserve. The launcher's
	// workers must be SessionWorkers.
	PristineReserve int
	// ReusableIdleTimeout is how long a clean pooled worker (approved-session reuse)
	// stays idle before it is stopped.
	ReusableIdleTimeout time.Duration
	// MaxHeavyRegistrations limits how many registrations may be declared Heavy at once
	// (the declaration limit); beyond it Register fails with ErrHeavyLimit.
	MaxHeavyRegistrations int
	// Launcher starts workers. Required.
	Launcher Launcher
	// Clock is the time source of the measurements, the sweep and the idle timeout;
	// nil is the real clock. Tests pass a virtual one.
	Clock Clock
}

// The defaults of Options.
const (
	DefaultMemoryBudgetMiB        = 4096
	DefaultMaxConcurrentStarts    = 8
	DefaultMaxHeavyCalls          = 2
	DefaultMaxHeavyCallsPerTenant = 1
	DefaultNormalTimeout          = 5 * time.Second
	DefaultHeavyTimeout           = 5 * time.Minute
	DefaultIdleTimeout            = 2 * time.Minute
	DefaultMaxQueuedCalls         = 4096
	DefaultMaxCallBytes           = 1 << 20
	DefaultSweepInterval          = 100 * time.Millisecond
	DefaultReusableIdleTimeout    = 2 * time.Minute
	DefaultMaxHeavyRegistrations  = 16
)

// withDefaults returns the options with every zero field set to its default, or an error
// naming the first invalid field.
func (o Options) withDefaults() (Options, error) {
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"MemoryBudgetMiB", &o.MemoryBudgetMiB, DefaultMemoryBudgetMiB},
		{"MaxWorkers", &o.MaxWorkers, 0},
		{"MaxConcurrentStarts", &o.MaxConcurrentStarts, DefaultMaxConcurrentStarts},
		{"MaxHeavyCalls", &o.MaxHeavyCalls, DefaultMaxHeavyCalls},
		{"MaxHeavyCallsPerTenant", &o.MaxHeavyCallsPerTenant, DefaultMaxHeavyCallsPerTenant},
		{"MaxIdleWorkers", &o.MaxIdleWorkers, 0},
		{"MaxQueuedCalls", &o.MaxQueuedCalls, DefaultMaxQueuedCalls},
		{"MaxCallBytes", &o.MaxCallBytes, DefaultMaxCallBytes},
		{"PristineReserve", &o.PristineReserve, 0},
		{"MaxHeavyRegistrations", &o.MaxHeavyRegistrations, DefaultMaxHeavyRegistrations},
	}
	for _, f := range ints {
		if *f.v < 0 {
			return o, fmt.Errorf("options: %s must not be negative, got %d", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.MaxCallBytes > maxFrame {
		return o, fmt.Errorf("options: MaxCallBytes must be at most %d, got %d", maxFrame, o.MaxCallBytes)
	}
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"NormalTimeout", &o.NormalTimeout, DefaultNormalTimeout},
		{"HeavyTimeout", &o.HeavyTimeout, DefaultHeavyTimeout},
		{"IdleTimeout", &o.IdleTimeout, DefaultIdleTimeout},
		{"SweepInterval", &o.SweepInterval, DefaultSweepInterval},
		{"ReusableIdleTimeout", &o.ReusableIdleTimeout, DefaultReusableIdleTimeout},
	}
	for _, f := range durations {
		if *f.v < 0 {
			return o, fmt.Errorf("options: %s must not be negative, got %s", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	switch o.Policy {
	case PolicyDefault:
		o.Policy = DefaultPolicy
	case PolicyFIFO, PolicyFair:
	default:
		return o, fmt.Errorf("options: unknown Policy %d", int(o.Policy))
	}
	if o.Launcher == nil {
		return o, errors.New("options: Launcher is required")
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	return o, nil
}

// Clock is the scheduler's time source.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not run yet and reports whether it did so.
	Stop() bool
}

// realClock is the wall clock.
type realClock struct{}

// Now returns time.Now().
func (realClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// The errors a call or a registration fails with. Each is matched with errors.Is.
var (
	// ErrClosed: the scheduler or the registration is closed.
	ErrClosed = errors.New("pluginhost: closed")
	// ErrQueueFull: MaxQueuedCalls calls are already waiting; the call was not queued.
	ErrQueueFull = errors.New("pluginhost: queue full")
	// ErrTooLarge: the call's serialized size is above MaxCallBytes; it was not queued.
	ErrTooLarge = errors.New("pluginhost: call too large")
	// ErrExpired: the call's deadline passed while it was queued; it never executed.
	ErrExpired = errors.New("pluginhost: expired in the queue")
	// ErrCancelled: the call's context was cancelled while it was queued; it never
	// executed.
	ErrCancelled = errors.New("pluginhost: cancelled in the queue")
	// ErrTimeout: the call ran past its class (or profile) timeout; it may have had
	// effects, and its worker was stopped.
	ErrTimeout = errors.New("pluginhost: call timed out")
	// ErrRegistered: the (tenant, plugin) pair is already registered.
	ErrRegistered = errors.New("pluginhost: already registered")
	// ErrFailed: a cleanup failed earlier, so the scheduler admits nothing any more
	// (Snapshot.Runtime is RuntimeFailed, Snapshot.Failure says why).
	ErrFailed = errors.New("pluginhost: admissions stopped after a cleanup failure")
	// ErrCallbackScope: a scheduled call was made from inside a callback; it is denied,
	// as it could wait for a worker held by the call running the callback.
	ErrCallbackScope = errors.New("pluginhost: scheduled call from a callback scope denied")
	// ErrNotGranted: the plugin asked for a callback its registration holds no grant for.
	ErrNotGranted = errors.New("pluginhost: callback not granted")
	// ErrWorkerHung: a worker did not exit when it was stopped and had to be killed. A
	// Worker's Stop wraps it; the scheduler treats it as a cleanup failure and stops
	// admissions. Other stop errors (a worker that crashed and exited with an error
	// status) are counted in Snapshot.StopFailures and returned by Close, but do not stop
	// admissions: the worker is gone, and its registration's next call starts another.
	ErrWorkerHung = errors.New("pluginhost: worker did not exit when stopped")
	// ErrHeavyLimit: Options.MaxHeavyRegistrations heavy registrations exist already.
	ErrHeavyLimit = errors.New("pluginhost: heavy declaration limit reached")
)
