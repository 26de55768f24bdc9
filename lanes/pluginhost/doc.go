// Package pluginhost holds the lanes of experiment 40 (which tenant's call gets the next
// plugin worker) for the bundled plugin scheduler, examples/pluginhost. The lanes are Go
// benchmarks in lanes_test.go; the package has no other code.
//
// flipbench runs each lane in a fresh process as
//
//	pluginhost.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count W+N -test.benchmem
//
// so every repetition is one sample with b.N == 1 and the first W are warmup. The
// scheduler is built once per process and shared by every sample of the lane. It uses
// the build's default policy: FIFO, or fewest-active-first in the candidate arm, which is
// built with -tags pluginhost_fair; nothing else differs between the arms.
//
// # Workers
//
// The workers are real processes: the lane's test binary started again with
// pluginhost.WorkerEnv set, which TestMain turns into the plugin program
// (pluginhost.Serve). A cold call therefore pays a real process start, and the worker is
// the arm's own code. The scheduler has four worker slots (an explicit MaxWorkers, the
// controlled comparison the seed keeps the ceiling for) and 64 MiB profiles in the
// default 4 GiB budget. A call is the plugin's "sleep" operation: its execution time is
// chosen (4 ms, 2 ms in Thrash) and costs no CPU, so on the 2-core reference host the
// lanes measure admission and process starts, not CPU contention among workers. After
// the last lane TestMain closes the scheduler and fails the process if any worker process
// is still running (pluginhost.Survivors).
//
// # Reaching the state
//
// Each sample of the lanes with a flood (all but Thrash) starts from the same residency:
// the noisy tenant's four registrations each hold an idle worker and nothing is queued
// (settle, untimed). The flood is 32 calls of
// the noisy tenant, eight to each of its four registrations, issued round-robin, each
// accepted by the scheduler before the next is issued, so every sample queues them in the
// same order (Thrash issues its calls the same way); the lane waits until the
// scheduler reports all 32 accepted, four running and 28 queued, none finished, and only
// then does what it measures. When a flood call finished before that state was seen the
// flood is drained and started again (retries/op). Times are taken with the scheduler's
// own measurement (Result.QueueTime) or a stopwatch, never the benchmark timer, whose
// stop-the-world memory read can let the state dissolve before the timed part starts.
//
// Every lane reports, beside its time, the scheduler's counters over the sample:
// cold-calls/op and evictions/op (workers started for calls without an idle worker of
// their own, and idle workers stopped to make room), and retries/op.
//
// # The lanes
//
//   - LightFirstCall (primary): a light tenant, registered for this sample, makes its
//     first call while the flood waits; the lane's value is that call's queue time,
//     alone. It also reports admitted-ahead/op, the calls admitted between its arrival
//     and its own admission: the mechanism itself (FIFO admits the 28 queued calls
//     first; fewest-active-first admits the light call at the first free slot), and
//     light-exec-ns/op, the light call's execution time, which holds its worker's
//     process start (it is always cold) and the 1 ms call.
//   - NoisyThroughput (guard): the flood plus two light tenants making two calls each,
//     issued once the flood waits; timed from the flood's first call until its last
//     call is answered. Serving light calls first evicts noisy workers (their next calls
//     are cold) and delays the flood's tail: that cost shows here.
//   - TotalThroughput (guard): the same workload, timed until every call of it, light
//     ones included, is answered.
//   - Thrash (guard): six (tenant, plugin) pairs, three tenants with two plugins each, on
//     the four slots; each sample queues three calls to every pair at once and is timed
//     until all 18 are answered. More active pairs than slots: most calls restart a
//     process, which cold-calls/op and evictions/op report.
//   - SingleTenant (control): the flood's tenant alone, 32 calls to its four
//     registrations, timed until all are answered. With one tenant the two policies
//     admit in the same order, so the lane must not move.
package pluginhost
