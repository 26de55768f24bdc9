package stickiness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flipbench/flipbench/examples/readerpool"
)

// Sizes of the lane database and pool, chosen so that a sample of every lane takes
// between about 20 µs and 10 ms on a 2-core machine, and a lane process with 50 samples
// stays well under 2 s.
const (
	itemRows = 20_000 // rows of the six-column items table
	// countedRows is the size of the items and the wide table of the counted lanes,
	// which read only the warm ids (below 40): building the full tables took most of a
	// counted process's 21-32 s under Valgrind (by hand, on the loaded 2-core host), and
	// the smaller ones have the same depth of B-tree (a root page over leaf pages).
	countedRows = 200
	// warmIDs is how many ids the reads cycle over: a few pages' worth, so that after
	// the warmup samples every worker holds them in its page cache whatever the dispatch
	// policy, and the lanes compare statement warm state, not page cache warm state.
	warmIDs  = 16
	wideRows = 2_000 // rows of the twenty-column wide table

	// sacrificeBytes is the pool's sacrifice threshold, lowered from the 4 MiB default
	// so that the Sacrifice lane's large read stays a few milliseconds long.
	sacrificeBytes = 1 << 20
	// bigRows is the size of the Sacrifice lane's large read: about 1.2 MB of Go values,
	// above sacrificeBytes.
	bigRows = 8_000
	// rangeRows is the size of each read in Conc4 and Park8: about 0.8 MB of row values,
	// below sacrificeBytes, and over a millisecond of work on the 2-core reference host,
	// so that the reads of a burst overlap. With the collector off in the timed parts
	// (see quietHeap), 2,000-row reads took about half a millisecond and a burst of Park8
	// often had a read done before all eight had reached the pool.
	rangeRows = 5_000
	// newPerSample is how many never-seen statements a sample of the new-statement lanes
	// runs, one after another.
	newPerSample = 8
	// statementCache is each worker's statement cache: larger than every statement a
	// lane process prepares (8 per sample, at most a few hundred samples), so that no
	// lane pays for evictions, which the original experiment's lanes did not either.
	statementCache = 8192
	// alternatingReads is how many reads a sample of AlternatingSQL makes.
	alternatingReads = 200
	// concProcs is GOMAXPROCS during Conc4 and Park8, so that every caller and every
	// worker can be a running thread, as reader isolates are in the original experiment.
	concProcs = 8
	// concAttempts bounds how often a burst of Conc4 or Park8 is issued again when a read
	// finished before all of them had reached the pool (see benchConcurrent).
	concAttempts = 20
)

// pointColumns are the columns of a point read of items.
const pointColumns = "id, name, category, price, qty, updated"

// pointSQL is the steady-state point read; newPointSQL makes never-seen variants of it.
const pointSQL = "SELECT " + pointColumns + " FROM items WHERE id = ?"

// fixture is the database and pool shared by every sample of the lane in this process.
type fixture struct {
	dir  string
	pool *readerpool.Pool
	err  error
	// scale is the pool's size for the CPUs this process may run on
	// (readerpool.ProcessScale): a worker per CPU, 2 to 4 (the original's pool had four).
	// Conc4 and Park8 issue as many reads as it has workers, and twice as many.
	scale readerpool.Scale
	// next makes statement texts and ids differ between samples. Only the benchmark
	// goroutine touches it.
	next int
}

// The process-wide fixture: testing needs it, because the testing package calls the
// benchmark function once per sample and nothing else survives between samples.
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

// setup returns the shared fixture, building it on first use, collects the garbage of
// earlier samples with the collector off for the rest of the process (see quietHeap),
// and resets the timer.
func setup(b *testing.B) *fixture {
	b.Helper()
	f := fixtureOnly(b, itemRows)
	quietHeap()
	b.ResetTimer()
	return f
}

// fixtureOnly returns the shared fixture, building it with rows rows of items (and at
// most that many of the wide table) on first use (the first lane of the process
// decides; flipbench runs one lane per process), and does nothing else: the counted
// lanes (countedFirstReads, AlternatingSQLInstr) use it with countedRows, since under
// Valgrind the collector is off already (GOGC=off) and a collection inside the measured
// call would count the heap, not the reads.
func fixtureOnly(b *testing.B, rows int) *fixture {
	b.Helper()
	sharedOnce.Do(func() { shared = newFixture(rows, min(rows, wideRows)) })
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	return shared
}

