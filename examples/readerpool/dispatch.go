package readerpool

import (
	"context"
	"sync"
)

// This file holds the whole dispatch policy of the pool, and nothing else: which free
// worker a read is given, where the next scan starts, and who receives a worker when one
// is freed while reads are parked. Experiments patch this file (exp 266 made the scan
// sticky; exp 275 prototypes a second waiter queue for cheap reads, a last-free-worker
// reservation and probe counters here), so it stays small and free of SQLite.
//
// Invariant: a worker is never free while a read is parked. release hands a freed worker
// straight to the head waiter, so a new arrival that finds a free worker cannot be jumping
// a queue.

// claim is a read asking for a worker: everything a dispatch policy may look at.
type claim struct {
	// sql is the statement text. The default policy ignores it; a cost-aware policy can
	// classify the read with the pool's row memory (see rowMemory).
	sql string
	// rotate asks that the next scan start after the slot this read used, instead of at
	// it. SelectBytes sets it; see Pool.SelectBytes for why.
	rotate bool
}

// waiter is one parked read.
type waiter struct {
	c claim
	// slot receives the index of the worker handed over, or -1 when the pool closes.
	// It has room for one value, so the sender never blocks.
	slot chan int
}

// dispatcher hands workers (slots 0..n-1) to reads. It never touches a connection.
type dispatcher struct {
	mu sync.Mutex
	// free reports, per slot, whether the worker can take a read now.
	free []bool
	// cursor is the slot the next scan starts at.
	cursor int
	// waiters are the parked reads in arrival order.
	waiters []*waiter
	closed  bool
	// held counts slots that are not free (running a read or reopening), so that close
	// can wait for them.
	held sync.WaitGroup

	dispatches uint64 // reads given a worker, directly or after parking
	parked     uint64 // reads that had to park
}

// newDispatcher returns a dispatcher over n free slots.
func newDispatcher(n int) *dispatcher {
	d := &dispatcher{free: make([]bool, n)}
	for i := range d.free {
		d.free[i] = true
	}
	return d
}

// acquire returns the slot of a worker reserved for the read c. When every worker is
// busy it parks the caller until release hands it one (first come, first served). It
// fails with ErrClosed once the pool is closing, and with the context's error when ctx
// ends while parked; a worker handed over at that very moment is passed on, not lost.
func (d *dispatcher) acquire(ctx context.Context, c claim) (int, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return -1, ErrClosed
	}
	if i := d.scan(); i >= 0 {
		d.free[i] = false
		d.held.Add(1)
		d.served(i, c)
		d.mu.Unlock()
		return i, nil
	}
	w := &waiter{c: c, slot: make(chan int, 1)}
	d.waiters = append(d.waiters, w)
	d.parked++
	d.mu.Unlock()

	select {
	case i := <-w.slot:
		if i < 0 {
			return -1, ErrClosed
		}
		return i, nil
	case <-ctx.Done():
	}
	d.mu.Lock()
	if d.unpark(w) {
		d.mu.Unlock()
		return -1, ctx.Err()
	}
	d.mu.Unlock()
	// Not in the queue any more: release or close has already sent something.
	if i := <-w.slot; i >= 0 {
		d.release(i)
	}
	return -1, ctx.Err()
}

// scan returns the first free slot at or after the cursor, wrapping around, or -1.
// Called with mu held.
func (d *dispatcher) scan() int {
	n := len(d.free)
	for attempt := range n {
		i := (d.cursor + attempt) % n
		if d.free[i] {
			return i
		}
	}
	return -1
}

// served records that slot i was given the read c and places the cursor for the next
// scan. Called with mu held.
//
// Sticky dispatch (exp 266): the next scan starts at the slot that just served, so a
// caller that reads sequentially keeps returning to the worker whose statement cache,
// column names and page cache it has already warmed, instead of making every worker pay
// to prepare the same statement. When that worker is busy the scan walks forward exactly
// as round-robin would, so concurrent reads still spread over every worker.
//
// A rotating claim (SelectBytes) moves the cursor past the slot it used, which is the
// round-robin behaviour the pool had before exp 266.
func (d *dispatcher) served(i int, c claim) {
	d.dispatches++
	if c.rotate {
		d.cursor = (i + 1) % len(d.free)
		return
	}
	d.cursor = i
}

// release gives slot i back: to the longest-parked read if there is one, otherwise to
// the free list.
func (d *dispatcher) release(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.waiters) > 0 {
		w := d.waiters[0]
		d.waiters[0] = nil
		d.waiters = d.waiters[1:]
		d.served(i, w.c)
		w.slot <- i
		return
	}
	d.free[i] = true
	d.held.Done()
}

// unpark removes w from the queue and reports whether it was still there. Called with
// mu held.
func (d *dispatcher) unpark(w *waiter) bool {
	for k, x := range d.waiters {
		if x == w {
			d.waiters = append(d.waiters[:k], d.waiters[k+1:]...)
			return true
		}
	}
	return false
}

// close refuses new reads, fails every parked read with ErrClosed and waits until every
// held slot has been released. It reports false when the dispatcher was already closed.
func (d *dispatcher) close() bool {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return false
	}
	d.closed = true
	for _, w := range d.waiters {
		w.slot <- -1
	}
	d.waiters = nil
	d.mu.Unlock()
	d.held.Wait()
	return true
}

// dispatchStats is a snapshot of the dispatcher's counters.
type dispatchStats struct {
	dispatches, parked uint64
	waiting, free      int
}

// stats returns a snapshot of the dispatcher's counters.
func (d *dispatcher) stats() dispatchStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := dispatchStats{dispatches: d.dispatches, parked: d.parked, waiting: len(d.waiters)}
	for _, f := range d.free {
		if f {
			s.free++
		}
	}
	return s
}
