package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"
)

// fakeClock is a virtual clock: time moves only when a test calls Advance, which runs the
// timers that fall due, in time order, each at its own instant.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// fakeTimer is a pending AfterFunc of a fakeClock.
type fakeTimer struct {
	c    *fakeClock
	at   time.Time
	f    func()
	done bool
}

func newFakeClock() *fakeClock {
	// Real time as the start, so that context deadlines computed from the virtual clock
	// are sensible real deadlines too.
	return &fakeClock{now: time.Now()}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves the clock forward by d, running every timer due on the way.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var due *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(target) {
				due = t
				break
			}
		}
		if due == nil {
			c.now = target
			c.mu.Unlock()
			return
		}
		due.done = true
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// fakeLauncher starts fakeWorkers. Every call a fake worker receives is sent to calls,
// where the test answers it (or, with auto set, it is answered at once).
type fakeLauncher struct {
	calls chan *fakeCall
	auto  bool
	// gate, when set, holds every Launch until it is closed (or ctx ends).
	gate chan struct{}
	// failRelease makes every Release fail; holdRelease, when set, holds every Release
	// until it is closed.
	failRelease bool
	holdRelease chan struct{}
	// hangStop makes every Stop fail with ErrWorkerHung.
	hangStop bool

	mu       sync.Mutex
	launched []*fakeWorker
	problems []string
}

func newFakeLauncher() *fakeLauncher {
	return &fakeLauncher{calls: make(chan *fakeCall, 1024)}
}

// fakeWorker is one fake worker, bound to the registration it was launched for.
type fakeWorker struct {
	l              *fakeLauncher
	id             int
	tenant, plugin string

	mu      sync.Mutex
	stopped bool
	calls   int
}

// fakeCall is a call received by a fake worker, waiting for the test's answer.
type fakeCall struct {
	w     *fakeWorker
	req   Request
	reply chan fakeReply
}

type fakeReply struct {
	out []byte
	err error
}

func (l *fakeLauncher) Launch(ctx context.Context, spec LaunchSpec) (Worker, error) {
	if l.gate != nil {
		select {
		case <-l.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.launched {
		if w.tenant == spec.Tenant && w.plugin == spec.Plugin && !w.isStopped() {
			l.problems = append(l.problems, fmt.Sprintf("a second worker launched for %s/%s while worker %d lives", spec.Tenant, spec.Plugin, w.id))
		}
	}
	w := &fakeWorker{l: l, id: len(l.launched) + 1, tenant: spec.Tenant, plugin: spec.Plugin}
	l.launched = append(l.launched, w)
	return w, nil
}

// problem records a broken rule, reported by the harness at the end of the test.
func (l *fakeLauncher) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

// workers returns the launched workers, in launch order.
func (l *fakeLauncher) workers() []*fakeWorker {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*fakeWorker(nil), l.launched...)
}

// launches returns "tenant/plugin" of every launch, in order.
func (l *fakeLauncher) launches() []string {
	var out []string
	for _, w := range l.workers() {
		out = append(out, w.tenant+"/"+w.plugin)
	}
	return out
}

func (w *fakeWorker) Call(ctx context.Context, req Request) ([]byte, error) {
	w.mu.Lock()
	stopped := w.stopped
	w.calls++
	w.mu.Unlock()
	if stopped {
		w.l.problem("worker %d (%s/%s) called after it was stopped", w.id, w.tenant, w.plugin)
		return nil, errors.New("stopped")
	}
	if req.Tenant != w.tenant || req.Plugin != w.plugin {
		w.l.problem("worker %d of %s/%s got a call of %s/%s", w.id, w.tenant, w.plugin, req.Tenant, req.Plugin)
		return nil, errors.New("wrong registration")
	}
	fc := &fakeCall{w: w, req: req, reply: make(chan fakeReply, 1)}
	if w.l.auto {
		return req.Payload, nil
	}
	w.l.calls <- fc
	select {
	case r := <-fc.reply:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *fakeWorker) Stop() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		w.l.problem("worker %d (%s/%s) stopped twice", w.id, w.tenant, w.plugin)
	}
	w.stopped = true
	if w.l.hangStop {
		return fmt.Errorf("fake worker %d: %w", w.id, ErrWorkerHung)
	}
	return nil
}

func (w *fakeWorker) PID() int { return 0 }

// Bind binds an unbound fake worker.
func (w *fakeWorker) Bind(ctx context.Context, tenant, plugin string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tenant != "" {
		w.l.problem("worker %d of %s/%s bound again to %s/%s", w.id, w.tenant, w.plugin, tenant, plugin)
		return errors.New("already bound")
	}
	w.tenant, w.plugin = tenant, plugin
	return nil
}