// quietHeap turns the collector off for the rest of the process (up to a 1 GiB heap,
// where it runs anyway) and collects the garbage of earlier samples, untimed, so that no
// sample pays for another's garbage or for the collector's pacing, which varies from
// process to process; no dispatch policy changes what the lanes allocate. The collector
// stays off between samples: switched back on after each sample, as it first was, the
// collections run with it on let the runtime return the freed heap to the operating
// system, and the next sample's reads faulted it in again (1,000 to 2,000 page faults
// per burst of large reads in the admission lanes, a large share of a core in system
// time), a cost of the kernel and the host's load rather than of the dispatch policy.
// flipbench runs one or two operations per call of a lane (harness.benchtime); with more,
// garbage accumulates until the call ends or the limit is reached.
func quietHeap() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	runtime.GC()
}

// newFixture creates the database and opens the pool.
func newFixture(rows, wide int) *fixture {
	f := &fixture{scale: readerpool.ProcessScale()}
	f.dir, f.err = os.MkdirTemp("", "stickiness-lanes-")
	if f.err != nil {
		return f
	}
	f.pool, f.err = readerpool.Open(filepath.Join(f.dir, "lanes.db"),
		readerpool.WithWorkers(f.scale.Workers), readerpool.WithSacrificeBytes(sacrificeBytes),
		readerpool.WithStatementCache(statementCache))
	if f.err != nil {
		return f
	}
	var wideCols, wideVals []string
	for c := 1; c <= 19; c++ {
		wideCols = append(wideCols, fmt.Sprintf("c%d", c))
		if c%2 == 0 {
			wideVals = append(wideVals, fmt.Sprintf("i * %d", c))
		} else {
			wideVals = append(wideVals, fmt.Sprintf("'col%d-' || i", c))
		}
	}
	schema := fmt.Sprintf(`
		CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category INTEGER NOT NULL,
			price REAL NOT NULL, qty INTEGER NOT NULL, updated TEXT NOT NULL);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO items SELECT i, 'item-' || i, i %% 50, i * 0.25, i %% 97,
			'2026-08-' || (10 + i %% 20) || 'T12:00:00Z' FROM n;
		CREATE INDEX items_category ON items (category, id);
		CREATE TABLE wide (id INTEGER PRIMARY KEY, %s);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO wide SELECT i, %s FROM n;
	`, rows, strings.Join(wideCols, ", "), wide, strings.Join(wideVals, ", "))
	f.err = f.pool.Exec(context.Background(), schema)
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

// newPointSQL returns a point read of items whose text this process has never run, so
// every worker that runs it has to prepare it.
func (f *fixture) newPointSQL() string {
	f.next++
	return fmt.Sprintf("SELECT /* sample %d */ %s FROM items WHERE id = ?", f.next, pointColumns)
}

// nextID returns the next of the warm ids.
func (f *fixture) nextID() int {
	f.next++
	return 1 + f.next%warmIDs
}

// prepares returns how many statements the workers have prepared so far.
func (f *fixture) prepares() uint64 {
	var n uint64
	for _, w := range f.pool.Stats().Workers {
		n += w.Prepares
	}
	return n
}

// sacrifices returns how many times workers have dropped their connection so far.
func (f *fixture) sacrifices() uint64 {
	var n uint64
	for _, w := range f.pool.Stats().Workers {
		n += w.Sacrifices
	}
	return n
}

// benchFirstReads times, for each of newPerSample never-seen statements in turn, its
// first n sequential reads, through Select or SelectBytes, and reports how many workers
// prepared each statement (prepares/op, per statement). ns/op is per statement, the mean
// over the sample's statements: a sample of one statement took a fraction of a
// millisecond, too short to average over the host's noise.
func benchFirstReads(b *testing.B, n int, bytes bool) {
	f := setup(b)
	var prepared uint64
	for range b.N {
		b.StopTimer()
		sqls, ids := f.newStatements(n)
		before := f.prepares()
		b.StartTimer()
		f.firstReads(b, sqls, ids, n, bytes)
		b.StopTimer()
		prepared += f.prepares() - before
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*newPerSample), "ns/op")
	b.ReportMetric(float64(prepared)/float64(b.N*newPerSample), "prepares/op")
	f.reportScale(b)
}

// countedFirstReads is benchFirstReads for a lane that counts instructions
// (metric: instructions): the same reads, with nothing else in the operation. It touches
// no timer (starting and stopping it reads the memory statistics, which stops the world,
// once per operation) and runs no collection (Valgrind's environment has the collector
// off). Making the statement texts is part of the operation, the same in every arm.
func countedFirstReads(b *testing.B, n int, bytes bool) {
	f := fixtureOnly(b, countedRows)
	var prepared uint64
	for range b.N {
		before := f.prepares()
		sqls, ids := f.newStatements(n)
		f.firstReads(b, sqls, ids, n, bytes)
		prepared += f.prepares() - before
	}
	b.ReportMetric(float64(prepared)/float64(b.N*newPerSample), "prepares/op")
	f.reportScale(b)
}

