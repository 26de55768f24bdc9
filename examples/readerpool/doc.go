// Package readerpool is flipbench's bundled system under test: a SQLite database served
// by one writer connection and a small pool of reader workers, written so that the
// policies experiments argue about (which worker a read goes to, who waits, what a worker
// keeps) are visible and patchable.
//
// # Workers and their warm state
//
// Each reader worker is a goroutine that owns one read-only connection
// (zombiezen.com/go/sqlite, pure Go). Everything a read leaves behind is private to that
// worker: the connection's page cache, its prepared statements (cached by SQL text, so a
// statement is prepared once per worker), the JSON key names of each statement, and the
// buffer SelectBytes renders into. Workers are therefore not interchangeable: the first
// read of a statement on a worker pays to prepare it, later reads on the same worker do
// not. This cost is per (statement, worker) pair and disappears in any benchmark that
// runs one statement thousands of times.
//
// # Dispatch
//
// All dispatch and wake-up code lives in dispatch.go. A read scans the workers for a free
// one, starting at the worker that served the previous read (sticky dispatch, exp 266):
// sequential reads return to the worker that already holds their statement, and
// concurrent reads still spread because a busy worker is skipped. SelectBytes rotates
// instead (the scan starts after the previous worker), because its per-worker buffer is
// only reclaimed by traffic reaching that worker; see Pool.SelectBytes. When every worker
// is busy the read parks in a single first-in, first-out queue, and a freed worker is
// handed straight to the longest-waiting read.
//
// # Row memory and sacrifice
//
// The pool remembers, per SQL text, the most rows a read of it has returned (its high
// water, see Pool.RowMemory). It sizes result buffers from it, and it is the cost signal
// of dispatch: every read is classified before dispatch as cheap (its statement has been
// seen and never returned more than 64 rows) or costly (never seen, or larger), the
// classification of exp 275. The committed policy does not act on the class; exp 275's
// archived candidates (archive/exp-275) do. A worker whose result exceeds the sacrifice
// threshold (WithSacrificeBytes) answers, then drops and reopens its connection to release
// the memory; it takes no read until it has reopened.
//
// # Observability
//
// Pool.Stats reports per-worker counts (reads, prepares, sacrifices, buffer size) and
// the dispatcher's counts (dispatches, parked reads), so tests can check which worker
// served a read and lanes can report the mechanism they measure. With WithWorkerCPU each
// worker also measures the CPU time its thread spends serving reads (WorkerStats.CPU).
//
// # Scale
//
// ScaleFor and ProcessScale give the pool size the bundled lanes use: a worker per CPU
// the process may run on, at least 2 and at most 4, so that the lanes keep the original
// experiments' shape (four workers, a core each) on four or more CPUs and shrink with the
// machine below that. DefaultWorkers, the size Open uses without WithWorkers, is the
// library's own choice and is unchanged.
//
// Built with -tags flipbench_probe, the dispatcher also feeds the incidence counters of
// package probe: dispatches, cheap, costly, parked and cheap-parked-behind-costly (see
// dispatch.go for exactly when each counts). In a default build they compile to nothing.
package readerpool
