// Package tenantmix is the release suite of the bundled plugin scheduler
// (examples/pluginhost): tenant mixes shaped like what a host shared among customers
// sees, run with the incidence probes compiled in to count how often a light tenant's
// call waits behind another tenant's calls, the situation experiment 40's fair policy
// reorders. The lanes are Go benchmarks in tenantmix_test.go.
//
// flipbench incidence (and flipbench ab, for an experiment whose spec has incidence:)
// builds the package with -tags flipbench_probe and runs each lane once, in its own
// process:
//
//	tenantmix.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime 1x -test.count 1 -test.benchmem
//
// One operation of a lane is its whole workload. Every lane reports, besides its time,
// the change of every plugin-scheduler probe counter over that workload with
// b.ReportMetric, in the counter's name as unit ("calls", "calls-queued",
// "light-queued-behind-other-tenant"). In a default build the counters are compiled out
// and every one of them reads 0.
//
// Each lane process starts its own scheduler: a 256 MiB memory budget and no worker
// ceiling, 64 MiB profiles (so four workers fit at once, by memory), no reuse or
// reserve, the build's default policy (the suite is built from the base arm: FIFO). Workers are processes of the test binary (TestMain serves
// calls when pluginhost.WorkerEnv is set), and a call is the plugin's "sleep" operation,
// so its execution time is set by the mix. Arrival times come from a seeded generator:
// every run of a lane issues the same calls at the same offsets. After the lane,
// TestMain closes the scheduler and fails the process if a worker process survived.
//
// # The lanes
//
//   - Steady: four tenants with two plugins each; every registration calls in a closed
//     loop, 12 calls of 3 ms with 2 ms between them: a nominal demand (eight
//     registrations, three fifths busy) a little above the four slots, evenly across
//     tenants. Eight registrations on four slots restart a process for most calls, so
//     in practice nearly every call waits.
//   - Bursty: four tenants with two plugins each, mostly idle; each fires three bursts
//     of six calls (three per plugin, at once) of 3 ms at seeded times over 240 ms, so
//     bursts of different tenants sometimes overlap.
//   - NoisyNeighbour: one tenant with four plugins calls back to back, ten 3 ms calls per
//     plugin, holding every slot; three quiet tenants with one plugin each make four 3
//     ms calls 15 ms apart among it.
//   - ManySmallTenants: sixteen tenants with one plugin each, three 2 ms calls apiece
//     with seeded pauses of up to 10 ms: many more active pairs than slots, few calls
//     each.
//   - PositiveControl: not a workload but the proof that the probe works. A tenant
//     queues four calls to each of its four plugins at once; once the scheduler reports
//     them running and queued, two other tenants make one call each. Their calls head
//     their registrations while the first tenant, with four active workers, has calls
//     queued, so light-queued-behind-other-tenant must fire twice. When it reads 0 in a
//     probe build, the probe is broken, and a 0 anywhere else proves nothing.
package tenantmix
