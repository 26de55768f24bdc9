package pluginhost

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// admittedNames answers nothing and returns the names of the next n calls at workers,
// sorted (calls admitted together reach their workers in any order).
func (h *harness) admittedNames(n int) ([]string, []*fakeCall) {
	h.t.Helper()
	var names []string
	var calls []*fakeCall
	for range n {
		fc := h.next()
		names = append(names, fc.name())
		calls = append(calls, fc)
	}
	sort.Strings(names)
	return names, calls
}

// TestHeavyLimits: at most MaxHeavyCalls heavy calls run at once and at most
// MaxHeavyCallsPerTenant of one tenant's; normal calls are not held back by them.
func TestHeavyLimits(t *testing.T) {
	for _, policy := range []Policy{PolicyFIFO, PolicyFair} {
		t.Run(policy.String(), func(t *testing.T) {
			h := newHarness(t, Options{Policy: policy}) // defaults: 2 heavy, 1 per tenant
			ah1, ah2 := h.register("A", "h1", Heavy), h.register("A", "h2", Heavy)
			bh1, ch1 := h.register("B", "h1", Heavy), h.register("C", "h1", Heavy)
			cn := h.register("C", "n1", Normal)
			var res []<-chan result
			for _, p := range []*Plugin{ah1, ah2, bh1, ch1} {
				res = append(res, h.invoke(p, "heavy"))
			}
			running, calls := h.admittedNames(2)
			if diff := cmp.Diff([]string{"A/h1 heavy", "B/h1 heavy"}, running); diff != "" {
				t.Fatalf("heavy calls running (-want +got):\n%s", diff)
			}
			s := h.waitFor("two heavy calls queue", func(s Snapshot) bool { return s.Queued == 2 })
			if s.HeavyActive != 2 {
				t.Errorf("HeavyActive = %d, want 2", s.HeavyActive)
			}
			// A normal call runs at once, heavy limits or not.
			res = append(res, h.invoke(cn, "normal"))
			if fc := h.next(); fc.name() != "C/n1 normal" {
				t.Fatalf("admitted %s, want the normal call", fc.name())
			} else {
				fc.answer()
			}
			// B's heavy call finishes: A's second is still held by A's per-tenant
			// limit, so C's heavy call goes.
			byName := map[string]*fakeCall{}
			for _, fc := range calls {
				byName[fc.name()] = fc
			}
			byName["B/h1 heavy"].answer()
			if fc := h.next(); fc.name() != "C/h1 heavy" {
				t.Fatalf("admitted %s after B's heavy call, want C/h1 heavy", fc.name())
			} else {
				byName["C/h1 heavy"] = fc
			}
			byName["A/h1 heavy"].answer()
			if fc := h.next(); fc.name() != "A/h2 heavy" {
				t.Fatalf("admitted %s after A's first heavy call, want A/h2 heavy", fc.name())
			} else {
				fc.answer()
			}
			byName["C/h1 heavy"].answer()
			for _, r := range res {
				if got := h.wait(r); got.err != nil {
					t.Error(got.err)
				}
			}
		})
	}
}

// TestHeavyHalfBudget: the workers of heavy registrations reserve at most half the
// budget; a heavy cold call evicts an idle heavy worker, not a normal one, to fit.
func TestHeavyHalfBudget(t *testing.T) {
	h := newHarness(t, Options{MemoryBudgetMiB: 256, MaxHeavyCalls: 4, MaxHeavyCallsPerTenant: 4})
	n := h.registerMiB("N", "n", Normal, 64)
	a := h.registerMiB("A", "h", Heavy, 64)
	b := h.registerMiB("B", "h", Heavy, 64)
	c := h.registerMiB("C", "h", Heavy, 64)
	if _, err := h.s.Register("D", "big", Profile{MemoryMiB: 129}, Heavy); err == nil {
		t.Error("a heavy profile above half the budget was registered")
	}
	for _, p := range []*Plugin{n, a, b} { // n's idle worker is the least recently used
		r := h.invoke(p, "x")
		h.next().answer()
		if got := h.wait(r); got.err != nil {
			t.Fatal(got.err)
		}
	}
	s := h.s.Snapshot()
	if s.HeavyReservedMiB != 128 || s.ReservedMiB != 192 || s.Idle != 3 {
		t.Fatalf("after three calls: %+v", s)
	}
	r := h.invoke(c, "x")
	h.next().answer()
	if got := h.wait(r); got.err != nil {
		t.Fatal(got.err)
	}
	s = h.s.Snapshot()
	if s.Evictions != 1 || s.HeavyReservedMiB != 128 {
		t.Errorf("after C's heavy call: evictions %d, heavy reserved %d MiB; want 1 and 128", s.Evictions, s.HeavyReservedMiB)
	}
	stopped := map[string]bool{}
	for _, w := range h.l.workers() {
		stopped[w.tenant+"/"+w.plugin] = w.isStopped()
	}
	want := map[string]bool{"N/n": false, "A/h": true, "B/h": false, "C/h": false}
	if diff := cmp.Diff(want, stopped); diff != "" {
		t.Errorf("stopped workers (-want +got):\n%s", diff)
	}
}

