// Package freshness is flipbench's second bundled system under test: a scheduler for
// frame-based requests whose results are worth something only while they are fresh. It
// reproduces the decision record behind experiment 10 (seed 002, ADR-0010 "promise
// pessimistically, discard optimistically") and is built so the three stage B policies the
// record argues about run on the same code, the same frames and the same workers.
//
// # The model
//
// A Scenario describes a contract and a load. Frames are generated at a fixed interval
// over the scenario's Duration; each frame reaches the scheduler Transport after it was
// generated and waits in a queue of at most QueueCap frames (a frame arriving at a full
// queue supersedes the oldest waiting one: a newer frame makes it worth less). Workers
// identical workers take frames from the head of the queue. A frame can be computed by one
// of several Variants, each with a runtime profile (p50, p99); a frame's runtime under a
// variant is drawn from a log-normal distribution with that median and 99th percentile,
// with the same draw for every variant of one frame (a hard frame is hard for every
// variant). The load factor is the arrival rate times the mean runtime of the fastest
// variant, divided by the number of workers: at 125% the frames ask for a quarter more
// work than the workers can do.
//
// A result is usable when it is delivered at most MaxAge after its frame was generated
// (freshness). Apart from it, a scenario may set a Deadline, the promise of when a
// started frame's result is due (zero: MaxAge). The record's two forecasts come from one
// profile (Variant.Conservative and Variant.Optimistic):
//
//	conservative finish = start + p99 x 1.10
//	optimistic finish   = start + p50
//
// # Stage B: before dispatch
//
// When a worker is free, the scheduler takes the head frame and decides (Scenario.Decide):
//
//  1. Feasibility, conservative for every policy: the first variant (in the scenario's
//     preference order, from the current one under hysteresis) whose conservative finish
//     is within the promise (generation + Deadline) is started.
//  2. When no variant is feasible, the policy decides about the fastest variant, by
//     freshness (generation + MaxAge):
//     - FIFO starts it: no frame is ever discarded before dispatch.
//     - Pessimistic (ADR-0009) starts it only when its conservative forecast is fresh and
//     discards the frame otherwise.
//     - Optimistic (ADR-0010) starts it when its optimistic finish is fresh, and discards
//     it only when it would be too old even then.
//  3. With Scenario.Hysteresis the variant a frame needed becomes the current one at once
//     when it is faster; the scheduler moves back to a more preferred variant only after a
//     stable reserve (the record's variant hysteresis).
//
// In the record's scenario A (p99 x 1.10 = 68 ms, transport 3 ms, max_age 66 ms) a frame
// that starts the moment it arrives has a conservative finish 71 ms after its generation:
// the pessimistic policy discards every frame before it starts, while the optimistic one
// starts it (41 + 3 = 44 ms <= 66 ms) and lets stage C judge it.
//
// # Stage C: at completion
//
// A finished result is usable when its age (completion minus generation) is at most
// MaxAge, and completed obsolete otherwise; the worker time spent on obsolete results is
// stale compute, the waste the record wants measured instead of hidden. Stats counts
// every frame exactly once: usable, completed obsolete, discarded before dispatch, or
// superseded in the queue, and records the age of every delivered result.
//
// # Time
//
// The scheduler runs on one loop goroutine and takes its time, its timers and its
// workers' pacing from a Clock. RealClock runs a scenario on real goroutines and timers:
// one goroutine per worker computes a digest of the frame (real work, a few microseconds)
// and then waits on a timer until the frame's runtime has passed, and the clock's scale
// maps scenario time to wall time (a scale of 0.25 runs a scenario of one second in a
// quarter of a second). The ages it measures include the host's timer and scheduling
// delays. VirtualClock runs the same scheduler as a discrete-event simulation on one
// goroutine: deterministic, instant, for unit tests and for the doctor's what-ifs.
//
// # Doctor
//
// Doctor checks a scenario's contract before anything runs and reports an over-committed
// one with its numbers: max_age against p50 + transport and p99 x 1.10 + transport, the
// promise against p99 x 1.10 + transport, and load above 100%. Run calls it before every
// run and keeps the diagnosis in Stats.Doctor. The command in cmd/freshness runs it (and
// runs scenarios).
//
// # Probes
//
// In a build with -tags flipbench_probe, stage B counts every decision (probe counter
// stage-b-decisions) and the decisions where the two forecasts disagree, no variant
// feasible by p99 x 1.10 but the fastest one fresh by p50 (p99-miss-p50-fit): the frames
// ADR-0010 starts and ADR-0009 discards, whatever the policy that runs. In a default
// build they compile to nothing (see package probe).
package freshness