// newStatements returns newPerSample never-seen statements and the n ids each is read
// with.
func (f *fixture) newStatements(n int) ([]string, []int) {
	sqls := make([]string, newPerSample)
	ids := make([]int, n*newPerSample)
	for s := range sqls {
		sqls[s] = f.newPointSQL()
	}
	for k := range ids {
		ids[k] = f.nextID()
	}
	return sqls, ids
}

// firstReads runs each statement's n reads in turn, through Select or SelectBytes.
func (f *fixture) firstReads(b *testing.B, sqls []string, ids []int, n int, bytes bool) {
	b.Helper()
	ctx := context.Background()
	for s, sql := range sqls {
		for _, id := range ids[s*n : (s+1)*n] {
			var err error
			if bytes {
				_, err = f.pool.SelectBytes(ctx, sql, id)
			} else {
				_, err = f.pool.Select(ctx, sql, id)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// reportScale reports the scale the lane ran at: the pool's workers and the CPUs the
// process may run on (see fixture.scale).
func (f *fixture) reportScale(b *testing.B) {
	b.ReportMetric(float64(f.scale.Workers), "workers")
	b.ReportMetric(float64(f.scale.CPUs), "cpus")
}

// BenchmarkFirst4NewSQL times the first 4 executions of a never-seen statement.
func BenchmarkFirst4NewSQL(b *testing.B) { benchFirstReads(b, 4, false) }

// BenchmarkFirst8NewSQL times the first 8 executions of a never-seen statement.
func BenchmarkFirst8NewSQL(b *testing.B) { benchFirstReads(b, 8, false) }

// BenchmarkFirst32NewSQL times the first 32 executions of a never-seen statement.
func BenchmarkFirst32NewSQL(b *testing.B) { benchFirstReads(b, 32, false) }

// BenchmarkBytesFirst8NewSQL is First8NewSQL through SelectBytes, which rotates in both
// arms.
func BenchmarkBytesFirst8NewSQL(b *testing.B) { benchFirstReads(b, 8, true) }

// BenchmarkBytesFirst8NewSQLInstr is BytesFirst8NewSQL for counting instructions
// (see countedFirstReads): its cost is work (preparing, stepping, rendering JSON), not
// waiting, so a count measures it without the host's noise.
func BenchmarkBytesFirst8NewSQLInstr(b *testing.B) { countedFirstReads(b, 8, true) }

// BenchmarkPoint1 times one point read of a statement that is warm on every worker.
func BenchmarkPoint1(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		id := f.nextID()
		b.StartTimer()
		if _, err := f.pool.Select(ctx, pointSQL, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPoint1Wide20 times one point read of a twenty-column row.
func BenchmarkPoint1Wide20(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		id := f.nextID()
		b.StartTimer()
		if _, err := f.pool.Select(ctx, "SELECT * FROM wide WHERE id = ?", id); err != nil {
			b.Fatal(err)
		}
	}
}

// mixedSQL are the six statements of Mixed6_20: small reads of different shapes.
var mixedSQL = [6]string{
	pointSQL,
	"SELECT name, price FROM items WHERE id = ?",
	"SELECT id, name FROM items WHERE category = ? % 50 ORDER BY id LIMIT 5",
	"SELECT count(*) FROM items WHERE category = ? % 50",
	"SELECT id, c1, c2, c3 FROM wide WHERE id = ? % 2000 + 1",
	"SELECT max(price) FROM items WHERE id BETWEEN ? AND ? + 10",
}

// BenchmarkMixed6_20 times 120 sequential reads: six warm statements interleaved, each
// run 20 times.
func BenchmarkMixed6_20(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		base := f.nextID()
		b.StartTimer()
		for r := range 20 {
			for s, sql := range mixedSQL {
				args := []any{base + r}
				if s == 5 {
					args = append(args, base+r)
				}
				if _, err := f.pool.Select(ctx, sql, args...); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// alternatingOther is the second statement of AlternatingSQL.
const alternatingOther = "SELECT id, c1, c2, c3, c4, c5 FROM wide WHERE id = ?"

// BenchmarkAlternatingSQL times alternatingReads sequential reads alternating between
// two warm statements.
func BenchmarkAlternatingSQL(b *testing.B) {
	f := setup(b)
	for range b.N {
		b.StopTimer()
		base := f.nextID()
		b.StartTimer()
		f.alternating(b, base)
	}
	f.reportScale(b)
}

// BenchmarkAlternatingSQLInstr is AlternatingSQL for counting instructions: the same
// reads and nothing else in the operation (see countedFirstReads).
func BenchmarkAlternatingSQLInstr(b *testing.B) {
	f := fixtureOnly(b, countedRows)
	for range b.N {
		f.alternating(b, f.nextID())
	}
	f.reportScale(b)
}

// alternating runs alternatingReads sequential reads alternating between pointSQL and
// alternatingOther, from id base on.
func (f *fixture) alternating(b *testing.B, base int) {
	b.Helper()
	ctx := context.Background()
	for r := range alternatingReads {
		sql := pointSQL
		if r%2 == 1 {
			sql = alternatingOther
		}
		if _, err := f.pool.Select(ctx, sql, base+r%warmIDs); err != nil {
			b.Fatal(err)
		}
	}
}

// benchConcurrent times n range reads issued at once from n goroutines, from the first
// goroutine's start to the end of the last read, and reports how many of them parked
// (parked/op) and how many bursts were issued again (retries/op).
//
// A sample counts only when the burst was concurrent: every caller had issued its read
// before any read returned. On a busy 2-core host a caller's thread sometimes gets a core
// only after another read is done, and such a burst is not the situation the lane is
// about; it is drained, not counted, and issued again, at most concAttempts times. The
// condition depends only on when the callers run, which the dispatch policy does not
// change, and the callers record it themselves (a poller reading the pool's counters was
// itself often kept off the cores for milliseconds by the busy workers). Without it Park8
// parked in only about 15% of samples (results/2026-11-30T00-43-35Z-exp266-full); with
// it, eight reads on four workers park four in (nearly) every sample, which parked/op
// shows.
//
// The goroutines are started inside the timed region (a few microseconds against
// milliseconds of reads). The lane times with a stopwatch, as the admission lanes do:
// b.StartTimer stops the world to read memory statistics, which on two busy cores delays
// the callers by up to milliseconds.
func benchConcurrent(b *testing.B, n int) {
	f := setup(b)
	b.StopTimer()
	ctx := context.Background()
	sql := fmt.Sprintf("SELECT %s FROM items WHERE id > ? ORDER BY id LIMIT %d", pointColumns, rangeRows)
	var (
		total, cpu time.Duration
		parked     uint64
		retries    int
	)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(concProcs))
	for range b.N {
		for attempt := 0; ; attempt++ {
			if attempt == concAttempts {
				b.Fatalf("in %d attempts a read always returned before all %d had been issued; the host is too busy for this lane", concAttempts, n)
			}
			ids := make([]int, n)
			for k := range ids {
				ids[k] = f.nextID()
			}
			errs := make([]error, n)
			issued := make([]time.Time, n)
			returned := make([]time.Time, n)
			var wg sync.WaitGroup
			before := f.pool.Stats()
			cpuBefore := processCPU(b)
			start := time.Now()
			for k, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					issued[k] = time.Now()
					_, errs[k] = f.pool.Select(ctx, sql, id)
					returned[k] = time.Now()
				}()
			}
			wg.Wait()
			took := time.Since(start)
			cpuTook := processCPU(b) - cpuBefore
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			if !overlapped(issued, returned) {
				retries++
				continue
			}
			total += took
			cpu += cpuTook
			parked += f.pool.Stats().Parked - before.Parked
			break
		}
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(parked)/float64(b.N), "parked/op")
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	if total > 0 {
		b.ReportMetric(float64(cpu)/float64(total), "cores/op")
	}
	f.reportScale(b)
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

// overlapped reports whether every call was issued before any returned.
func overlapped(issued, returned []time.Time) bool {
	last, first := issued[0], returned[0]
	for k := range issued {
		if issued[k].After(last) {
			last = issued[k]
		}
		if returned[k].Before(first) {
			first = returned[k]
		}
	}
	return last.Before(first)
}

// BenchmarkConc4 times as many concurrent range reads as the pool has workers (four on
// the original's four-worker pool).
func BenchmarkConc4(b *testing.B) {
	benchConcurrent(b, fixtureOnly(b, itemRows).scale.Workers)
}

// BenchmarkPark8 times twice as many concurrent range reads as the pool has workers
// (eight on the original's pool), so that half of them park and are woken.
func BenchmarkPark8(b *testing.B) {
	benchConcurrent(b, 2*fixtureOnly(b, itemRows).scale.Workers)
}

// BenchmarkSacrifice times a read large enough to exceed the sacrifice threshold (its
// worker drops and reopens its connection) followed by a point read.
func BenchmarkSacrifice(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	const big = "SELECT " + pointColumns + " FROM items WHERE id <= ?"
	var sacrificed uint64
	for range b.N {
		b.StopTimer()
		id := f.nextID()
		before := f.sacrifices()
		b.StartTimer()
		if _, err := f.pool.Select(ctx, big, bigRows); err != nil {
			b.Fatal(err)
		}
		if _, err := f.pool.Select(ctx, pointSQL, id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		sacrificed += f.sacrifices() - before
	}
	b.ReportMetric(float64(sacrificed)/float64(b.N), "sacrifices/op")
}