// TestMemoryBudgetAdmission: each worker reserves its profile's memory; with no ceiling
// the count follows the budget, and a call that does not fit waits while every worker is
// busy.
func TestMemoryBudgetAdmission(t *testing.T) {
	h := newHarness(t, Options{MemoryBudgetMiB: 300})
	var ps []*Plugin
	for _, name := range []string{"a", "b", "c", "d"} {
		ps = append(ps, h.registerMiB(strings.ToUpper(name), name, Normal, 100))
	}
	var res []<-chan result
	for _, p := range ps {
		res = append(res, h.invoke(p, "x"))
	}
	_, calls := h.admittedNames(3)
	s := h.waitFor("the fourth call waits", func(s Snapshot) bool { return s.Queued == 1 })
	if s.Workers != 3 || s.ReservedMiB != 300 || s.Active != 3 {
		t.Errorf("three 100 MiB workers in a 300 MiB budget: %+v", s)
	}
	calls[0].answer()
	fc := h.next()
	if fc.name() != "D/d x" {
		t.Errorf("admitted %s, want D/d x", fc.name())
	}
	s = h.s.Snapshot()
	if s.Evictions != 1 || s.ReservedMiB != 300 {
		t.Errorf("the fourth call should evict the idle worker: %+v", s)
	}
	fc.answer()
	for _, c := range calls[1:] {
		c.answer()
	}
	for _, r := range res {
		if got := h.wait(r); got.err != nil {
			t.Error(got.err)
		}
	}

	// No ceiling by default: ten small workers run at once in the default budget.
	h2 := newHarness(t, Options{})
	var res2 []<-chan result
	for i := range 10 {
		res2 = append(res2, h2.invoke(h2.register("T", string(rune('a'+i)), Normal), "x"))
	}
	_, calls2 := h2.admittedNames(10)
	if s := h2.s.Snapshot(); s.Workers != 10 || s.Active != 10 || s.ReservedMiB != 640 {
		t.Errorf("ten 64 MiB workers with no ceiling: %+v", s)
	}
	for _, c := range calls2 {
		c.answer()
	}
	for _, r := range res2 {
		h2.wait(r)
	}
}

// TestResidencyLRU: an idle used worker serves its registration's next call (warm); a
// cold call that does not fit evicts the least recently used idle worker.
func TestResidencyLRU(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 2})
	a, b, c := h.register("A", "p", Normal), h.register("B", "p", Normal), h.register("C", "p", Normal)
	run := func(p *Plugin) Result {
		t.Helper()
		r := h.invoke(p, "x")
		h.next().answer()
		got := h.wait(r)
		if got.err != nil {
			t.Fatal(got.err)
		}
		return got.res
	}
	if !run(a).Cold || !run(b).Cold {
		t.Error("first calls should be cold")
	}
	if run(a).Cold { // A's worker is warm and now the most recently used
		t.Error("A's second call should be warm")
	}
	if !run(c).Cold { // evicts B's (least recently used), not A's
		t.Error("C's first call should be cold")
	}
	stopped := map[string]bool{}
	for _, w := range h.l.workers() {
		stopped[w.tenant] = w.isStopped()
	}
	if diff := cmp.Diff(map[string]bool{"A": false, "B": true, "C": false}, stopped); diff != "" {
		t.Errorf("stopped workers (-want +got):\n%s", diff)
	}
	s := h.s.Snapshot()
	if s.ColdCalls != 3 || s.WarmCalls != 1 || s.Evictions != 1 || s.Idle != 2 || s.Starts != 3 {
		t.Errorf("counters: %+v", s)
	}
	if !run(b).Cold {
		t.Error("B's call after its eviction should be cold")
	}

	// MaxIdleWorkers bounds the cache by count.
	h2 := newHarness(t, Options{MaxIdleWorkers: 1})
	for _, tn := range []string{"A", "B"} {
		r := h2.invoke(h2.register(tn, "p", Normal), "x")
		h2.next().answer()
		h2.wait(r)
	}
	if s := h2.s.Snapshot(); s.Idle != 1 || s.Evictions != 1 {
		t.Errorf("MaxIdleWorkers 1: %+v", s)
	}
}