// Release unbinds the fake worker, or fails when the launcher says so.
func (w *fakeWorker) Release(ctx context.Context) error {
	if w.l.holdRelease != nil {
		select {
		case <-w.l.holdRelease:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if w.l.failRelease {
		return errors.New("fake cleanup failed")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tenant, w.plugin = "", ""
	return nil
}

func (w *fakeWorker) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// name is "tenant/plugin op" of the call.
func (fc *fakeCall) name() string { return fc.req.Tenant + "/" + fc.req.Plugin + " " + fc.req.Op }

// answer answers the call with its payload.
func (fc *fakeCall) answer() { fc.reply <- fakeReply{out: fc.req.Payload} }

// harness is a scheduler over a fake launcher and a virtual clock.
type harness struct {
	t     *testing.T
	s     *Scheduler
	l     *fakeLauncher
	clock *fakeClock
}

// waitBound bounds every wait of a test for the scheduler's goroutines; reaching it fails
// the test. It is never compared with a measured duration.
const waitBound = 10 * time.Second

func newHarness(t *testing.T, opt Options) *harness {
	t.Helper()
	h := &harness{t: t, l: newFakeLauncher(), clock: newFakeClock()}
	opt.Launcher, opt.Clock = h.l, h.clock
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, w := range h.l.workers() {
			if !w.isStopped() {
				t.Errorf("worker %d (%s/%s) still running after Close", w.id, w.tenant, w.plugin)
			}
		}
		h.l.mu.Lock()
		defer h.l.mu.Unlock()
		for _, p := range h.l.problems {
			t.Error(p)
		}
	})
	return h
}

// register registers tenant/plugin with a 64 MiB profile of the given class.
func (h *harness) register(tenant, plugin string, class WorkClass) *Plugin {
	h.t.Helper()
	return h.registerMiB(tenant, plugin, class, 64)
}

func (h *harness) registerMiB(tenant, plugin string, class WorkClass, mib int) *Plugin {
	h.t.Helper()
	p, err := h.s.Register(tenant, plugin, Profile{Name: plugin, MemoryMiB: mib}, class)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// result is what an invocation returned.
type result struct {
	res Result
	err error
}

// invoke starts a call of op and returns once the scheduler has accepted (or refused) it,
// so successive invokes arrive in the order they are made.
func (h *harness) invoke(p *Plugin, op string) <-chan result {
	h.t.Helper()
	return h.invokeCtx(context.Background(), p, op)
}

func (h *harness) invokeCtx(ctx context.Context, p *Plugin, op string) <-chan result {
	h.t.Helper()
	before := h.s.Snapshot()
	out := make(chan result, 1)
	go func() {
		res, err := p.InvokeMeasured(ctx, op, []byte(op))
		out <- result{res, err}
	}()
	h.waitFor("the call of "+op+" reaches the scheduler", func(s Snapshot) bool {
		return s.Calls+s.Rejected.Total()+s.Expired+s.Cancelled > before.Calls+before.Rejected.Total()+before.Expired+before.Cancelled
	})
	return out
}

// waitFor polls the snapshot until cond holds.
func (h *harness) waitFor(what string, cond func(Snapshot) bool) Snapshot {
	h.t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		s := h.s.Snapshot()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting until %s; snapshot %+v", what, s)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// next returns the next call a fake worker received.
func (h *harness) next() *fakeCall {
	h.t.Helper()
	select {
	case fc := <-h.l.calls:
		return fc
	case <-time.After(waitBound):
		h.t.Fatalf("no call reached a worker; snapshot %+v", h.s.Snapshot())
		return nil
	}
}

// noCall checks that no call is waiting at a fake worker right now.
func (h *harness) noCall() {
	h.t.Helper()
	select {
	case fc := <-h.l.calls:
		h.t.Fatalf("unexpected call %s reached a worker", fc.name())
	default:
	}
}

// waitWorkerStopped waits until the scheduler has stopped w (it does so in the
// background).
func (h *harness) waitWorkerStopped(w *fakeWorker) {
	h.t.Helper()
	deadline := time.Now().Add(waitBound)
	for !w.isStopped() {
		if time.Now().After(deadline) {
			h.t.Fatalf("worker %d (%s/%s) was never stopped", w.id, w.tenant, w.plugin)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// wait returns an invocation's result.
func (h *harness) wait(ch <-chan result) result {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitBound):
		h.t.Fatalf("an invocation never returned; snapshot %+v", h.s.Snapshot())
		return result{}
	}
}
