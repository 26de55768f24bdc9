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
	// laneProcs is GOMAXPROCS while a lane runs (see the package documentation).
	laneProcs = 8

	conversations = 20
	messagesEach  = 1_000 // messages per conversation at the start
	feedItems     = 2_000
	users         = 1_000
	// subscribed is how many users KeyedPK keeps a live query on, keyed by primary key.
	subscribed = 200
	// fanout is how many live queries StreamFanout re-runs at once after each write.
	fanout = 8
	// attachments and attachmentBytes make the attachments table: 400 blobs of 16 KiB,
	// 6.4 MB in all, so that Memory's export read is above the pool's 4 MiB sacrifice
	// threshold.
	attachments     = 400
	attachmentBytes = 16 << 10

	// jsonBufferBudget is the diagnostics guard: after a settle phase, no worker may hold
	// a JSON buffer larger than this (the budget of the original exp 266's release guard).
	jsonBufferBudget = 512 << 10
	// settleReads is how many small byte reads follow each burst in Diagnostics.
	settleReads = 64
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

// TestMain removes the fixtures' databases once the lane has run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range []*fixture{shared, cpuShared} {
		if f != nil {
			f.close()
		}
	}
	os.Exit(code)
}

// scenario is one workload of the suite.
type scenario struct {
	// name is the lane's name (BenchmarkName).
	name string
	// size is the lane's size; the unit is the scenario's own (posts, sessions, ...).
	size int
	// run performs the workload at size n. It may return metrics of its own (by unit),
	// which the lane reports beside the counters.
	run func(ctx context.Context, f *fixture, n int) (map[string]float64, error)
	// reads returns how many reads the workload issues at size n, each one dispatch.
	reads func(n int) int
}

// scenarios returns the suite's workloads at their lane sizes. Together they issue
// 119,485 reads (the positive control left out).
func scenarios() []scenario {
	return []scenario{
		{"ChatSim", 6_000, counted(chatSim), func(n int) int { return 3*n + n/21 }},
		{"FeedPaging", 60, counted(feedPaging), func(n int) int { return n * 3 * feedItems / 20 }},
		{"Concurrent4", 150, counted(func(ctx context.Context, f *fixture, n int) error { return concurrent(ctx, f, 4, n) }),
			func(n int) int { return 4 * n }},
		{"Concurrent8", 150, counted(func(ctx context.Context, f *fixture, n int) error { return concurrent(ctx, f, 8, n) }),
			func(n int) int { return 8 * n }},
		{"StreamFanout", 1_500, counted(streamFanout), func(n int) int { return fanout * n }},
		{"KeyedPK", 60_000, counted(keyedPK), func(n int) int { return subscribed + n + n/10 }},
		{"Diagnostics", 30, func(ctx context.Context, f *fixture, n int) (map[string]float64, error) {
			high, err := diagnostics(ctx, f, n)
			return map[string]float64{"json-buffer-high-water-bytes": float64(high)}, err
		}, func(n int) int { return n * (2*suiteWorkers() + settleReads) }},
		{"Memory", 40, func(ctx context.Context, f *fixture, n int) (map[string]float64, error) {
			before := sacrifices(f.pool)
			err := memory(ctx, f, n)
			return map[string]float64{"sacrifices": float64(sacrifices(f.pool) - before)}, err
		}, func(n int) int { return 26 * n }},
	}
}

// counted adapts a workload that reports nothing but the counters.
func counted(run func(ctx context.Context, f *fixture, n int) error) func(context.Context, *fixture, int) (map[string]float64, error) {
	return func(ctx context.Context, f *fixture, n int) (map[string]float64, error) { return nil, run(ctx, f, n) }
}

// scenarioNamed returns the scenario called name.
func scenarioNamed(name string) scenario {
	for _, s := range scenarios() {
		if s.name == name {
			return s
		}
	}
	panic("release: no scenario " + name)
}

// lane runs the scenario as one operation of the lane per b.N and reports the probe
// counters' change over all of it, and any metric the scenario adds.
func lane(b *testing.B, name string) {
	b.Helper()
	s := scenarioNamed(name)
	b.StopTimer()
	sharedOnce.Do(func() { shared = newFixture() })
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	ctx := context.Background()
	before := probe.Take()
	extra := map[string]float64{}
	b.StartTimer()
	for range b.N {
		m, err := s.run(ctx, shared, s.size)
		if err != nil {
			b.Fatal(err)
		}
		for unit, v := range m {
			extra[unit] = v // the suite runs one repetition; with more, the last one's
		}
	}
	b.StopTimer()
	d := probe.Take().Sub(before)
	for _, c := range probe.ReaderPoolCounters() {
		b.ReportMetric(float64(d.Get(c)), c.Name())
	}
	for unit, v := range extra {
		b.ReportMetric(v, unit)
	}
}

