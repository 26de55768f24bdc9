package freshness

import (
	"container/heap"
	"context"
	"fmt"
	"time"
)

// Clock is the scheduler's time: what time it is, timers, and the pacing of a worker's
// work. Every callback runs on the clock's loop, one at a time, so the scheduler's state
// is only ever touched by one goroutine. Times are scenario times: durations since the
// clock was made.
type Clock interface {
	// Now returns the scenario time.
	Now() time.Duration
	// AfterFunc arranges for f to run on the loop once d has passed.
	AfterFunc(d time.Duration, f func())
	// Work runs work on worker w and then, once d has passed since the call, runs done
	// on the loop. The scheduler never gives a worker a second frame before the first
	// one's done has run.
	Work(w int, d time.Duration, work, done func())
	// Run runs the loop until nothing is pending (no timer, no work) or ctx ends.
	Run(ctx context.Context) error
}

// VirtualClock is a deterministic Clock: a discrete-event simulation on the caller's
// goroutine. Time jumps from one event to the next; events due at the same time run in
// the order they were arranged; work runs at once and its done is an event d later. A
// run takes no wall time and gives the same result every time.
type VirtualClock struct {
	now    time.Duration
	seq    uint64
	events eventHeap
}

// NewVirtualClock returns a virtual clock at scenario time 0.
func NewVirtualClock() *VirtualClock { return &VirtualClock{} }

// Now returns the virtual time.
func (c *VirtualClock) Now() time.Duration { return c.now }

// AfterFunc arranges for f to run at Now() + d (at Now() for a negative d).
func (c *VirtualClock) AfterFunc(d time.Duration, f func()) {
	c.seq++
	heap.Push(&c.events, event{at: c.now + max(d, 0), seq: c.seq, f: f})
}

// Work runs work at once and arranges done for Now() + d.
func (c *VirtualClock) Work(_ int, d time.Duration, work, done func()) {
	work()
	c.AfterFunc(d, done)
}

// Run runs the events in time order until none is left or ctx ends.
func (c *VirtualClock) Run(ctx context.Context) error {
	for n := 0; c.events.Len() > 0; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e := heap.Pop(&c.events).(event)
		c.now = e.at
		e.f()
	}
	return nil
}

// event is one arranged callback of a VirtualClock.
type event struct {
	at  time.Duration
	seq uint64
	f   func()
}

// eventHeap orders events by time, then by the order they were arranged.
type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// RealClock is a Clock on real goroutines and timers. One scenario second takes scale
// wall seconds (0.25 runs a scenario four times faster than real time). Each worker is its own goroutine, which runs a
// frame's work and then waits on a timer until the frame's runtime has passed; timers are
// time.AfterFunc. Callbacks reach the loop through a channel, so their delays (the
// timer's, the Go scheduler's, the host's) are part of the times the scheduler sees.
//
// A RealClock is for one Run; make a new one for the next.
type RealClock struct {
	scale   float64
	start   time.Time
	events  chan func()
	quit    chan struct{}
	pending int // arranged callbacks not yet run; touched only on the loop
	workers []chan task
	ran     bool
}

// task is one frame's work handed to a worker goroutine.
type task struct {
	until time.Time
	work  func()
	done  func()
}

// NewRealClock returns a real clock whose scenario time starts now; one scenario second
// takes scale wall seconds. scale must be positive.
func NewRealClock(scale float64) (*RealClock, error) {
	if !(scale > 0) || scale > 1e6 {
		return nil, fmt.Errorf("time scale %v: want a positive factor (0.25 runs four times faster than real time)", scale)
	}
	return &RealClock{scale: scale, start: time.Now(), events: make(chan func(), 64), quit: make(chan struct{})}, nil
}

// Scale returns the wall seconds one scenario second takes.
func (c *RealClock) Scale() float64 { return c.scale }

// Now returns the scenario time: wall time since the clock was made, divided by the scale.
func (c *RealClock) Now() time.Duration {
	return time.Duration(float64(time.Since(c.start)) / c.scale)
}

// wall converts a span of scenario time to wall time.
func (c *RealClock) wall(d time.Duration) time.Duration { return time.Duration(float64(d) * c.scale) }

// post hands f to the loop, unless the run has ended.
func (c *RealClock) post(f func()) {
	select {
	case c.events <- f:
	case <-c.quit:
	}
}

// AfterFunc arranges for f to run on the loop once d of scenario time has passed. Call
// it from the loop (the scheduler's callbacks) or before Run.
func (c *RealClock) AfterFunc(d time.Duration, f func()) {
	c.pending++
	time.AfterFunc(c.wall(max(d, 0)), func() { c.post(f) })
}

// Work hands work to worker w's goroutine, which runs it and then waits until d of
// scenario time has passed since this call before done goes to the loop. Call it from
// the loop or before Run.
func (c *RealClock) Work(w int, d time.Duration, work, done func()) {
	c.pending++
	for len(c.workers) <= w {
		ch := make(chan task, 1)
		c.workers = append(c.workers, ch)
		go c.worker(ch)
	}
	c.workers[w] <- task{until: time.Now().Add(c.wall(max(d, 0))), work: work, done: done}
}

// worker is one worker goroutine.
func (c *RealClock) worker(ch chan task) {
	for t := range ch {
		t.work()
		if wait := time.Until(t.until); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-c.quit:
				timer.Stop()
				return
			}
		}
		c.post(t.done)
	}
}

// Run runs callbacks as they arrive until none is pending or ctx ends. It stops the
// worker goroutines before it returns; a clock runs once.
func (c *RealClock) Run(ctx context.Context) error {
	if c.ran {
		return fmt.Errorf("real clock: already ran; make a new clock for every run")
	}
	c.ran = true
	defer func() {
		close(c.quit)
		for _, ch := range c.workers {
			close(ch)
		}
	}()
	for c.pending > 0 {
		select {
		case f := <-c.events:
			c.pending--
			f()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
