package readerpool

import (
	"context"
	"testing"
)

// The benchmarks in this file show what the incidence probes cost on the dispatch path.
// Run them with and without the probe build tag and compare:
//
//	go test -run '^$' -bench Dispatch -count 10 ./examples/readerpool/ > off.txt
//	go test -tags flipbench_probe -run '^$' -bench Dispatch -count 10 ./examples/readerpool/ > on.txt
//	benchstat off.txt on.txt

// BenchmarkDispatch is one uncontended acquire and release of a worker: the whole
// dispatch fast path, with classification and (in a probe build) the counters.
func BenchmarkDispatch(b *testing.B) {
	d := newDispatcher(4)
	ctx := context.Background()
	c := claim{sql: "SELECT 1", cheap: true}
	for b.Loop() {
		i, err := d.acquire(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		d.release(i)
	}
}

// BenchmarkDispatchParallel is acquire and release from every processor at once on a
// two-worker dispatcher, so reads contend for the lock and some park.
func BenchmarkDispatchParallel(b *testing.B) {
	d := newDispatcher(2)
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		k := 0
		for pb.Next() {
			k++
			i, err := d.acquire(ctx, claim{cheap: k%4 != 0})
			if err != nil {
				b.Error(err)
				return
			}
			d.release(i)
		}
	})
}

// BenchmarkDispatchPointRead is one point read through the pool, SQLite included: the
// probes' cost next to the smallest real read.
func BenchmarkDispatchPointRead(b *testing.B) {
	p, err := Open(b.TempDir()+"/bench.db", WithWorkers(2))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	if err := p.Exec(ctx, `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
		INSERT INTO items SELECT i, 'item-' || i FROM n;`); err != nil {
		b.Fatal(err)
	}
	k := 0
	for b.Loop() {
		k++
		if _, err := p.Select(ctx, "SELECT name FROM items WHERE id = ?", 1+k%1000); err != nil {
			b.Fatal(err)
		}
	}
}
