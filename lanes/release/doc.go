// Package release is the release suite of the bundled reader pool (examples/readerpool):
// workloads shaped like what an application built on the pool does, run with the
// incidence probes compiled in to count how often a situation an experiment wants to
// optimise actually occurs. The lanes are Go benchmarks in release_test.go.
//
// flipbench incidence (and flipbench ab, for an experiment whose spec has incidence:)
// builds the package with -tags flipbench_probe and runs each lane once, in its own
// process:
//
//	release.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count 1 -test.benchmem
//
// One operation of a lane is its whole workload. Every lane reports, besides its time,
// the change of every reader-pool probe counter over that workload with b.ReportMetric, in
// the counter's name as unit ("dispatches", "cheap", "costly", "parked", "cheap-waited",
// "cheap-parked-behind-costly"). In a default build the counters are compiled out and
// every one of them reads 0.
//
// Each lane process builds its own database (20 conversations of 1,000 messages, a feed
// of 2,000 items, 1,000 users, 400 photos of 16 KiB) and opens a pool at the scale of
// experiment 275's lanes: a worker per CPU the process may run on, at least two and at
// most four (readerpool.ProcessScale; four on the original's machine, two on the 2-CPU
// reference host), so the incidence is counted on the pool the lanes measure. It runs
// with GOMAXPROCS 8, so every caller and worker can be a running thread. The workloads
// (how many callers read at once) are the application's and do not change with the
// pool; the positive control fires one badge count per worker, and Diagnostics bursts two
// byte reads per worker. The CPU lanes (cpu_test.go) keep four workers.
//
// # The scenarios
//
// They follow the release suite of the original experiment 275 (chat, feed paging,
// concurrent reads 4x and 8x, streaming fan-out, keyed-primary-key subscriptions,
// diagnostics, memory) at a similar scale: 119,365 reads in all with two workers (119,425
// with three, 119,485 with four), about 10 s of wall time
// for the nine lane processes on the 2-core reference host (6.45 s of measured workload
// in results/2026-12-01T11-27-46Z-exp275-quick).
// Like that suite, no scenario issues more than four reads of different cost at once;
// only the positive control does.
//
//   - ChatSim: a chat screen. 6,000 messages are posted, rotating over the conversations;
//     after each, the screen's three live queries are re-run at once (the open
//     conversation's latest 50 messages, the 20-row conversation list with unread counts
//     and last message, the unread total). Every 21st post marks the open conversation
//     read and re-reads the list.
//   - FeedPaging: the feed scrolled to its end 60 times, 20 items a page by keyset
//     pagination, with the item count and the page's first item read every page.
//   - Concurrent4, Concurrent8: 4 or 8 callers each read a 100-row feed page 150 times,
//     all at once: the pool's throughput under parallel reads of one (costly) shape.
//     Concurrent8 parks, costly reads behind costly reads.
//   - StreamFanout: 1,500 writes to the messages table; after each, the eight live
//     queries on it (the unread badges of the conversations on screen) are re-run at
//     once. Eight cheap reads on two to four workers: cheap reads wait here, behind cheap
//     ones.
//   - KeyedPK: live queries on 200 users keyed by primary key; 60,000 updates each touch
//     one of them and re-run that key's query only, and every tenth is followed by the
//     lookup of a user nobody subscribes to.
//   - Diagnostics: 30 rounds of a burst of two concurrent byte reads (SelectBytes) per
//     worker (eight on four workers) of
//     about 0.9 MB of JSON each, which grows every worker's JSON buffer, then 64 small
//     byte reads one after another. After every round no worker may hold a JSON buffer
//     above 512 KiB (the guard of the original exp 266): the lane fails otherwise, and it
//     reports json-buffer-high-water-bytes, the largest buffer a worker held after a
//     settle phase. Byte reads rotate over the workers, so the settle reads reach every
//     worker and each shrinks its buffer; TestDiagnosticsGuard shows the guard failing
//     for the variant in which byte reads are sticky (readerpool.WithStickyBytes).
//   - Memory: 40 rounds of five gallery pages (20 photos, 320 KiB, few rows and so cheap),
//     one export of the whole gallery (6.4 MB, above the sacrifice threshold: its worker
//     drops and reopens its connection; the lane reports sacrifices) and 20 lookups.
//   - PositiveControl: not a workload but the proof that the probe works. Ten frames,
//     each firing a slow but cheap badge count per worker (one row each, a text search
//     over half the messages), then a paged list query (200 rows: costly), then four
//     small lookups, in that order: more concurrent reads of mixed cost than the pool
//     has workers, so the small
//     lookups park behind the parked list query and cheap-parked-behind-costly must fire.
//     When it reads 0 in a probe build, the probe is broken, and a 0 anywhere else
//     proves nothing.
//
// TestScenarios runs every scenario at a small size and checks, in a probe build, that
// it dispatches exactly the reads it plans; TestSuiteScale checks the lane sizes add up
// to at least 100,000 reads.
package release