// TestUsedWorkerNeverChangesTenant drives random calls of many registrations through
// two slots and checks at every worker that it only ever serves the registration it was
// started for, and that no registration ever has two workers alive (the fake launcher
// records both as problems, which fail the test).
func TestUsedWorkerNeverChangesTenant(t *testing.T) {
	for _, policy := range []Policy{PolicyFIFO, PolicyFair} {
		t.Run(policy.String(), func(t *testing.T) {
			h := newHarness(t, Options{MaxWorkers: 2, Policy: policy})
			h.l.auto = true
			var ps []*Plugin
			for _, tn := range []string{"A", "B", "C"} {
				for _, pl := range []string{"p", "q"} {
					ps = append(ps, h.register(tn, pl, Normal))
				}
			}
			rng := rand.New(rand.NewPCG(3, 3))
			var wg sync.WaitGroup
			for range 8 {
				seq := make([]*Plugin, 40)
				for i := range seq {
					seq[i] = ps[rng.IntN(len(ps))]
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, p := range seq {
						out, err := p.Invoke(context.Background(), "x", []byte(p.Tenant()))
						if err != nil {
							t.Error(err)
							return
						}
						if string(out) != p.Tenant() {
							t.Errorf("%s got %q", p.Tenant(), out)
						}
					}
				}()
			}
			wg.Wait()
			s := h.s.Snapshot()
			if s.Workers > 2 || s.ColdCalls+s.WarmCalls != 320 || s.Completed != 320 {
				t.Errorf("after 320 calls on two slots: %+v", s)
			}
			if s.Evictions == 0 {
				t.Error("six pairs on two slots never evicted: the test did not create pressure")
			}
		})
	}
}

// TestIdleTimeout: the sweep stops an idle worker once IdleTimeout has passed, by the
// scheduler's clock.
func TestIdleTimeout(t *testing.T) {
	h := newHarness(t, Options{IdleTimeout: time.Second})
	r := h.invoke(h.register("A", "p", Normal), "x")
	h.next().answer()
	h.wait(r)
	h.clock.Advance(900 * time.Millisecond)
	if s := h.s.Snapshot(); s.Idle != 1 || s.IdleStops != 0 {
		t.Fatalf("after 0.9 s idle: %+v", s)
	}
	h.clock.Advance(100 * time.Millisecond)
	if s := h.s.Snapshot(); s.Idle != 0 || s.IdleStops != 1 || s.Workers != 0 || s.ReservedMiB != 0 {
		t.Fatalf("after 1 s idle: %+v", s)
	}
}

// TestSweptCallsNeverExecute: queued calls whose deadline passes or whose context is
// cancelled are removed by the sweep and never reach a worker; one that ends between
// sweeps is dropped at admission.
func TestSweptCallsNeverExecute(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 1})
	a, b := h.register("A", "p", Normal), h.register("B", "p", Normal)
	blocker := h.invoke(a, "block")
	running := h.next()

	expiring, cancelExp := context.WithDeadline(context.Background(), h.clock.Now().Add(150*time.Millisecond))
	defer cancelExp()
	exp := h.invokeCtx(expiring, b, "expires")
	cancelled, cancel := context.WithCancel(context.Background())
	can := h.invokeCtx(cancelled, b, "cancelled")
	h.clock.Advance(100 * time.Millisecond) // first sweep: both still waiting (unless the real deadline passed)
	cancel()
	h.clock.Advance(100 * time.Millisecond) // second sweep: both gone
	if got := h.wait(exp); !errors.Is(got.err, ErrExpired) {
		t.Errorf("the expiring call returned %v, want ErrExpired", got.err)
	}
	if got := h.wait(can); !errors.Is(got.err, ErrCancelled) || !errors.Is(got.err, context.Canceled) {
		t.Errorf("the cancelled call returned %v, want ErrCancelled", got.err)
	}
	if s := h.s.Snapshot(); s.Queued != 0 || s.QueuedBytes != 0 || s.Expired != 1 || s.Cancelled != 1 {
		t.Errorf("after the sweep: %+v", s)
	}

	// Cancelled between sweeps: dropped at admission.
	late, cancelLate := context.WithCancel(context.Background())
	dropped := h.invokeCtx(late, b, "late")
	cancelLate()
	running.answer()
	if got := h.wait(dropped); !errors.Is(got.err, ErrCancelled) {
		t.Errorf("the call cancelled between sweeps returned %v, want ErrCancelled", got.err)
	}
	h.wait(blocker)
	h.noCall()
	if s := h.s.Snapshot(); s.Admitted != 1 || s.Cancelled != 2 {
		t.Errorf("only the blocker may have been admitted: %+v", s)
	}
}

