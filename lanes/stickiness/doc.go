// Package stickiness holds the lanes of experiment 266 (sticky reader dispatch) for the
// bundled reader pool, examples/readerpool. The lanes are Go benchmarks in
// stickiness_test.go; the package has no other code.
//
// flipbench runs each lane in a fresh process as
//
//	stickiness.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count W+N -test.benchmem
//
// so every repetition is one sample and the first W are warmup (experiment 266 sets
// harness.benchtime 4x: four operations a sample). The database and the pool are built
// once per process, on first use, and shared by every sample of the lane; the lanes are
// written for that: whatever must be new in an operation (a never-seen SQL text) is made
// new per operation, and whatever must be warm is warmed by the warmup samples.
//
// # Scale
//
// The pool has a worker per CPU the process may run on, at least two and at most four
// (readerpool.ProcessScale); the original's had four. Experiment 266 pins its lanes to
// one CPU, so its pool has two workers: the least that tells sticky dispatch from
// rotation. Conc4 and Park8 issue one and two reads per worker (four and eight on the
// original's pool). The lanes report workers and cpus, so a receipt says which shape it
// measured.
//
// # Counted companions
//
// BytesFirst8NewSQLInstr and AlternatingSQLInstr do the reads of BytesFirst8NewSQL and
// AlternatingSQL and nothing else in the operation, for counting instructions under
// Valgrind (metric: instructions, docs/instructions.md): their cost is work (preparing
// and stepping statements, rendering JSON), not waiting, so a count measures them without
// the host's noise. They build smaller tables (200 rows each; the reads touch only the
// first ids), since building the full one was most of a counted process's time.
//
// # What the lanes ask
//
// A worker prepares a statement the first time it runs it and keeps it. Round-robin
// dispatch sends sequential reads of a fresh statement to every worker in turn, so every
// worker prepares it; sticky dispatch sends them back to the worker that just ran it, so one
// does. The saving is a fixed cost per statement, so it must be large for a statement run
// 4 times, smaller for 8, smaller again for 32, and gone in steady state:
//
//   - First4NewSQL, First8NewSQL, First32NewSQL (primary): a never-seen point-read
//     statement run 4, 8 or 32 times in sequence, all timed; a sample does this for eight
//     new statements one after another and reports the mean per statement (one
//     statement took a fraction of a millisecond, too short to average over the host's
//     noise). They report prepares/op, the number of workers that prepared each
//     statement. The workers' statement caches are large enough that no lane evicts.
//   - Point1 (steady state): one point read of a statement long warm on the worker that
//     serves it (under round-robin, on every worker). The predicted effect is none.
//   - Mixed6_20, Point1Wide20 (secondary): six warm statements interleaved, 20 reads
//     each; one point read of a 20-column row.
//   - Conc4, Park8 (guards): one concurrent 5,000-row read per worker; two per worker,
//     so that half of them park and are woken. Timed from the burst's issue
//     until every read is done. A sample counts only when the burst was concurrent, all
//     its reads having asked the pool before any finished; otherwise it is drained and
//     issued again (retries/op). They report parked/op (0 for Conc4, one per worker
//     for Park8, in every sample) and cores/op (the process's CPU time over the burst's
//     wall time).
//   - Sacrifice (guard): a read above the sacrifice threshold (which drops its worker's
//     connection) followed by a point read; it reports sacrifices/op (1).
//   - BytesFirst8NewSQLInstr (guard, counted) and BytesFirst8NewSQL (its timed
//     companion): First8NewSQL through SelectBytes, which keeps rotating in both arms,
//     so it must not move.
//   - AlternatingSQLInstr (guard, counted) and AlternatingSQL (its timed companion): two
//     warm statements alternating, 200 reads: the case where sending both to one
//     connection could in principle cost something.
package stickiness
