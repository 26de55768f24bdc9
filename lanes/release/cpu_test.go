package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flipbench/flipbench/examples/readerpool"
	"github.com/flipbench/flipbench/probe"
)

// The CPU-bound lanes: one caller, one statement at a time, GOMAXPROCS as the process
// has it. Their cost is the work the pool does (SQLite stepping the statement, the pool
// rendering rows as JSON), not waiting for a worker, so they can be counted in
// instructions (metric: instructions) as well as timed. They have a database of their
// own, with only what they read, so a lane process starts in a fraction of the time the
// shared fixture takes, which matters under callgrind, some 50 times slower.

// cpuFeedItems is the size of the CPU lanes' feed table.
const cpuFeedItems = 1_000

// cpuWorkers is the CPU lanes' pool size, fixed: one caller reads one statement at a
// time, so the count does not matter to what they measure, and experiments 19 and the
// gate count their instructions on this pool.
const cpuWorkers = 4

// The CPU lanes' process-wide fixture, built on first use.
var (
	cpuOnce   sync.Once
	cpuShared *fixture
)

// newCPUFixture creates the CPU lanes' database (a feed of cpuFeedItems items) and opens
// a pool of cpuWorkers workers on it. It runs no read.
func newCPUFixture() *fixture {
	f := &fixture{}
	f.dir, f.err = os.MkdirTemp("", "release-cpu-lanes-")
	if f.err != nil {
		return f
	}
	f.pool, f.err = readerpool.Open(filepath.Join(f.dir, "feed.db"), readerpool.WithWorkers(cpuWorkers))
	if f.err != nil {
		return f
	}
	f.err = f.pool.Exec(context.Background(), fmt.Sprintf(`
		CREATE TABLE feed (id INTEGER PRIMARY KEY, author INTEGER NOT NULL, title TEXT NOT NULL,
			summary TEXT NOT NULL, score REAL NOT NULL);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO feed SELECT i, 1 + i %% 97, 'post "' || i || '"', printf('%%.160c', 's') || char(10) || 'é', (i * 7919) %% 1000 FROM n;
	`, cpuFeedItems))
	return f
}

// cpuLane runs work as one operation of the lane per b.N on the CPU lanes' fixture and
// reports the probe counters' change over all of it. Unlike lane it leaves GOMAXPROCS
// alone: a lane that counts instructions runs with GOMAXPROCS=1 (see package lanekind).
func cpuLane(b *testing.B, work func(ctx context.Context, f *fixture) error) {
	b.Helper()
	b.StopTimer()
	cpuOnce.Do(func() { cpuShared = newCPUFixture() })
	if cpuShared.err != nil {
		b.Fatal(cpuShared.err)
	}
	ctx := context.Background()
	before := probe.Take()
	b.StartTimer()
	for range b.N {
		if err := work(ctx, cpuShared); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	d := probe.Take().Sub(before)
	for _, c := range probe.Counters() {
		b.ReportMetric(float64(d.Get(c)), c.Name())
	}
}

// scanSQL is what WriterScan runs: every feed item, filtered on a column without an
// index, so SQLite reads and compares every row.
const scanSQL = "SELECT id, title, summary FROM feed WHERE score >= ? AND title LIKE ?"

// BenchmarkWriterScan runs a scan of the whole feed on the writer connection (Exec, which
// steps the statement through every row it returns and discards them), five times: the
// work of a report a writer computes, all on the caller's goroutine.
func BenchmarkWriterScan(b *testing.B) {
	cpuLane(b, func(ctx context.Context, f *fixture) error {
		for range 5 {
			if err := f.pool.Exec(ctx, scanSQL, 0, "post%"); err != nil {
				return err
			}
		}
		return nil
	})
}

// feedJSONPage is the page FeedJSON reads: 100 feed items.
const feedJSONPage = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 100"

// BenchmarkFeedJSON renders the whole feed as JSON, 100 items a page (SelectBytes, run
// by a worker), one page after the other: an API endpoint's work.
func BenchmarkFeedJSON(b *testing.B) {
	cpuLane(b, func(ctx context.Context, f *fixture) error {
		for after := 0; after < cpuFeedItems; after += 100 {
			out, err := f.pool.SelectBytes(ctx, feedJSONPage, after)
			if err != nil {
				return err
			}
			if len(out) < 100*160 {
				return fmt.Errorf("feed page after %d: %d bytes of JSON, want at least %d", after, len(out), 100*160)
			}
		}
		return nil
	})
}
