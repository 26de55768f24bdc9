package admission

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flipbench/flipbench/examples/readerpool"
)

const (
	// itemRows is the size of the items table: room for large reads at many offsets.
	itemRows = 20_000
	// largeRows is the size of a large read, far above the 64-row cheap cap.
	largeRows = 3_000
	// bodyBytes is the size of each item's text body, which large reads return and point
	// reads do not. With it a large read is about 3.5 MB of row values (below the pool's
	// 4 MiB sacrifice threshold, so no read drops its worker's connection) and a few
	// milliseconds of work on the 2-core reference host, long enough that the reads that
	// saturate the pool are still running when the read under test arrives. With the
	// collector off in the timed parts (see quietHeap), 1,000-row reads took under a
	// millisecond and a burst often had its first read done before its last had reached
	// the pool (PointUnderLoad redid a round some five times per sample, 2,000-row reads
	// about once, 3,000-row reads less often, on a loaded host).
	bodyBytes = 1_000
	// warmIDs is how many start ids the reads cycle over, so that every worker's page
	// cache holds what the lanes read after the warmup samples.
	warmIDs = 64
	// laneProcs is GOMAXPROCS while a lane runs (see the package documentation).
	laneProcs = 8
	// admitAttempts bounds how often a sample's set-up is redone when a large read
	// finished before the timed part could start.
	admitAttempts = 20
	// pointRounds is how many saturated point reads PointUnderLoad times per sample.
	pointRounds = 4
	// idleReads and idleWrites are the batch sizes of the inert controls Point1000Idle
	// and Write200: several milliseconds of work per sample.
	idleReads  = 1000
	idleWrites = 200
)

// pointColumns are the columns every read of items returns.
const pointColumns = "id, name, category, price, qty, updated"

// largeLimit is largeRows as SQL text.
const largeLimit = "3000"

// pointSQL is the point read (cheap once primed); largeSQL is the large read (costly).
const (
	pointSQL = "SELECT " + pointColumns + " FROM items WHERE id = ?"
	largeSQL = "SELECT " + pointColumns + ", body FROM items WHERE id > ? ORDER BY id LIMIT " + largeLimit
)

// fixture is the database and pool shared by every sample of the lane in this process.
type fixture struct {
	dir  string
	pool *readerpool.Pool
	err  error
	// scale is the pool's size for the CPUs this process may run on
	// (readerpool.ProcessScale): a worker per CPU, 2 to 4. The saturating lanes issue as
	// many reads as it has workers, or twice as many, where the original issued four or
	// eight against four workers.
	scale readerpool.Scale
	// primed says whether the point read has run once (so it is cheap).
	primed bool
	// next varies ids between samples. Only the benchmark goroutine touches it.
	next int
}

// The process-wide fixture: testing calls the benchmark function once per sample and
// nothing else survives between samples.
var (
	sharedOnce sync.Once
	shared     *fixture
)

// TestMain removes the fixture's database once every lane has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	os.Exit(code)
}

// setup returns the shared fixture, building it on first use, sets GOMAXPROCS for the
// lane and stops the benchmark timer for good: lanes time what they measure with a
// stopwatch instead (see stopwatch for why).
func setup(b *testing.B) *fixture {
	b.Helper()
	b.StopTimer()
	sharedOnce.Do(func() { shared = newFixture() })
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	prev := runtime.GOMAXPROCS(laneProcs)
	b.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	quietHeap()
	return shared
}

