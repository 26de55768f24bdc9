package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/flipbench/flipbench/examples/readerpool"
	"github.com/flipbench/flipbench/probe"
)

const (
	// workers is the pool size of experiment 275, set explicitly.
	workers = 4
	// laneProcs is GOMAXPROCS while a lane runs (see the package documentation).
	laneProcs = 8

	conversations = 20
	messagesEach  = 500 // messages per conversation at the start
	feedItems     = 2_000
	users         = 1_000
)

// fixture is the database and pool of this lane process.
type fixture struct {
	dir  string
	pool *readerpool.Pool
	err  error
}

// The process-wide fixture: testing calls the benchmark function again for every
// repetition and nothing else survives between them.
var (
	sharedOnce sync.Once
	shared     *fixture
)

// TestMain removes the fixture's database once the lane has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	os.Exit(code)
}

// lane runs work as one operation of the lane per b.N and reports the probe counters'
// change over all of it.
func lane(b *testing.B, work func(ctx context.Context, f *fixture) error) {
	b.Helper()
	b.StopTimer()
	sharedOnce.Do(func() { shared = newFixture() })
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	ctx := context.Background()
	before := probe.Take()
	b.StartTimer()
	for range b.N {
		if err := work(ctx, shared); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	d := probe.Take().Sub(before)
	for _, c := range probe.ReaderPoolCounters() {
		b.ReportMetric(float64(d.Get(c)), c.Name())
	}
}

// newFixture creates the database with its tables and opens the pool. It runs no read.
func newFixture() *fixture {
	f := &fixture{}
	f.dir, f.err = os.MkdirTemp("", "release-lanes-")
	if f.err != nil {
		return f
	}
	f.pool, f.err = readerpool.Open(filepath.Join(f.dir, "app.db"), readerpool.WithWorkers(workers))
	if f.err != nil {
		return f
	}
	f.err = f.pool.Exec(context.Background(), fmt.Sprintf(`
		PRAGMA synchronous = NORMAL;
		CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, read_upto INTEGER NOT NULL);
		CREATE TABLE messages (id INTEGER PRIMARY KEY, conv INTEGER NOT NULL, author INTEGER NOT NULL,
			sent INTEGER NOT NULL, body TEXT NOT NULL);
		CREATE INDEX messages_conv ON messages (conv, id);
		CREATE TABLE feed (id INTEGER PRIMARY KEY, author INTEGER NOT NULL, title TEXT NOT NULL,
			summary TEXT NOT NULL, score REAL NOT NULL);
		CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL,
			bio TEXT NOT NULL, seen INTEGER NOT NULL);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[1]d)
		INSERT INTO conversations SELECT i, 'conversation ' || i, 0 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[1]d * %[2]d)
		INSERT INTO messages SELECT i, 1 + i %% %[1]d, 1 + i %% %[4]d, 1700000000 + i,
			'message ' || i || ': ' || printf('%%.80c', 'm') FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[3]d)
		INSERT INTO feed SELECT i, 1 + i %% %[4]d, 'post ' || i, printf('%%.160c', 's'), (i * 7919) %% 1000 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[4]d)
		INSERT INTO users SELECT i, 'user ' || i, 'user' || i || '@example.org', printf('%%.120c', 'b'), 0 FROM n;
	`, conversations, messagesEach, feedItems, users))
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

// read runs one query and checks its row count when want >= 0.
func (f *fixture) read(ctx context.Context, want int, sql string, args ...any) error {
	rows, err := f.pool.Select(ctx, sql, args...)
	if err == nil && want >= 0 && len(rows) != want {
		err = fmt.Errorf("%s: %d rows, want %d", sql, len(rows), want)
	}
	return err
}

// together runs reads at once, each on its own goroutine, and waits for all of them.
func together(reads ...func() error) error {
	errs := make([]error, len(reads))
	var wg sync.WaitGroup
	for i, r := range reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// The statements of the app.
const (
	latestMessages   = "SELECT id, author, sent, body FROM messages WHERE conv = ? ORDER BY id DESC LIMIT 50"
	conversationList = `SELECT c.id, c.title, (SELECT count(*) FROM messages m WHERE m.conv = c.id AND m.id > c.read_upto)
		FROM conversations c ORDER BY c.id`
	unreadCount  = "SELECT count(*) FROM messages WHERE conv = ? AND id > (SELECT read_upto FROM conversations WHERE id = ?)"
	feedPage     = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 20"
	feedCount    = "SELECT count(*) FROM feed"
	feedPage100  = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 100"
	feedPage200  = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 200"
	userByID     = "SELECT id, name, email, bio, seen FROM users WHERE id = ?"
	recent30     = "SELECT id, author, sent, body FROM messages WHERE conv = ? ORDER BY id DESC LIMIT 30"
	badgeCount   = "SELECT count(*) FROM messages WHERE body LIKE ?"
	authorLookup = "SELECT name FROM users WHERE id = ?"
)

// BenchmarkChatSim posts 400 messages; after each, the open conversation and the
// conversation list are read again, at once.
func BenchmarkChatSim(b *testing.B) {
	lane(b, func(ctx context.Context, f *fixture) error {
		for i := range 400 {
			conv := 1 + i%conversations
			if err := f.pool.Exec(ctx, "INSERT INTO messages (conv, author, sent, body) VALUES (?, ?, ?, ?)",
				conv, 1+i%users, 1800000000+i, fmt.Sprintf("reply %d", i)); err != nil {
				return err
			}
			if err := together(
				func() error { return f.read(ctx, 50, latestMessages, conv) },
				func() error { return f.read(ctx, conversations, conversationList) },
			); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkFeedPaging scrolls the feed to its end, 20 items a page, re-reading the count
// every page.
func BenchmarkFeedPaging(b *testing.B) {
	lane(b, func(ctx context.Context, f *fixture) error {
		for after := 0; after < feedItems; after += 20 {
			if err := f.read(ctx, 20, feedPage, after); err != nil {
				return err
			}
			if err := f.read(ctx, 1, feedCount); err != nil {
				return err
			}
		}
		return nil
	})
}

// concurrent runs callers goroutines that each read a 100-row feed page 40 times.
func concurrent(b *testing.B, callers int) {
	lane(b, func(ctx context.Context, f *fixture) error {
		reads := make([]func() error, callers)
		for c := range reads {
			reads[c] = func() error {
				for k := range 40 {
					if err := f.read(ctx, 100, feedPage100, (c*40+k)*10%(feedItems-100)); err != nil {
						return err
					}
				}
				return nil
			}
		}
		return together(reads...)
	})
}

// BenchmarkConcurrent4 runs four callers of 100-row feed pages at once.
func BenchmarkConcurrent4(b *testing.B) { concurrent(b, 4) }

// BenchmarkConcurrent8 runs eight callers of 100-row feed pages at once.
func BenchmarkConcurrent8(b *testing.B) { concurrent(b, 8) }

// BenchmarkKeyedPK looks up 2,000 users by primary key; every tenth lookup is followed by
// an update of that user and a re-read of the profile.
func BenchmarkKeyedPK(b *testing.B) {
	lane(b, func(ctx context.Context, f *fixture) error {
		for i := range 2000 {
			id := 1 + (i*7919)%users
			if err := f.read(ctx, 1, userByID, id); err != nil {
				return err
			}
			if i%10 != 9 {
				continue
			}
			if err := f.pool.Exec(ctx, "UPDATE users SET seen = seen + 1 WHERE id = ?", id); err != nil {
				return err
			}
			if err := f.read(ctx, 1, userByID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkRerunFanout makes 200 writes; after each, a screen's three live queries are
// re-run at once.
func BenchmarkRerunFanout(b *testing.B) {
	lane(b, func(ctx context.Context, f *fixture) error {
		for i := range 200 {
			conv := 1 + i%conversations
			if err := f.pool.Exec(ctx, "INSERT INTO messages (conv, author, sent, body) VALUES (?, ?, ?, ?)",
				conv, 1+i%users, 1900000000+i, fmt.Sprintf("fan-out %d", i)); err != nil {
				return err
			}
			if err := together(
				func() error { return f.read(ctx, 30, recent30, conv) },
				func() error { return f.read(ctx, 1, unreadCount, conv, conv) },
				func() error { return f.read(ctx, 200, feedPage200, (i*37)%(feedItems-200)) },
			); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkPositiveControl runs positiveControl.
func BenchmarkPositiveControl(b *testing.B) { lane(b, positiveControl) }

// positiveControl fires, ten times, four slow cheap badge counts, then a 200-row list
// query, then four small lookups, each group once the one before has reached the pool, so
// the lookups arrive while the list query is parked.
func positiveControl(ctx context.Context, f *fixture) error {
	for frame := range 10 {
		var (
			mu   sync.Mutex
			errs []error
			wg   sync.WaitGroup
		)
		fire := func(read func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := read(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		served := f.pool.Stats().Dispatches
		for k := range 4 {
			pattern := fmt.Sprintf("%%message %d%%", frame*4+k)
			fire(func() error { return f.read(ctx, 1, badgeCount, pattern) })
		}
		f.awaitAsked(served, 4) // the badge counts hold the four workers
		fire(func() error { return f.read(ctx, 200, feedPage200, frame*50) })
		f.awaitAsked(served, 5) // the list query is parked behind them
		for k := range 4 {
			fire(func() error { return f.read(ctx, 1, authorLookup, 1+frame*4+k) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// TestPositiveControlFires runs the control once: in a probe build it must count cheap
// reads parked behind costly ones, in a default build nothing. make test runs it both
// ways.
func TestPositiveControlFires(t *testing.T) {
	f := newFixture()
	t.Cleanup(f.close)
	if f.err != nil {
		t.Fatal(f.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	before := probe.Take()
	if err := positiveControl(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	d := probe.Take().Sub(before)
	got, dispatches := d.Get(probe.CheapParkedBehindCostly), d.Get(probe.Dispatches)
	switch {
	case probe.Enabled && (got == 0 || dispatches != 90):
		t.Errorf("probe build: %d dispatches and %d cheap reads parked behind costly ones; want 90 and more than 0", dispatches, got)
	case !probe.Enabled && (got != 0 || dispatches != 0):
		t.Errorf("default build: counters read %d and %d, want 0", got, dispatches)
	}
}

// awaitAsked waits until n reads issued since the pool had served `served` reads have
// each been given a worker or parked, for at most a second: the control only needs the
// order to hold most of the time, never a particular timing.
func (f *fixture) awaitAsked(served uint64, n int) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		s := f.pool.Stats()
		if int(s.Dispatches-served)+s.Waiting >= n {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}
