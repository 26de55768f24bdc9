// Package admission holds the lanes of experiment 275 (which read gets the next free
// worker) for the bundled reader pool, examples/readerpool. The lanes are Go benchmarks in
// admission_test.go; the package has no other code.
//
// flipbench runs each lane in a fresh process as
//
//	admission.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count W+N -test.benchmem
//
// so every repetition is one sample with b.N == 1 and the first W are warmup. The
// database and the pool are built once per process, on first use, and shared by every
// sample of the lane. While a lane runs, GOMAXPROCS is 8, so every caller and every
// worker can be a running thread, as the reader isolates of the original experiment
// were.
//
// # Scale
//
// The pool has a worker per CPU the process may run on, at least two and at most four
// (readerpool.ProcessScale: runtime.NumCPU, which counts the CPUs of the affinity mask
// flipbench starts a pinned lane with). The original measured four workers with a core
// each; the lanes keep that shape on four CPUs or more, and on fewer they shrink the pool
// and the bursts with it (a burst of "four" is one read per worker, "eight" two per
// worker), so that a worker withheld from a burst is still a core the burst could have
// used. With four workers on two CPUs, four CPU-bound reads are bound by the CPUs and
// withholding a worker cost them nothing (Bulk4Mixed -5.7% [-11.9%, +0.9%] in
// results/2026-12-01T13-28-52Z-exp275-quick, with the reservation engaged in every
// sample). Every saturating lane reports the scale it ran at (workers, cpus), and the
// bursts of Bulk4Mixed and Bulk4Cold where their CPU time went: cores/op (the process's
// CPU time over the burst's wall time) and cpu-wK-ms/op (the K-th busiest worker's CPU
// time, from readerpool.WithWorkerCPU), so a receipt shows whether a withheld worker
// left a core idle.
//
// # What the lanes ask
//
// The pool classifies a read as cheap (its statement has completed before and never
// returned more than 64 rows) or costly. The candidates change who waits: candA wakes
// parked cheap reads before parked costly ones, candB also keeps the last free worker
// from costly reads while cheap reads are recent. A "large read" below is a 3,000-row
// read of the items table with a 1 KB text column (costly); a "point read" is a one-row
// primary-key read (cheap once the pool has seen it complete: every lane that runs it
// first runs it twice, untimed, so it is cheap from the first sample on).
//
// The lanes that depend on reads overlapping check that they did, with the pool's own
// counters (readerpool.Stats: dispatches, parked and waiting reads, free workers), and
// report the state they reached per sample, so that a receipt shows the situation and not
// only a time:
//
//   - PointUnderLoad (primary; for candB faster, for candA unchanged): four rounds per
//     sample; in each, a large read per worker holds the pool and the first point read
//     issued while they hold them is timed, alone; set-up and tear-down are not timed.
//     Before the point read the lane waits until all the large reads have been given a
//     worker or parked and none has given it back (under candB one large read is parked
//     and a worker is free: that is the policy, not a broken barrier), redoing the round
//     when one finished first (retries/op). ns/op is the mean of the four timed reads;
//     point-parked/op is the share of them that had to wait (base and candA: nearly
//     all; candB: almost none).
//   - MixedQueue (primary): two large reads per worker are issued and admitted (one per
//     worker running, the rest parked), then as many point reads at once; timed until
//     all the point reads are done.
//   - Bulk4Mixed (guard, the price of candB): a large read per worker, all at once, right
//     after a point read, timed from their issue until all are done. A sample counts only
//     when the burst was concurrent, all its reads asked the pool before any finished;
//     otherwise it is drained and issued again (retries/op). It reports parked/op and
//     reserved/op (Stats.Reserved: reads parked while a worker was free): under candB one
//     of the large reads is refused the last free worker in every sample (1.00), under
//     base and candA none; cores/op and cpu-wK-ms/op show what that cost in cores.
//   - Bulk4Cold (control): the same burst in a process that never runs a cheap read, so
//     candB's reservation stays disarmed (reserved/op 0) and the lane must not move.
//   - CostlyLatency (guard, starvation): a large read per worker holds the pool, one
//     more is issued and parks, then four point reads per worker pile up behind it from
//     one caller per worker; timed from the extra read's issue to its completion. Cheap
//     reads jumping it show here.
//   - Point1000Idle, BulkSeq4Idle, Write200 (inert controls): 1,000 point reads, four large
//     reads one after another, 200 inserts, on an idle pool; several milliseconds each.
//     Nothing parks, so only the cost of classification and the policy's bookkeeping on
//     the fast path could move them. The writer runs with synchronous = OFF, so no
//     insert waits for the disk.
package admission