// quietHeap turns the collector off for the rest of the process (up to a 1 GiB heap,
// where it runs anyway) and collects the garbage of earlier samples, untimed, so that no
// sample pays for another's garbage or for the collector's pacing. A large read allocates
// about a megabyte of row values; with the collector on, collections took close to half
// of BulkSeq4Idle's time on the 2-core reference host and their timing varied from
// process to process, and no dispatch policy changes what the lanes allocate.
//
// The collector stays off between samples too. It used to be switched back on at the end
// of each sample; the collections the testing package and this function then ran with it
// on let the runtime return the freed heap to the operating system, and the next
// sample's reads faulted it in again: 1,000 to 2,000 page faults per Bulk4Mixed burst,
// 0.3 to 0.9 of a core in system time while it ran (by hand, on the 2-core host with
// other work running), a cost of the kernel and of the host's load, not of the dispatch
// policy, paid twice as often by reads that run at once. With the collector off
// throughout, a collection frees the memory to the heap and the next sample reuses it.
// flipbench runs one sample per call of a lane (-test.benchtime 1x); with more
// operations per call, garbage accumulates until the call ends or the limit is reached.
func quietHeap() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	runtime.GC()
}

// stopwatch times the measured part of each operation and reports the mean as ns/op,
// replacing the benchmark timer's value.
//
// The benchmark timer cannot be used here: b.StartTimer and b.StopTimer read the
// runtime's memory statistics, which stops the world, and with four workers busy in
// SQLite on a two-core host stopping the world took from 0.1 to 7.5 ms. Started after
// the barrier that sees four large reads holding the pool, b.StartTimer let the large
// reads finish before the point read was even issued, and half the samples measured an
// idle pool. time.Now stops nothing.
type stopwatch struct {
	total time.Duration
	start time.Time
}

// begin starts timing one operation.
func (s *stopwatch) begin() { s.start = time.Now() }

// end stops timing it.
func (s *stopwatch) end() { s.total += time.Since(s.start) }

// report reports the mean time per operation as ns/op.
func (s *stopwatch) report(b *testing.B) {
	b.ReportMetric(float64(s.total.Nanoseconds())/float64(b.N), "ns/op")
}

// newFixture creates the database and opens the pool. It runs no read, so a lane that
// never primes the point read never shows the pool a cheap read.
func newFixture() *fixture {
	f := &fixture{scale: readerpool.ProcessScale()}
	f.dir, f.err = os.MkdirTemp("", "admission-lanes-")
	if f.err != nil {
		return f
	}
	f.pool, f.err = readerpool.Open(filepath.Join(f.dir, "lanes.db"),
		readerpool.WithWorkers(f.scale.Workers), readerpool.WithWorkerCPU())
	if f.err != nil {
		return f
	}
	f.err = f.pool.Exec(context.Background(), fmt.Sprintf(`
		PRAGMA synchronous = OFF;
		CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category INTEGER NOT NULL,
			price REAL NOT NULL, qty INTEGER NOT NULL, updated TEXT NOT NULL, body TEXT NOT NULL);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO items SELECT i, 'item-' || i, i %% 50, i * 0.25, i %% 97,
			'2026-08-' || (10 + i %% 20) || 'T12:00:00Z', printf('%%.%dc', 'b') FROM n;
		CREATE TABLE log (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, note TEXT NOT NULL);
	`, itemRows, bodyBytes))
	return f
}