// suiteWorkers is the suite's pool size: a worker per CPU the process may run on, 2 to 4
// (readerpool.ProcessScale), the scale experiment 275's lanes run at, so the incidence is
// counted on the pool the lanes measure. The workloads themselves (how many callers read
// at once) are the application's and do not change with it.
func suiteWorkers() int { return readerpool.ProcessScale().Workers }

// newFixture creates the database with its tables and opens a pool of suiteWorkers()
// workers. It runs no read.
func newFixture(opts ...readerpool.Option) *fixture {
	f := &fixture{}
	f.dir, f.err = os.MkdirTemp("", "release-lanes-")
	if f.err != nil {
		return f
	}
	f.pool, f.err = readerpool.Open(filepath.Join(f.dir, "app.db"), append([]readerpool.Option{readerpool.WithWorkers(suiteWorkers())}, opts...)...)
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
		CREATE TABLE attachments (id INTEGER PRIMARY KEY, conv INTEGER NOT NULL, name TEXT NOT NULL,
			data BLOB NOT NULL);
		CREATE INDEX attachments_conv ON attachments (conv, id);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[1]d)
		INSERT INTO conversations SELECT i, 'conversation ' || i, 0 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[1]d * %[2]d)
		INSERT INTO messages SELECT i, 1 + i %% %[1]d, 1 + i %% %[4]d, 1700000000 + i,
			'message ' || i || ': ' || printf('%%.80c', 'm') FROM n;
		UPDATE conversations SET read_upto = (SELECT max(id) FROM messages WHERE conv = conversations.id) - 5;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[3]d)
		INSERT INTO feed SELECT i, 1 + i %% %[4]d, 'post ' || i, printf('%%.160c', 's'), (i * 7919) %% 1000 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[4]d)
		INSERT INTO users SELECT i, 'user ' || i, 'user' || i || '@example.org', printf('%%.120c', 'b'), 0 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %[5]d)
		INSERT INTO attachments SELECT i, 1 + i %% %[1]d, 'photo-' || i || '.jpg', randomblob(%[6]d) FROM n;
	`, conversations, messagesEach, feedItems, users, attachments, attachmentBytes))
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

// exec runs one write.
func (f *fixture) exec(ctx context.Context, sql string, args ...any) error {
	return f.pool.Exec(ctx, sql, args...)
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
	conversationList = `SELECT c.id, c.title,
		(SELECT count(*) FROM messages m WHERE m.conv = c.id AND m.id > c.read_upto),
		(SELECT body FROM messages m WHERE m.conv = c.id ORDER BY m.id DESC LIMIT 1)
		FROM conversations c ORDER BY c.id`
	unreadTotal = `SELECT sum((SELECT count(*) FROM messages m WHERE m.conv = c.id AND m.id > c.read_upto))
		FROM conversations c`
	markRead     = "UPDATE conversations SET read_upto = (SELECT max(id) FROM messages WHERE conv = ?) WHERE id = ?"
	postMessage  = "INSERT INTO messages (conv, author, sent, body) VALUES (?, ?, ?, ?)"
	unreadCount  = "SELECT count(*) FROM messages WHERE conv = ? AND id > (SELECT read_upto FROM conversations WHERE id = ?)"
	feedPage     = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 20"
	feedCount    = "SELECT count(*) FROM feed"
	feedItem     = "SELECT id, author, title, summary, score FROM feed WHERE id = ?"
	feedPage100  = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 100"
	feedPage200  = "SELECT id, author, title, summary, score FROM feed WHERE id > ? ORDER BY id LIMIT 200"
	userByID     = "SELECT id, name, email, bio, seen FROM users WHERE id = ?"
	touchUser    = "UPDATE users SET seen = seen + 1 WHERE id = ?"
	badgeCount   = "SELECT count(*) FROM messages WHERE conv <= 10 AND body LIKE ?"
	authorLookup = "SELECT name FROM users WHERE id = ?"
	// diagBurst is Diagnostics' large byte read: 6,000 messages, about 0.9 MB of JSON.
	diagBurst   = "SELECT id, conv, author, sent, body FROM messages WHERE conv <= ? ORDER BY id"
	galleryPage = "SELECT id, name, data FROM attachments WHERE conv = ? ORDER BY id LIMIT 20"
	galleryAll  = "SELECT id, conv, name, data FROM attachments ORDER BY id"
)

// chatSim is a chat screen: n messages are posted, rotating over the conversations, and
// after each the screen's three live queries are re-run at once: the open conversation's
// latest 50 messages, the conversation list (20 rows, with unread counts and the last
// message) and the total unread badge. Every 21st post the open conversation is marked
// read and the list re-read.
func chatSim(ctx context.Context, f *fixture, n int) error {
	for i := range n {
		conv := 1 + i%conversations
		if err := f.exec(ctx, postMessage, conv, 1+i%users, 1800000000+i, fmt.Sprintf("reply %d", i)); err != nil {
			return err
		}
		if err := together(
			func() error { return f.read(ctx, 50, latestMessages, conv) },
			func() error { return f.read(ctx, conversations, conversationList) },
			func() error { return f.read(ctx, 1, unreadTotal) },
		); err != nil {
			return err
		}
		if i%21 != 20 {
			continue
		}
		if err := f.exec(ctx, markRead, conv, conv); err != nil {
			return err
		}
		if err := f.read(ctx, conversations, conversationList); err != nil {
			return err
		}
	}
	return nil
}

// feedPaging scrolls the feed to its end n times, 20 items a page by keyset pagination,
// re-reading the item count and opening the page's first item every page.
func feedPaging(ctx context.Context, f *fixture, n int) error {
	for range n {
		for after := 0; after < feedItems; after += 20 {
			if err := f.read(ctx, 20, feedPage, after); err != nil {
				return err
			}
			if err := f.read(ctx, 1, feedCount); err != nil {
				return err
			}
			if err := f.read(ctx, 1, feedItem, after+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// concurrent runs callers goroutines at once that each read a 100-row feed page n times:
// the pool's throughput under parallel reads of one shape.
func concurrent(ctx context.Context, f *fixture, callers, n int) error {
	reads := make([]func() error, callers)
	for c := range reads {
		reads[c] = func() error {
			for k := range n {
				if err := f.read(ctx, 100, feedPage100, (c*n+k)*10%(feedItems-100)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return together(reads...)
}

// streamFanout makes n writes to the messages table; after each, the fanout live queries
// on that table (the unread badges of the conversations on screen) are re-run at once,
// as a stream engine re-runs every query a write may have changed.
func streamFanout(ctx context.Context, f *fixture, n int) error {
	reads := make([]func() error, fanout)
	for k := range reads {
		conv := 1 + k
		reads[k] = func() error { return f.read(ctx, 1, unreadCount, conv, conv) }
	}
	for i := range n {
		if err := f.exec(ctx, postMessage, 1+i%fanout, 1+i%users, 1900000000+i, fmt.Sprintf("fan-out %d", i)); err != nil {
			return err
		}
		if err := together(reads...); err != nil {
			return err
		}
	}
	return nil
}

// keyedPK keeps a live query on each of the first `subscribed` users, keyed by primary
// key: each runs once, then n updates each touch one subscribed user and re-run that
// key's query only. Every tenth update is followed by a lookup of a user nobody
// subscribes to (a profile opened).
func keyedPK(ctx context.Context, f *fixture, n int) error {
	for id := 1; id <= subscribed; id++ {
		if err := f.read(ctx, 1, userByID, id); err != nil {
			return err
		}
	}
	for i := range n {
		id := 1 + (i*7919)%subscribed
		if err := f.exec(ctx, touchUser, id); err != nil {
			return err
		}
		if err := f.read(ctx, 1, userByID, id); err != nil {
			return err
		}
		if i%10 == 9 {
			if err := f.read(ctx, 1, userByID, subscribed+1+(i*31)%(users-subscribed)); err != nil {
				return err
			}
		}
	}
	return nil
}

// diagnostics runs n rounds of the diagnostic byte-read workload: a burst of 2 x workers
// concurrent large byte reads (about 0.9 MB of JSON each), which reaches every worker
// and grows its JSON buffer, then settleReads small byte reads one after another, which
// let each worker they reach shrink its buffer. After each round the largest JSON buffer
// a worker holds must be within jsonBufferBudget: the guard that rejected the first
// version of exp 266, in which byte reads were sticky and the settle reads all went to
// one worker. It returns that largest buffer over every round (the high-water mark),
// and an error when a round ends above the budget.
func diagnostics(ctx context.Context, f *fixture, n int) (int, error) {
	high := 0
	for round := range n {
		burst := make([]func() error, 2*suiteWorkers())
		for k := range burst {
			burst[k] = func() error {
				_, err := f.pool.SelectBytes(ctx, diagBurst, 6)
				return err
			}
		}
		if err := together(burst...); err != nil {
			return high, err
		}
		for k := range settleReads {
			if _, err := f.pool.SelectBytes(ctx, userByID, 1+(round*settleReads+k)%users); err != nil {
				return high, err
			}
		}
		largest := 0
		for _, w := range f.pool.Stats().Workers {
			largest = max(largest, w.BufferCap)
		}
		high = max(high, largest)
		if largest > jsonBufferBudget {
			return high, fmt.Errorf("diagnostics guard: after round %d's %d settle reads a worker still holds a %d-byte JSON buffer, above the %d-byte budget",
				round+1, settleReads, largest, jsonBufferBudget)
		}
	}
	return high, nil
}

// memory runs n rounds of large results: five gallery pages (20 photos of 16 KiB each:
// few rows, so cheap by the pool's classification, but 320 KiB), the whole gallery
// exported at once (6.4 MB, above the sacrifice threshold: the worker that serves it
// drops and reopens its connection), then 20 profile lookups.
func memory(ctx context.Context, f *fixture, n int) error {
	for round := range n {
		for k := range 5 {
			if err := f.read(ctx, 20, galleryPage, 1+(round*5+k)%conversations); err != nil {
				return err
			}
		}
		if err := f.read(ctx, attachments, galleryAll); err != nil {
			return err
		}
		for k := range 20 {
			if err := f.read(ctx, 1, userByID, 1+(round*20+k)%users); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkChatSim runs chatSim.
func BenchmarkChatSim(b *testing.B) { lane(b, "ChatSim") }

// BenchmarkFeedPaging runs feedPaging.
func BenchmarkFeedPaging(b *testing.B) { lane(b, "FeedPaging") }

// BenchmarkConcurrent4 runs four callers of 100-row feed pages at once.
func BenchmarkConcurrent4(b *testing.B) { lane(b, "Concurrent4") }

// BenchmarkConcurrent8 runs eight callers of 100-row feed pages at once.
func BenchmarkConcurrent8(b *testing.B) { lane(b, "Concurrent8") }

// BenchmarkStreamFanout runs streamFanout.
func BenchmarkStreamFanout(b *testing.B) { lane(b, "StreamFanout") }

// BenchmarkKeyedPK runs keyedPK.
func BenchmarkKeyedPK(b *testing.B) { lane(b, "KeyedPK") }

// BenchmarkDiagnostics runs diagnostics; the lane fails when the guard does. Besides the
// counters it reports json-buffer-high-water-bytes, the largest JSON buffer a worker held
// after a settle phase.
func BenchmarkDiagnostics(b *testing.B) { lane(b, "Diagnostics") }

// BenchmarkMemory runs memory. Besides the counters it reports sacrifices, the
// connections workers dropped after a large result.
func BenchmarkMemory(b *testing.B) { lane(b, "Memory") }

// sacrifices returns how many times the pool's workers have dropped their connection.
func sacrifices(p *readerpool.Pool) uint64 {
	var n uint64
	for _, w := range p.Stats().Workers {
		n += w.Sacrifices
	}
	return n
}

// BenchmarkPositiveControl runs positiveControl.
func BenchmarkPositiveControl(b *testing.B) {
	b.StopTimer()
	sharedOnce.Do(func() { shared = newFixture() })
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	before := probe.Take()
	b.StartTimer()
	for range b.N {
		if err := positiveControl(context.Background(), shared); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	d := probe.Take().Sub(before)
	for _, c := range probe.ReaderPoolCounters() {
		b.ReportMetric(float64(d.Get(c)), c.Name())
	}
}

// positiveControl fires, ten times, a slow cheap badge count per worker, then a 200-row
// list query, then four small lookups, each group once the one before has reached the
// pool, so the lookups arrive while the list query is parked.
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
		n := suiteWorkers()
		for k := range n {
			pattern := fmt.Sprintf("%%message %d%%", frame*n+k)
			fire(func() error { return f.read(ctx, 1, badgeCount, pattern) })
		}
		f.awaitAsked(served, n) // the badge counts hold every worker
		fire(func() error { return f.read(ctx, 200, feedPage200, frame*50) })
		f.awaitAsked(served, n+1) // the list query is parked behind them
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
	case probe.Enabled && (got == 0 || dispatches != uint64(10*(suiteWorkers()+5))):
		t.Errorf("probe build: %d dispatches and %d cheap reads parked behind costly ones; want %d and more than 0", dispatches, got, 10*(suiteWorkers()+5))
	case !probe.Enabled && (got != 0 || dispatches != 0):
		t.Errorf("default build: counters read %d and %d, want 0", got, dispatches)
	}
}

// TestScenarios runs every scenario at a small size on one fixture: each must succeed and,
// in a probe build, dispatch exactly the reads it plans (reads), with the classes adding
// up; in a default build every counter reads 0.
func TestScenarios(t *testing.T) {
	small := map[string]int{"ChatSim": 50, "FeedPaging": 1, "Concurrent4": 5, "Concurrent8": 5,
		"StreamFanout": 10, "KeyedPK": 100, "Diagnostics": 1, "Memory": 1}
	f := newFixture()
	t.Cleanup(f.close)
	if f.err != nil {
		t.Fatal(f.err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	for _, s := range scenarios() {
		n, ok := small[s.name]
		if !ok {
			t.Fatalf("scenario %s has no small size in this test", s.name)
		}
		before := probe.Take()
		if _, err := s.run(context.Background(), f, n); err != nil {
			t.Fatalf("%s at size %d: %v", s.name, n, err)
		}
		d := probe.Take().Sub(before)
		got := d.Get(probe.Dispatches)
		want := uint64(s.reads(n))
		if !probe.Enabled {
			want = 0
		}
		if got != want || d.Get(probe.Cheap)+d.Get(probe.Costly) != got || d.Get(probe.CheapWaited) > d.Get(probe.Cheap) {
			t.Errorf("%s at size %d: %d dispatches (%d cheap, %d costly, %d cheap waited), want %d", s.name, n, got,
				d.Get(probe.Cheap), d.Get(probe.Costly), d.Get(probe.CheapWaited), want)
		}
	}
}

// TestSuiteScale: at their lane sizes the scenarios issue at least 100,000 reads, the
// scale the incidence report needs to tell a share of 0.1% from zero (TestScenarios checks
// that each scenario issues the reads its formula says).
func TestSuiteScale(t *testing.T) {
	total := 0
	for _, s := range scenarios() {
		total += s.reads(s.size)
	}
	// The package documentation gives the total for two workers and for four; only
	// Diagnostics' bursts (two reads per worker, 30 rounds) depend on the pool's size.
	want := map[int]int{2: 119_365, 3: 119_425, 4: 119_485}[suiteWorkers()]
	if total != want {
		t.Errorf("the scenarios issue %d reads at their lane sizes with %d workers; the package documentation says %d", total, suiteWorkers(), want)
	}
	if total < 100_000 {
		t.Errorf("the scenarios issue %d reads, fewer than 100,000", total)
	}
}

// TestDiagnosticsGuard shows the diagnostics guard doing its job: it holds for the pool
// as committed, where byte reads rotate, and fails for the variant exp 266 rejected, in
// which byte reads are sticky too, because the settle reads then all return to one
// worker and the buffers the burst grew on the others are never reclaimed.
func TestDiagnosticsGuard(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(laneProcs))
	for _, tc := range []struct {
		name   string
		opts   []readerpool.Option
		passes bool
	}{
		{"rotating byte reads", nil, true},
		{"sticky byte reads", []readerpool.Option{readerpool.WithStickyBytes()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(tc.opts...)
			t.Cleanup(f.close)
			if f.err != nil {
				t.Fatal(f.err)
			}
			high, err := diagnostics(context.Background(), f, 2)
			switch {
			case tc.passes && err != nil:
				t.Errorf("the guard failed: %v", err)
			case tc.passes && high > jsonBufferBudget:
				t.Errorf("high-water %d bytes above the %d budget and no error", high, jsonBufferBudget)
			case !tc.passes && err == nil:
				t.Errorf("the guard held (high-water %d bytes, budget %d); it must fail when byte reads are sticky", high, jsonBufferBudget)
			case !tc.passes && high <= jsonBufferBudget:
				t.Errorf("the guard failed (%v) but the high-water %d bytes is within the budget", err, high)
			}
			t.Logf("high-water %d bytes; guard: %v", high, err)
		})
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