// TestQueueBounds: the queue refuses calls beyond MaxQueuedCalls and calls whose
// serialized size is above MaxCallBytes, at once.
func TestQueueBounds(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 1, MaxQueuedCalls: 2, MaxCallBytes: 64})
	a := h.register("A", "p", Normal)
	var res []<-chan result
	res = append(res, h.invoke(a, "run"))
	running := h.next()
	res = append(res, h.invoke(a, "q1"), h.invoke(a, "q2"))
	if _, err := a.Invoke(context.Background(), "q3", nil); !errors.Is(err, ErrQueueFull) {
		t.Errorf("a third queued call returned %v, want ErrQueueFull", err)
	}
	if _, err := a.Invoke(context.Background(), "big", make([]byte, 64)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a call over MaxCallBytes returned %v, want ErrTooLarge", err)
	}
	s := h.s.Snapshot()
	if s.Rejected.QueueFull != 1 || s.Rejected.TooLarge != 1 || s.Queued != 2 {
		t.Errorf("after the rejections: %+v", s)
	}
	if want := 2 * requestSize("A", "p", "q1", []byte("q1")); s.QueuedBytes != want {
		t.Errorf("QueuedBytes = %d, want %d", s.QueuedBytes, want)
	}
	running.answer()
	h.next().answer()
	h.next().answer()
	for _, r := range res {
		if got := h.wait(r); got.err != nil {
			t.Error(got.err)
		}
	}
}

// TestStartConcurrency: at most MaxConcurrentStarts workers start at once; a cold call
// beyond that waits for a start slot, and fails with ErrTimeout if its deadline passes
// while it waits.
func TestStartConcurrency(t *testing.T) {
	h := newHarness(t, Options{MaxConcurrentStarts: 1})
	h.l.gate = make(chan struct{})
	a := h.register("A", "p", Normal)
	b, err := h.s.Register("B", "p", Profile{MemoryMiB: 64, Timeout: 50 * time.Millisecond}, Normal)
	if err != nil {
		t.Fatal(err)
	}
	ra := h.invoke(a, "x")
	h.waitFor("A's worker starts", func(s Snapshot) bool { return s.Starting == 1 })
	rb := h.invoke(b, "x")
	s := h.waitFor("B's start waits", func(s Snapshot) bool { return s.StartWaiting == 1 })
	if s.Active != 2 || s.Starting != 1 {
		t.Errorf("two cold calls, one start slot: %+v", s)
	}
	got := h.wait(rb) // its 50 ms (real) timeout passes while A's start is held
	if !errors.Is(got.err, ErrTimeout) {
		t.Errorf("B's call returned %v, want ErrTimeout", got.err)
	}
	close(h.l.gate)
	h.next().answer()
	if got := h.wait(ra); got.err != nil {
		t.Error(got.err)
	}
	s = h.s.Snapshot()
	if s.Timeouts != 1 || s.Failed != 1 || s.Starts != 1 || s.Workers != 1 || s.StartWaiting != 0 {
		t.Errorf("after the timeout: %+v", s)
	}
}

