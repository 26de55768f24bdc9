// Package pluginhost is flipbench's second bundled system under test: a scheduler that
// shares one host's plugin workers among tenants, as the fair multi-tenant scheduler of
// seed 003 does, written so that the policy experiments argue about (who is admitted
// next when calls wait) is one switch and its mechanism is visible.
//
// # Workers are processes
//
// A worker is an OS process that serves one (tenant, plugin) registration, started by a
// Launcher. ProcessLauncher starts a program that answers calls over its stdin and stdout
// (Serve; the frames are in wire.go), so a cold start costs what starting a process
// costs. In this repository the program is the test binary itself: the scheduler's tests
// and its lanes (lanes/pluginhost, lanes/tenantmix) call Serve from TestMain when
// WorkerEnv is set, so the worker is exactly the binary under test, built with it and
// hashed with it in a receipt, and nothing needs the Go toolchain at run time. A worker
// exits when its stdin closes (the host stopped it or died); Survivors finds any that
// did not.
//
// # Calls
//
// A call is one complete exchange. Calls to one registration queue in arrival order and
// run one at a time on the registration's one worker, never on a second instance; each
// admitted call has its worker to itself. A call is admitted when the policy ranks it
// first among the admissible queued calls (dispatch.go): FIFO takes the earliest
// arrival; Fair takes a call of the tenant with the fewest active workers, breaking ties
// by the tenant served least recently. Options.Policy selects one; its zero value is the
// build's DefaultPolicy (FIFO, or Fair with -tags pluginhost_fair).
//
// Admission reserves the worker profile's declared memory against the budget
// (Options.MemoryBudgetMiB) for as long as the worker lives; there is no worker ceiling
// unless Options.MaxWorkers sets one. Heavy registrations (WorkClass) have their own
// timeout and limits (two heavy calls at once, one per tenant, by default, and at most
// half the budget reserved). At most Options.MaxConcurrentStarts workers start at once;
// a cold call beyond that waits for a start slot within its deadline, which starts at
// admission and covers the start and the exchange.
//
// The queue is bounded by count (MaxQueuedCalls, 4,096) and by each call's serialized
// size (MaxCallBytes, 1 MiB); a call beyond either is rejected at once. A sweep about
// every 100 ms ends queued calls whose context was cancelled or whose deadline passed;
// they never execute.
//
// # Residency
//
// A used worker stays idle with its registration after its call (residency.go), in an
// LRU cache bounded by the budget, the ceiling, MaxIdleWorkers and IdleTimeout (two
// minutes). A cold call that does not fit evicts idle workers, pristine ones first, then
// least recently used, before starting its own. Evicted workers are stopped, never
// reassigned: without approved reuse a tenant's used worker never serves another tenant.
// More active (tenant, plugin) pairs than fit therefore means restarting processes for
// most calls.
//
// Two mechanisms answer cold starts, as the seed's do. Approved-session reuse
// (Profile.Reuse = ReuseApprovedSessions, operator-reviewed only): after a clean call the
// worker cleans up its session and unbinds (SessionWorker.Release) and joins its
// profile's pool, where a call of any registration with the same profile takes it (a
// reused call, not cold). The pristine reserve (Options.PristineReserve): while nothing
// is queued, one never-used unbound worker per recently requested profile is started
// into free budget, never by eviction; a cold call of that profile takes it without a
// start on its path.
//
// # Failures, callbacks and heavy declarations
//
// A failed cleanup (a worker that does not exit when stopped, ErrWorkerHung; a session
// whose cleanup fails) stops admissions for good: queued calls end with ErrFailed, new ones are refused, and
// Snapshot.Runtime and Snapshot.Failure say why. RegisterWithCallbacks gives a
// registration the application's callbacks and the grants the plugin may use; a
// scheduled call from inside a callback is denied (ErrCallbackScope). At most
// MaxHeavyRegistrations registrations may be heavy at once.
//
// # Measurements
//
// Plugin.InvokeMeasured returns a Result with the call's queue time (arrival to
// admission) and execution time (admission to answer); Elapsed is both. Scheduler.Snapshot
// reports queue and active counts, reservations, cold and warm calls, starts, evictions,
// expiries and rejections. The scheduler's clock (Options.Clock) is injected, so tests
// drive the sweep and the idle timeout with a virtual one.
//
// Built with -tags flipbench_probe, the scheduler also feeds the incidence counters of
// package probe: calls, calls-queued and light-queued-behind-other-tenant (see
// dispatch.go for exactly when each counts). In a default build they compile to nothing.
//
// # What is not here
//
// Streams (the bundled plugin has single-exchange calls only) and the seed's registry
// diagnostic; see docs/pluginhost.md.
package pluginhost