// close closes the pool and removes the database.
func (f *fixture) close() {
	if f.pool != nil {
		_ = f.pool.Close()
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}

// nextID returns the next id to read, cycling over the warm ids.
func (f *fixture) nextID() int {
	f.next++
	return 1 + f.next%warmIDs
}

// prime runs the point read twice, untimed: the first run makes the statement known
// (an unseen statement is costly), the second is a cheap read, so that the first sample
// already meets a pool that has recently served one, as every later sample does.
func (f *fixture) prime(b *testing.B) {
	b.Helper()
	if f.primed {
		return
	}
	f.point(b)
	f.point(b)
	f.primed = true
}

// point runs one point read on the benchmark goroutine.
func (f *fixture) point(b *testing.B) {
	b.Helper()
	rows, err := f.pool.Select(context.Background(), pointSQL, f.nextID())
	if err == nil && len(rows) != 1 {
		err = fmt.Errorf("point read returned %d rows", len(rows))
	}
	if err != nil {
		b.Fatal(err)
	}
}

// burst is a group of reads running on their own goroutines.
type burst struct {
	wg       sync.WaitGroup
	finished atomic.Int32
	mu       sync.Mutex
	err      error
	// issued and returned are, per read, when its goroutine called the pool and when
	// the call returned (see overlapped).
	issued, returned []time.Time
}

// start runs read on a new goroutine as part of the burst.
func (u *burst) start(read func() error) {
	u.wg.Add(1)
	u.mu.Lock()
	k := len(u.issued)
	u.issued = append(u.issued, time.Time{})
	u.returned = append(u.returned, time.Time{})
	u.mu.Unlock()
	go func() {
		defer u.wg.Done()
		issued := time.Now()
		err := read()
		returned := time.Now()
		u.finished.Add(1)
		u.mu.Lock()
		u.issued[k], u.returned[k] = issued, returned
		if err != nil {
			u.err = errors.Join(u.err, err)
		}
		u.mu.Unlock()
	}()
}

// overlapped reports, once the burst is done, whether every read was issued before any
// returned. The callers record it themselves: a poller reading the pool's counters was
// often kept off the cores for milliseconds by the busy workers.
func (u *burst) overlapped() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.issued) == 0 {
		return false
	}
	last, first := u.issued[0], u.returned[0]
	for k := range u.issued {
		if u.issued[k].After(last) {
			last = u.issued[k]
		}
		if u.returned[k].Before(first) {
			first = u.returned[k]
		}
	}
	return last.Before(first)
}

// wait waits for every read of the burst and fails the lane if one failed.
func (u *burst) wait(b *testing.B) {
	b.Helper()
	u.wg.Wait()
	if u.err != nil {
		b.Fatal(u.err)
	}
}

// large returns a large read starting after id.
func (f *fixture) large(id int) func() error {
	return func() error {
		rows, err := f.pool.Select(context.Background(), largeSQL, id)
		if err == nil && len(rows) != largeRows {
			err = fmt.Errorf("large read returned %d rows", len(rows))
		}
		return err
	}
}

// pointRead returns a point read of id.
func (f *fixture) pointRead(id int) func() error {
	return func() error {
		rows, err := f.pool.Select(context.Background(), pointSQL, id)
		if err == nil && len(rows) != 1 {
			err = fmt.Errorf("point read returned %d rows", len(rows))
		}
		return err
	}
}

// admitted reports whether n reads issued since the pool had served `served` reads have
// all asked the pool: each has been given a worker or is parked.
func (f *fixture) admitted(served uint64, n int) bool {
	s := f.pool.Stats()
	return int(s.Dispatches-served)+s.Waiting >= n
}

// held reports whether n reads issued since the pool had served `served` reads have all
// asked the pool and none has given its worker back: each holds a worker or is parked.
// It is false as soon as one of them has released its worker, even if its caller has not
// returned yet (a worker is released just before it replies).
func (f *fixture) held(served uint64, n int) (admitted, holding bool) {
	s := f.pool.Stats()
	admitted = int(s.Dispatches-served)+s.Waiting >= n
	return admitted, admitted && f.scale.Workers-s.Free+s.Waiting >= n
}

// await polls until cond holds, failing the lane if it never does. It only bounds a wait
// for the reads' goroutines to reach the pool; inside CostlyLatency's timed region it
// stops polling as soon as the fifth read has asked the pool, the same moment in every
// arm.
func await(b *testing.B, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting until %s", what)
		}
		// Sleep rather than spin: a thread that wakes from a sleep is scheduled ahead
		// of the busy workers' threads, so the read that follows a successful check is
		// issued at once instead of after the OS has preempted a spinning poller.
		time.Sleep(20 * time.Microsecond)
	}
}