// TestMeasuredInvocation: queue time runs from arrival to admission, execution time
// from admission to the answer, and elapsed is both, by the scheduler's clock.
func TestMeasuredInvocation(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 1})
	a, b := h.register("A", "p", Normal), h.register("B", "p", Normal)
	ra := h.invoke(a, "x")
	fa := h.next()
	rb := h.invoke(b, "y")
	h.clock.Advance(30 * time.Millisecond)
	fa.answer()
	fb := h.next()
	h.clock.Advance(20 * time.Millisecond)
	fb.answer()
	got := h.wait(rb)
	if got.err != nil {
		t.Fatal(got.err)
	}
	want := Result{Output: []byte("y"), QueueTime: 30 * time.Millisecond, ExecTime: 20 * time.Millisecond,
		Elapsed: 50 * time.Millisecond, Cold: true, AdmittedAhead: 0}
	if diff := cmp.Diff(want, got.res); diff != "" {
		t.Errorf("B's result (-want +got):\n%s", diff)
	}
	if got := h.wait(ra); got.res.ExecTime != 30*time.Millisecond || got.res.QueueTime != 0 {
		t.Errorf("A's result: %+v", got.res)
	}
}

// TestAdmittedAhead counts the calls admitted between a call's arrival and its own
// admission: how many overtook it, or went before it under FIFO.
func TestAdmittedAhead(t *testing.T) {
	for policy, want := range map[Policy]int{PolicyFIFO: 2, PolicyFair: 0} {
		t.Run(policy.String(), func(t *testing.T) {
			h := newHarness(t, Options{MaxWorkers: 1, Policy: policy})
			a1, a2, a3, b := h.register("A", "1", Normal), h.register("A", "2", Normal), h.register("A", "3", Normal), h.register("B", "1", Normal)
			res := []<-chan result{h.invoke(a1, "x")}
			running := h.next()
			res = append(res, h.invoke(a2, "x"), h.invoke(a3, "x"))
			rb := h.invoke(b, "x")
			running.answer()
			for range 3 {
				h.next().answer()
			}
			if got := h.wait(rb); got.res.AdmittedAhead != want {
				t.Errorf("B's call: %d admitted ahead, want %d", got.res.AdmittedAhead, want)
			}
			for _, r := range res {
				h.wait(r)
			}
		})
	}
}

// TestTimeoutStopsWorker: a call past its timeout fails with ErrTimeout and its worker,
// in an unknown state, is stopped; the registration's next call is cold.
func TestTimeoutStopsWorker(t *testing.T) {
	h := newHarness(t, Options{NormalTimeout: 30 * time.Millisecond})
	a := h.register("A", "p", Normal)
	r := h.invoke(a, "hang")
	h.next() // never answered
	if got := h.wait(r); !errors.Is(got.err, ErrTimeout) {
		t.Fatalf("returned %v, want ErrTimeout", got.err)
	}
	if ws := h.l.workers(); len(ws) != 1 {
		t.Fatalf("%d workers launched, want 1", len(ws))
	}
	h.waitWorkerStopped(h.l.workers()[0])
	r = h.invoke(a, "again")
	h.next().answer()
	if got := h.wait(r); got.err != nil || !got.res.Cold {
		t.Errorf("the next call: cold %v, err %v; want a cold call", got.res.Cold, got.err)
	}
	if s := h.s.Snapshot(); s.Timeouts != 1 || s.Failed != 1 || s.Completed != 1 {
		t.Errorf("counters: %+v", s)
	}
}

// TestPluginErrorKeepsWorker: an error the plugin reports is the call's answer; the worker
// stays resident.
func TestPluginErrorKeepsWorker(t *testing.T) {
	h := newHarness(t, Options{})
	a := h.register("A", "p", Normal)
	r := h.invoke(a, "fail")
	h.next().reply <- fakeReply{err: &PluginError{Message: "bad input"}}
	var pe *PluginError
	if got := h.wait(r); !errors.As(got.err, &pe) {
		t.Fatalf("returned %v, want a PluginError", got.err)
	}
	r = h.invoke(a, "ok")
	h.next().answer()
	if got := h.wait(r); got.res.Cold {
		t.Error("the call after a plugin error should be warm")
	}
}

