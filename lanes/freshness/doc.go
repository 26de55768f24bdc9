// Package freshness holds the lanes of experiment 10 (pessimistic against optimistic
// discard before dispatch, ADR-0010) for the bundled freshness scheduler,
// examples/freshness. The lanes are Go benchmarks in freshness_test.go; the package has
// no other code than the policy the build selects.
//
// flipbench runs each lane in a fresh process as
//
//	freshness.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count W+N -test.benchmem
//
// so every repetition is one sample with b.N == 1 and the first W are warmup. One sample
// is one run of a scenario on the scheduler's real clock: four worker goroutines, frames
// arriving on timers, runtimes paced by timers, a scenario second in half a wall second
// (scenario A runs three scenario seconds, the others one). Sample k of a process uses
// seed k, so the same sample of every process and every arm sees the same frames and
// runtimes.
//
// Every run has the doctor check its contract first (freshness.Run does), and the lane
// fails unless the doctor found exactly the over-commitments the lane states: scenario A
// fails the load and conservative checks, Variants the conservative check, Comfortable
// and Underload hold. Each process prints the diagnosis once to stderr, which the
// receipt keeps.
//
// # Arms by build tag
//
// The scheduler has all three stage B policies; the lanes run the one the build selects
// (policy_*.go): no tag is pessimistic (ADR-0009, the base arm), -tags
// freshness_optimistic is optimistic (ADR-0010, the candidate), -tags freshness_fifo is
// fifo (the reference arm). Each arm is therefore its own binary, built from the same
// source with different tags; giving both tags is a compile error.
//
// # What the lanes report
//
// The lane's value is usable/s: usable results per second of scenario time (higher is
// better). Beside it, per run: usable/op, completed-obsolete/op,
// discarded-before-dispatch/op, superseded/op, stale-compute-ms/op (worker time, in ms
// of scenario time, spent on results that were too old at delivery), and the age at
// frames/op, usable-pct (usable results as a percentage of generated frames),
// past-promise/op (delivered results later than the promise, generation + Deadline),
// variant-switches/op (started frames whose variant differs from the previous one), and
// the age at delivery's age-p50-ms and age-p99-ms over every delivered result (left out
// when a run delivered nothing). ns/op is the run's wall time.
//
//   - Overload125 (primary): the decision record's scenario A, 125% load, max_age 66 ms,
//     p99 x 1.10 + transport = 71 ms, one waiting frame, three seconds (361 frames). The
//     pessimistic policy discards every frame; fifo and optimistic deliver about the
//     record's 282.
//   - Variants (secondary): two variants (full preferred, fast with a long tail), a
//     promise of 55 ms apart from a max_age of 50 ms, two waiting frames, variant
//     hysteresis. A frame that waited past full's promise cannot be promised at all;
//     pessimistic discards it (fast's p99 x 1.10 + transport is past max_age),
//     optimistic starts fast when its p50 forecast is fresh and stage C judges it.
//   - Comfortable (control): 50% load, max_age 250 ms. Every frame is usable under
//     every policy, so usable/s is the same number in every arm.
//   - Underload (guard): 80% load, max_age 76 ms, 5 ms above p99 x 1.10 + transport.
//     The optimistic policy starts frames that waited more than 5 ms, which the
//     pessimistic one discards; it must not deliver fewer usable results for it.
package freshness
