// Package admission holds the lanes of experiment 275 (which read gets the next free
// worker) for the bundled reader pool, examples/readerpool. The lanes are Go benchmarks in
// admission_test.go; the package has no other code.
//
// flipbench runs each lane in a fresh process as
//
//	admission.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count W+N
//
// so every repetition is one sample with b.N == 1 and the first W are warmup. The
// database and a pool of exactly four workers are built once per process, on first use,
// and shared by every sample of the lane. While a lane runs, GOMAXPROCS is 8, so every
// caller and every worker can be a running thread, as the reader isolates of the
// original experiment were; on a 2-core host they share the two cores.
//
// # What the lanes ask
//
// The pool classifies a read as cheap (its statement has completed before and never
// returned more than 64 rows) or costly. The candidates change who waits: candA wakes
// parked cheap reads before parked costly ones, candB also keeps the last free worker
// from costly reads while cheap reads are recent. A "large read" below is a 1,000-row
// read of the six-column items table (costly); a "point read" is a one-row primary-key
// read (cheap once the pool has seen it complete: the lanes that time it run it twice,
// untimed, before their first sample; Bulk4Mixed runs it before each sample, so it is
// cheap from the second sample on, which the warmup samples cover).
//
//   - PointUnderLoad (secondary in the exp 275 page): four large reads hold the four
//     workers; the first point read issued while they hold them is timed, alone. Set-up
//     and tear-down are not timed. Before the timer starts the lane waits until all four
//     large reads have been given a worker or parked and none has given it back, so the
//     point read arrives into a saturated pool (under candB one large read is parked and
//     a worker is free: that is the policy, not a broken barrier). It reports
//     point-parked/op, the share of samples in which the point read had to wait: in base
//     about nine in ten on a busy 2-core host, where a large read sometimes finishes
//     between the check and the point read's arrival.
//   - MixedQueue (primary): eight large reads are issued and admitted (four running, the
//     rest parked), then eight point reads at once; timed until all eight point reads are
//     done.
//   - Bulk4Mixed (guard, the price of candB): four concurrent large reads right after a
//     point read, timed until all four are done. A reservation that refuses one of them
//     the last worker shows here.
//   - Bulk4Cold (control): the same burst in a process that never runs a cheap read, so
//     candB's reservation stays disarmed and the lane must not move.
//   - CostlyLatency (guard, starvation): four large reads hold the pool, a fifth is
//     issued and parks, then sixteen point reads pile up behind it from four callers;
//     timed from the fifth read's issue to its completion. Cheap reads jumping it show
//     here.
//   - Point20Idle, BulkSeq4Idle, Write20 (inert controls): 20 point reads, four large
//     reads one after another, 20 inserts, on an idle pool. Nothing parks, so only the cost
//     of classification and the policy's bookkeeping on the fast path could move them.
//     Each sample is a batch because single idle operations were too noisy to tell that
//     cost from the host's.
package admission