// TestRegistration: a pair is registered once at a time; Close fails its queued calls,
// lets its running call finish, stops its worker and frees the pair.
func TestRegistration(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 1})
	a := h.register("A", "p", Normal)
	if _, err := h.s.Register("A", "p", Profile{MemoryMiB: 64}, Normal); !errors.Is(err, ErrRegistered) {
		t.Errorf("a second registration returned %v, want ErrRegistered", err)
	}
	for _, bad := range []struct {
		tenant, plugin string
		profile        Profile
		class          WorkClass
	}{
		{"", "p", Profile{MemoryMiB: 1}, Normal},
		{"A", "q", Profile{}, Normal},
		{"A", "q", Profile{MemoryMiB: DefaultMemoryBudgetMiB + 1}, Normal},
		{"A", "q", Profile{MemoryMiB: 1}, WorkClass(7)},
	} {
		if _, err := h.s.Register(bad.tenant, bad.plugin, bad.profile, bad.class); err == nil {
			t.Errorf("Register(%q, %q, %+v, %d) succeeded", bad.tenant, bad.plugin, bad.profile, bad.class)
		}
	}
	running := h.invoke(a, "run")
	fc := h.next()
	queued := h.invoke(a, "queued")
	closed := make(chan error)
	go func() { closed <- a.Close() }()
	if got := h.wait(queued); !errors.Is(got.err, ErrClosed) {
		t.Errorf("the queued call returned %v, want ErrClosed", got.err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a call was running")
	default:
	}
	fc.answer()
	if got := h.wait(running); got.err != nil {
		t.Errorf("the running call: %v", got.err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if ws := h.l.workers(); !ws[0].isStopped() {
		t.Error("Close left the worker running")
	}
	if _, err := a.Invoke(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close returned %v, want ErrClosed", err)
	}
	again := h.register("A", "p", Normal) // the pair is free again
	r := h.invoke(again, "x")
	h.next().answer()
	if got := h.wait(r); got.err != nil || !got.res.Cold {
		t.Errorf("the re-registered pair: cold %v, err %v", got.res.Cold, got.err)
	}
	if s := h.s.Snapshot(); s.Registrations != 1 || s.Rejected.Closed != 1 {
		t.Errorf("snapshot: %+v", s)
	}
}

// TestSchedulerClose: queued calls fail with ErrClosed, running calls are cancelled, every
// worker is stopped, and nothing is accepted afterwards.
func TestSchedulerClose(t *testing.T) {
	h := newHarness(t, Options{MaxWorkers: 1})
	a, b := h.register("A", "p", Normal), h.register("B", "p", Normal)
	running := h.invoke(a, "run")
	h.next()
	queued := h.invoke(b, "queued")
	if err := h.s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]<-chan result{"running": running, "queued": queued} {
		if got := h.wait(r); !errors.Is(got.err, ErrClosed) {
			t.Errorf("the %s call returned %v, want ErrClosed", name, got.err)
		}
	}
	for _, w := range h.l.workers() {
		if !w.isStopped() {
			t.Errorf("worker %d still running", w.id)
		}
	}
	if _, err := h.s.Register("C", "p", Profile{MemoryMiB: 1}, Normal); !errors.Is(err, ErrClosed) {
		t.Errorf("Register after Close returned %v", err)
	}
	if _, err := a.Invoke(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke after Close returned %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("closing a registration after the scheduler: %v", err)
	}
}

// TestOptions: invalid options are refused with the field's name; zero fields default.
func TestOptions(t *testing.T) {
	l := newFakeLauncher()
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{}, "Launcher is required"},
		{Options{Launcher: l, MaxWorkers: -1}, "MaxWorkers must not be negative"},
		{Options{Launcher: l, IdleTimeout: -time.Second}, "IdleTimeout must not be negative"},
		{Options{Launcher: l, Policy: Policy(9)}, "unknown Policy 9"},
		{Options{Launcher: l, MaxCallBytes: maxFrame + 1}, "MaxCallBytes must be at most"},
	} {
		if _, err := New(tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.opt, err, tc.want)
		}
	}
	s, err := New(Options{Launcher: l})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.opt
	if o.MemoryBudgetMiB != 4096 || o.MaxWorkers != 0 || o.MaxConcurrentStarts != 8 || o.MaxHeavyCalls != 2 ||
		o.MaxHeavyCallsPerTenant != 1 || o.NormalTimeout != 5*time.Second || o.HeavyTimeout != 5*time.Minute ||
		o.IdleTimeout != 2*time.Minute || o.MaxQueuedCalls != 4096 || o.MaxCallBytes != 1<<20 ||
		o.SweepInterval != 100*time.Millisecond || s.Policy() != DefaultPolicy {
		t.Errorf("defaults: %+v", o)
	}
}
