// Package release is the release suite of the bundled reader pool (examples/readerpool):
// a handful of workloads shaped like what an application built on the pool does, run with
// the incidence probes compiled in to count how often a situation an experiment wants to
// optimise actually occurs. The lanes are Go benchmarks in release_test.go.
//
// flipbench incidence (and flipbench ab, for an experiment whose spec has incidence:)
// builds the package with -tags flipbench_probe and runs each lane once, in its own
// process:
//
//	release.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count 1
//
// One operation of a lane is its whole workload. Every lane reports, besides its time,
// the change of every reader-pool probe counter over that workload with b.ReportMetric, in the
// counter's name as unit ("dispatches", "cheap", "costly", "parked",
// "cheap-parked-behind-costly"). In a default build the counters are compiled out and
// every one of them reads 0.
//
// Each lane process builds its own database and opens a pool of exactly four workers,
// the size experiment 275 is about, and runs with GOMAXPROCS 8, so every caller and
// worker can be a running thread.
//
// # The lanes
//
//   - ChatSim: a chat screen. 400 messages are posted to 20 conversations; after each,
//     the open conversation's latest 50 messages and the conversation list with unread
//     counts are read again, both at once, as two live queries would be.
//   - FeedPaging: a feed scrolled to the end, 20 items a page by keyset pagination over
//     2,000 items, with the item count re-read every page.
//   - Concurrent4, Concurrent8: 4 or 8 callers each read a 100-row feed page 40 times, all
//     at once: the pool's throughput under parallel reads of one shape.
//   - KeyedPK: 2,000 primary-key lookups of users, every tenth followed by an update of
//     that user and a re-read of its profile.
//   - RerunFanout: 200 writes, after each of which the three live queries of a screen
//     (a 30-message list, an unread count, a 200-row feed page) are re-run at once.
//   - PositiveControl: not a workload but the proof that the probe works. Ten frames,
//     each firing four slow but cheap badge counts (one row each, a text search over
//     every message), then a paged list query (200 rows: costly), then four small lookups,
//     in that order: more than four concurrent reads of mixed cost, so the small lookups
//     park behind the parked list query and cheap-parked-behind-costly must fire. When
//     it reads 0 in a probe build, the probe is broken, and a 0 anywhere else proves
//     nothing.
package release
