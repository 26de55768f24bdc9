package readerpool

import (
	"context"
	"sync"

	"github.com/flipbench/flipbench/probe"
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
//
// # Cost classes and incidence counters
//
// Every read is classified before dispatch (see cheapRead): cheap when the pool has seen
// its statement complete and it never returned more than cheapRowCap rows, costly
// otherwise. This policy does not use the class; it is there for cost-aware policies and
// for the incidence counters of package probe, which compile to nothing unless the pool is
// built with -tags flipbench_probe. They count, in acquire:
//
//   - dispatches: every read that asks for a worker of an open pool, once, whether it is
//     served at once, parks, or gives up while parked;
//   - cheap, costly: the same reads by class (cheap + costly = dispatches);
//   - parked: reads that found no worker they could take and joined the wait queue;
//   - cheap-waited: cheap reads that parked (a cheap read that waited for a worker at all);
//   - cheap-parked-behind-costly: cheap reads that parked while at least one costly read
//     was already parked. Every read parked at that moment arrived earlier, so under
//     first-come first-served each of those costly reads is served before the cheap one;
//     this is exactly the population a cheap-first wake order would reorder (exp 275).
//     A cheap read parked behind cheap reads only, or a costly read parked behind
//     anything, is not counted.

// claim is a read asking for a worker: everything a dispatch policy may look at.
type claim struct {
	// sql is the statement text. No policy reads it today; it is kept for policies and
	// diagnostics that need more than the cost class.
	sql string
	// rotate asks that the next scan start after the slot this read used, instead of at
	// it. SelectBytes sets it; see Pool.SelectBytes for why.
	rotate bool
	// cheap is the read's cost class at dispatch (see cheapRead).
	cheap bool
}

// cheapRowCap is the most rows a statement may ever have returned and still be cheap: the
// cap the original exp 275 used, so that its numbers and ours classify alike.
const cheapRowCap = 64

// cheapRead classifies a read from what the row memory knows about its statement (Pool.read
// looks it up just before dispatch): cheap when the statement has completed a read before
// (seen) and its high water is at most cheapRowCap rows. A statement never seen is
// costly, because nothing bounds its first run; one that ever returned more rows stays
// costly for as long as the memory remembers it.
func cheapRead(e rowEntry, seen bool) bool {
	return seen && e.highWater <= cheapRowCap
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
	// reserved counts reads that parked while a worker was free: the policy kept that
	// worker back for another read. This policy never does (see the invariant above),
	// so it stays 0; a policy that reserves workers (exp 275's candB) shows it here.
	reserved uint64
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
	if probe.Enabled {
		d.probeArrival(c)
	}
	if i := d.scan(); i >= 0 {
		d.free[i] = false
		d.held.Add(1)
		d.served(i, c)
		d.mu.Unlock()
		return i, nil
	}
	if probe.Enabled {
		d.probePark(c)
	}
	w := &waiter{c: c, slot: make(chan int, 1)}
	d.waiters = append(d.waiters, w)
	d.parked++
	if d.freeCount() > 0 {
		d.reserved++
	}
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

// probeArrival counts a read that asks for a worker. Called with mu held, in probe
// builds only.
func (d *dispatcher) probeArrival(c claim) {
	probe.Dispatches.Add(1)
	if c.cheap {
		probe.Cheap.Add(1)
	} else {
		probe.Costly.Add(1)
	}
}

// probePark counts a read that is about to park; the queue does not hold it yet. Called
// with mu held, in probe builds only.
func (d *dispatcher) probePark(c claim) {
	probe.Parked.Add(1)
	if !c.cheap {
		return
	}
	probe.CheapWaited.Add(1)
	for _, w := range d.waiters {
		if !w.c.cheap {
			probe.CheapParkedBehindCostly.Add(1)
			return
		}
	}
}

// freeCount returns how many workers are free. Called with mu held.
func (d *dispatcher) freeCount() int {
	n := 0
	for _, f := range d.free {
		if f {
			n++
		}
	}
	return n
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
	dispatches, parked, reserved uint64
	waiting, free                int
}

// stats returns a snapshot of the dispatcher's counters.
func (d *dispatcher) stats() dispatchStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return dispatchStats{dispatches: d.dispatches, parked: d.parked, reserved: d.reserved,
		waiting: len(d.waiters), free: d.freeCount()}
}
