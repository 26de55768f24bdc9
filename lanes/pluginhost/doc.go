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
// # Workers and the host
//
// The workers are real processes: the lane's test binary started again with
// pluginhost.WorkerEnv set, which TestMain turns into the plugin program
// (pluginhost.Serve). A worker start is therefore a real process start, and the worker
// is the arm's own code. The scheduler admits by memory alone, as the seed's default
// does: a 256 MiB budget, no worker ceiling, and profiles of two sizes (the noisy tenant's
// registrations 64, 64, 64 and 48 MiB, 240 in all; a light tenant's 64 MiB, which does not
// fit beside them; the Thrash pairs 64 and 48 MiB, six of which do not fit). So four
// workers run at once, because of memory, not of a slot count.
//
// Four settings (one per process; each lane runs in its own):
//
//   - the default, the seed's answer to cold starts: every profile is approved for
//     session reuse (pluginhost.ReuseApprovedSessions: a worker whose call completed
//     cleans up its session and returns to its profile's pool, where any registration of
//     that profile takes it) and a pristine reserve of two. The reserve only fills free
//     budget and these lanes keep the budget full, so it never starts a worker here
//     (pristine-calls/op stays 0); the pool is what keeps calls off process starts;
//   - NoReuse (the lanes NoisyThroughputNoReuse and ThrashNoReuse): neither; every worker
//     stays bound to its registration, so a call whose worker was evicted starts a
//     process. These are the "before" of the cold calls;
//   - the reserve pairs, without reuse (the seed's default for an unreviewed deployment),
//     each lane with the pristine reserve of two (...Reserve) and without it
//     (...NoReserve), where the seed's rule leaves the reserve room to work without
//     making an admissible call wait: NoisyThroughputReserve/NoReserve under a 512 MiB
//     budget, above the noisy workload's whole demand (368 MiB) and the reserve's two
//     targets (112 MiB); ThrashReserve/NoReserve under the 256 MiB budget with at most
//     two used idle workers (Options.MaxIdleWorkers), which leaves room for the targets
//     between samples while the six pairs still do not fit. A sample's cold calls take
//     the ready workers instead of starting processes: launched-calls/op falls,
//     pristine-calls/op rises, cold-calls/op (the seed counts a pristine take as cold)
//     stays.
//
// A call is the plugin's "sleep" operation: its execution time is chosen (4 ms, 2 ms in
// Thrash) and costs no CPU, so on the 2-core reference host the lanes measure admission,
// binds and process starts, not CPU contention among workers. After the last lane
// TestMain closes the scheduler and fails the process if any worker process is still
// running (pluginhost.Survivors).
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
// cold-calls/op (calls admitted without their own idle worker and without a previously
// used clean one), launched-calls/op (the cold calls that started their own process) and
// pristine-calls/op (those that took a pristine one), pristine-starts/op (the reserve's
// process starts since the previous sample ended, off every call's path),
// reused-calls/op (calls that took a pooled clean worker), evictions/op (idle workers
// stopped to make room), and retries/op.
//
// # The lanes
//
//   - LightFirstCall (primary): a light tenant, registered for this sample, makes its
//     first call while the flood waits; the lane's value is that call's queue time,
//     alone. It also reports admitted-ahead/op, the calls admitted between its arrival
//     and its own admission: the mechanism itself (FIFO admits the 28 queued calls
//     first; fewest-active-first admits the light call at the first free slot), and
//     light-exec-ns/op, the light call's execution time: the 1 ms call and the bind of
//     the pooled worker it takes (or its process start, when it evicts the 48 MiB
//     worker instead).
//   - NoisyThroughput (guard): the flood plus two light tenants making two calls each,
//     issued once the flood waits; timed from the flood's first call until its last
//     call is answered. Serving light calls first inserts their 16 ms of work into the
//     flood's per-registration chains: the flood's end moves by 4 ms (spread over four
//     workers) to 16 ms (all in one chain), the inherent price of fairness. Without
//     reuse, light workers also evict noisy ones, whose next calls start processes:
//     NoisyThroughputNoReuse shows that avoidable cascade.
//   - TotalThroughput (guard): the same workload, timed until every call of it, light
//     ones included, is answered.
//   - Thrash (guard): six (tenant, plugin) pairs, three tenants with two plugins each
//     (64 and 48 MiB), that do not fit the budget together; each sample queues three
//     calls to every pair at once and is timed until all 18 are answered. With the pools
//     the pairs of one profile share workers; ThrashNoReuse (secondary), without them,
//     restarts a process for most calls, which cold-calls/op and evictions/op report.
//     Each sample starts once nothing runs, releases or starts.
//   - SingleTenant (control): the flood's tenant alone, 32 calls to its four
//     registrations, timed until all are answered. With one tenant the two policies
//     admit in the same order, so the lane must not move.
package pluginhost
