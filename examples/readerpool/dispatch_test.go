package readerpool

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// perWorker returns one count per worker taken from the pool's stats.
func perWorker(p *Pool, count func(WorkerStats) uint64) []uint64 {
	var out []uint64
	for _, w := range p.Stats().Workers {
		out = append(out, count(w))
	}
	return out
}

// TestSequentialReadDispatch pins sticky dispatch: reads issued one after the
// other go back to the worker that served the previous one, so a statement is prepared
// once, not once per worker.
func TestSequentialReadDispatch(t *testing.T) {
	p := newTestPool(t, WithWorkers(2))
	ctx := context.Background()
	for id := range 10 {
		if _, err := p.Select(ctx, "SELECT name FROM items WHERE id = ?", id+1); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]uint64{10, 0}, perWorker(p, func(w WorkerStats) uint64 { return w.Reads })); diff != "" {
		t.Errorf("reads per worker (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{1, 0}, perWorker(p, func(w WorkerStats) uint64 { return w.Prepares })); diff != "" {
		t.Errorf("prepares per worker (-want +got):\n%s", diff)
	}
}

// TestSelectBytesRotates pins the opt-out: sequential byte reads visit every worker, so
// every worker's JSON buffer sees the traffic that reclaims it.
func TestSelectBytesRotates(t *testing.T) {
	p := newTestPool(t, WithWorkers(2))
	ctx := context.Background()
	for id := range 4 {
		if _, err := p.SelectBytes(ctx, "SELECT name FROM items WHERE id = ?", id+1); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]uint64{2, 2}, perWorker(p, func(w WorkerStats) uint64 { return w.JSONReads })); diff != "" {
		t.Errorf("byte reads per worker (-want +got):\n%s", diff)
	}
}

// TestStickyBytesVariant pins WithStickyBytes, the variant that exists to show why byte
// reads rotate: with it, sequential byte reads stay on one worker as rows reads do.
func TestStickyBytesVariant(t *testing.T) {
	p := newTestPool(t, WithWorkers(2), WithStickyBytes())
	ctx := context.Background()
	for id := range 4 {
		if _, err := p.SelectBytes(ctx, "SELECT name FROM items WHERE id = ?", id+1); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]uint64{4, 0}, perWorker(p, func(w WorkerStats) uint64 { return w.JSONReads })); diff != "" {
		t.Errorf("byte reads per worker with sticky bytes (-want +got):\n%s", diff)
	}
}

// TestBusyPreferredWorkerIsSkipped checks that a read whose preferred worker is busy
// takes the next free one instead of waiting for it.
func TestBusyPreferredWorkerIsSkipped(t *testing.T) {
	p := newTestPool(t, WithWorkers(2))
	ctx := context.Background()
	held, err := p.disp.acquire(ctx, claim{})
	if err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Fatalf("first acquire on a fresh pool took slot %d, want 0", held)
	}
	if _, err := p.Select(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	p.disp.release(held)
	if diff := cmp.Diff([]uint64{0, 1}, perWorker(p, func(w WorkerStats) uint64 { return w.Reads })); diff != "" {
		t.Errorf("reads per worker (-want +got):\n%s", diff)
	}
	if s := p.Stats(); s.Parked != 0 {
		t.Errorf("%d reads parked although a worker was free", s.Parked)
	}
}

// TestConcurrentClaimsSpread checks the property that makes stickiness safe: as many
// concurrent reads as workers occupy every worker, with nothing left free.
func TestConcurrentClaimsSpread(t *testing.T) {
	const n = 4
	d := newDispatcher(n)
	ctx := context.Background()
	seen := map[int]bool{}
	for range n {
		i, err := d.acquire(ctx, claim{sql: "SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		seen[i] = true
	}
	if len(seen) != n {
		t.Errorf("%d concurrent claims took %d distinct slots", n, len(seen))
	}
	if s := d.stats(); s.free != 0 || s.parked != 0 {
		t.Errorf("free = %d and parked = %d, want 0 and 0", s.free, s.parked)
	}
	for i := range seen {
		d.release(i)
	}
}

// TestParkingIsFirstInFirstOut checks that parked reads receive freed workers in the
// order they arrived.
func TestParkingIsFirstInFirstOut(t *testing.T) {
	d := newDispatcher(1)
	ctx := context.Background()
	held, err := d.acquire(ctx, claim{})
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 6
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for k := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i, err := d.acquire(ctx, claim{rotate: k%2 == 1})
			if err != nil {
				t.Error(err)
				return
			}
			// Recorded while the slot is held, so records cannot overtake each other.
			mu.Lock()
			order = append(order, k)
			mu.Unlock()
			d.release(i)
		}()
		// Start the next waiter only once this one is parked, to fix the arrival order.
		waitFor(t, "the waiter is parked", func() bool { return d.stats().waiting == k+1 })
	}
	d.release(held)
	wg.Wait()
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5}, order); diff != "" {
		t.Errorf("wake order (-want +got):\n%s", diff)
	}
	if s := d.stats(); s.parked != waiters || s.dispatches != waiters+1 || s.free != 1 || s.reserved != 0 {
		t.Errorf("stats %+v, want %d parked, %d dispatches, 1 free, 0 reserved", s, waiters, waiters+1)
	}
}

// TestReleaseWithCancelledWaiter checks that a worker handed to a read whose context has
// just ended is passed on rather than lost.
func TestReleaseWithCancelledWaiter(t *testing.T) {
	d := newDispatcher(1)
	held, err := d.acquire(context.Background(), claim{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.acquire(ctx, claim{})
		done <- err
	}()
	waitFor(t, "the waiter is parked", func() bool { return d.stats().waiting == 1 })
	// Cancel and release at once: whichever the waiter sees first, the slot must end
	// up free, held by nobody.
	cancel()
	d.release(held)
	err = <-done
	if err == nil {
		// The waiter won the slot before it noticed the cancel; give it back.
		d.release(0)
	}
	if s := d.stats(); s.free != 1 || s.waiting != 0 {
		t.Errorf("after the race: %d free and %d waiting, want 1 and 0", s.free, s.waiting)
	}
}