// saturate issues n (at least the pool's workers) large reads and waits until every one of them
// holds a worker or is parked, so that what follows arrives into a saturated pool. When a
// large read gives its worker back before all of them have reached the pool, the burst is
// drained and set up again (at most admitAttempts times); retries counts those repeats.
func (f *fixture) saturate(b *testing.B, n int, retries *int) *burst {
	b.Helper()
	for range admitAttempts {
		u := &burst{}
		served := f.pool.Stats().Dispatches
		for range n {
			u.start(f.large(f.nextID()))
		}
		holding := false
		await(b, fmt.Sprintf("%d large reads reach the pool", n), func() bool {
			var admitted bool
			admitted, holding = f.held(served, n)
			return admitted || u.finished.Load() > 0
		})
		if holding {
			return u
		}
		u.wait(b)
		*retries++
	}
	b.Fatalf("in %d attempts a large read always finished before %d had reached the pool; the host is too busy for this lane", admitAttempts, n)
	return nil
}

// BenchmarkPointUnderLoad times the first point read issued while four large reads hold
// the pool, in pointRounds rounds per sample, and reports the mean of the timed reads.
// Each round saturates the pool, times one point read, and drains the pool untimed, so
// every timed read is one that arrives into a saturated pool; averaging rounds narrows
// the spread of a single wait, which depends on how far the large reads had got.
func BenchmarkPointUnderLoad(b *testing.B) {
	f := setup(b)
	f.prime(b)
	var (
		sw      stopwatch
		parked  uint64
		retries int
	)
	for range b.N {
		for range pointRounds {
			id := f.nextID()
			hold := f.saturate(b, f.scale.Workers, &retries)
			before := f.pool.Stats().Parked
			sw.begin()
			err := f.pointRead(id)()
			sw.end()
			parked += f.pool.Stats().Parked - before
			hold.wait(b)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(sw.total.Nanoseconds())/float64(b.N*pointRounds), "ns/op")
	b.ReportMetric(float64(parked)/float64(b.N*pointRounds), "point-parked/op")
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	f.reportScale(b)
}

// BenchmarkMixedQueue times 2 x workers point reads (eight on the original's four
// workers) issued at once behind 2 x workers admitted large reads, until all the point
// reads are done.
func BenchmarkMixedQueue(b *testing.B) {
	f := setup(b)
	f.prime(b)
	var (
		sw      stopwatch
		retries int
	)
	for range b.N {
		ids := make([]int, 2*f.scale.Workers)
		for k := range ids {
			ids[k] = f.nextID()
		}
		hold := f.saturate(b, 2*f.scale.Workers, &retries)
		points := &burst{}
		sw.begin()
		for _, id := range ids {
			points.start(f.pointRead(id))
		}
		points.wg.Wait()
		sw.end()
		points.wait(b)
		hold.wait(b)
	}
	sw.report(b)
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	f.reportScale(b)
}

// bulk4 times as many concurrent large reads as the pool has workers (four on the
// original's pool), from their issue until all are done; when
// mixed is set, each sample follows a point read, on a pool primed with it (so that read
// is cheap from the first sample on). A sample counts only when the burst was
// concurrent: every read was issued before any returned. On a busy 2-core host a read's
// goroutine sometimes runs only after another read is done, and such a burst is not the
// situation the lane is about (candB's reservation cannot engage when two workers are
// free again); it is drained, not counted, and issued again (at most admitAttempts
// times; retries/op says how often). The condition depends only on when the callers
// run, which no dispatch policy changes.
//
// It reports, per counted sample, the reads the pool parked (parked/op) and those it
// parked while a worker was free (reserved/op, Stats.Reserved: the worker was kept back).
// Under candB with the reservation armed that is one of the large reads; under every
// other arm, and in Bulk4Cold, none. It also reports where the burst's CPU time went
// (see cpuMeter): cores/op, the cores the process used while the burst ran, and
// cpu-wK-ms/op, the CPU time of the K-th busiest worker. With a CPU per worker a burst
// that every worker runs at once uses about as many cores as there are workers; under
// candB's reservation one worker's share moves to another, the burst uses one core less,
// and it takes longer by the reads that waited for the kept-back worker.
func bulk4(b *testing.B, mixed bool) {
	f := setup(b)
	if mixed {
		f.prime(b)
	}
	var (
		sw               stopwatch
		cpu              cpuMeter
		parked, reserved uint64
		retries          int
	)
	n := f.scale.Workers
	for range b.N {
		for attempt := 0; ; attempt++ {
			if attempt == admitAttempts {
				b.Fatalf("in %d attempts a large read always finished before all %d had reached the pool; the host is too busy for this lane", admitAttempts, n)
			}
			if mixed {
				f.point(b) // recent cheap traffic
			}
			ids := make([]int, n)
			for k := range ids {
				ids[k] = f.nextID()
			}
			before := f.pool.Stats()
			beforeCPU := processCPU(b)
			u := &burst{}
			var t stopwatch
			t.begin()
			for _, id := range ids {
				u.start(f.large(id))
			}
			u.wg.Wait()
			t.end()
			afterCPU := processCPU(b)
			u.wait(b)
			if !u.overlapped() {
				retries++
				continue
			}
			after := f.pool.Stats()
			sw.total += t.total
			cpu.add(t.total, afterCPU-beforeCPU, before, after)
			parked += after.Parked - before.Parked
			reserved += after.Reserved - before.Reserved
			break
		}
	}
	sw.report(b)
	b.ReportMetric(float64(parked)/float64(b.N), "parked/op")
	b.ReportMetric(float64(reserved)/float64(b.N), "reserved/op")
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	cpu.report(b)
	f.reportScale(b)
}

// cpuMeter adds up where the CPU time of timed bursts went: the process's CPU time
// against the bursts' wall time, and each worker's (readerpool.WithWorkerCPU), ranked
// per burst from the busiest worker down so that samples whose reads landed on
// different slots add up alike.
type cpuMeter struct {
	wall, process time.Duration
	// ranked[k] is the sum over bursts of the k-th busiest worker's CPU time.
	ranked []time.Duration
	bursts int
}

// add records one burst: its wall time, the process's CPU time over it, and the pool's
// stats before and after it.
func (m *cpuMeter) add(wall, process time.Duration, before, after readerpool.Stats) {
	m.wall += wall
	m.process += process
	m.bursts++
	per := make([]time.Duration, len(after.Workers))
	for k := range per {
		per[k] = after.Workers[k].CPU - before.Workers[k].CPU
	}
	slices.SortFunc(per, func(x, y time.Duration) int { return cmp.Compare(y, x) })
	if m.ranked == nil {
		m.ranked = make([]time.Duration, len(per))
	}
	for k, d := range per {
		m.ranked[k] += d
	}
}

// report reports cores/op (process CPU time over wall time of the bursts) and
// cpu-wK-ms/op (the K-th busiest worker's CPU time per burst, in milliseconds).
func (m *cpuMeter) report(b *testing.B) {
	if m.bursts == 0 || m.wall <= 0 {
		return
	}
	b.ReportMetric(float64(m.process)/float64(m.wall), "cores/op")
	for k, d := range m.ranked {
		b.ReportMetric(float64(d)/float64(time.Millisecond)/float64(m.bursts), fmt.Sprintf("cpu-w%d-ms/op", k+1))
	}
}

// processCPU returns the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("reading the process's CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportScale reports the scale the lane ran at: the pool's workers and the CPUs the
// process may run on (see fixture.scale), so a receipt says which shape it measured.
func (f *fixture) reportScale(b *testing.B) {
	b.ReportMetric(float64(f.scale.Workers), "workers")
	b.ReportMetric(float64(f.scale.CPUs), "cpus")
}

// BenchmarkBulk4Mixed times a burst of concurrent large reads, one per worker, on a pool
// with recent cheap reads.
func BenchmarkBulk4Mixed(b *testing.B) { bulk4(b, true) }

// BenchmarkBulk4Cold times the burst of Bulk4Mixed in a process that never runs a cheap
// read.
func BenchmarkBulk4Cold(b *testing.B) { bulk4(b, false) }

// BenchmarkCostlyLatency times a large read that parks in a saturated pool while
// 4 x workers point reads (sixteen on the original's four workers) pile up behind it from
// one caller per worker, four each, from its issue to its completion.
func BenchmarkCostlyLatency(b *testing.B) {
	f := setup(b)
	f.prime(b)
	var (
		sw      stopwatch
		retries int
	)
	for range b.N {
		targetID := f.nextID()
		ids := make([]int, 4*f.scale.Workers)
		for k := range ids {
			ids[k] = f.nextID()
		}
		target := &burst{}
		cheap := &burst{}
		hold := f.saturate(b, f.scale.Workers, &retries)
		served := f.pool.Stats().Dispatches
		done := make(chan struct{})
		sw.begin()
		target.start(func() error {
			defer close(done)
			return f.large(targetID)()
		})
		await(b, "the extra large read reaches the pool", func() bool { return f.admitted(served, 1) })
		for c := range f.scale.Workers {
			cheap.start(func() error {
				for _, id := range ids[4*c : 4*c+4] {
					if err := f.pointRead(id)(); err != nil {
						return err
					}
				}
				return nil
			})
		}
		<-done
		sw.end()
		target.wait(b)
		cheap.wait(b)
		hold.wait(b)
	}
	sw.report(b)
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	f.reportScale(b)
}

// The inert controls time a batch of operations per sample, several milliseconds of
// work: a single idle read of a few tens of microseconds varied by up to 50% from sample
// to sample on the 2-core reference host (thread wake-ups), so one-operation controls
// drifted in both directions in a first quick run and could not tell a real fast-path
// cost from noise; 20-operation batches (Point20Idle, Write20) still moved 5-15% between
// processes (Write20 -11.7% in one collection of
// results/2026-11-30T00-45-16Z-exp275-full, for identical code).

// BenchmarkPoint1000Idle times idleReads sequential point reads on an idle pool.
func BenchmarkPoint1000Idle(b *testing.B) {
	f := setup(b)
	f.prime(b)
	var sw stopwatch
	ids := make([]int, idleReads)
	for range b.N {
		for k := range ids {
			ids[k] = f.nextID()
		}
		sw.begin()
		for _, id := range ids {
			if err := f.pointRead(id)(); err != nil {
				b.Fatal(err)
			}
		}
		sw.end()
	}
	sw.report(b)
}

// BenchmarkBulkSeq4Idle times four large reads one after another on an idle pool.
func BenchmarkBulkSeq4Idle(b *testing.B) {
	f := setup(b)
	var sw stopwatch
	for range b.N {
		ids := make([]int, 4)
		for k := range ids {
			ids[k] = f.nextID()
		}
		sw.begin()
		for _, id := range ids {
			if err := f.large(id)(); err != nil {
				b.Fatal(err)
			}
		}
		sw.end()
	}
	sw.report(b)
}

// BenchmarkWrite200 times idleWrites inserts on the writer connection, which never
// passes the reader dispatch. The writer runs with synchronous = OFF (see newFixture), so
// no insert waits for the disk: an fsync's time depends on the device and on every other
// process writing to it, and a control must measure neither.
func BenchmarkWrite200(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	var sw stopwatch
	for range b.N {
		base := f.nextID()
		sw.begin()
		for k := range idleWrites {
			if err := f.pool.Exec(ctx, "INSERT INTO log (at, note) VALUES (?, ?)", base+k, "admission lane"); err != nil {
				b.Fatal(err)
			}
		}
		sw.end()
	}
	sw.report(b)
}
