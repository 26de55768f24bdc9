package pluginhost

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// waitSnap polls s until cond holds, failing the test after waitBound.
func waitSnap(t *testing.T, s *Scheduler, what string, cond func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		snap := s.Snapshot()
		if cond(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s; snapshot %+v", what, snap)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func mustRegister(t testing.TB, s *Scheduler, tenant, plugin string, p Profile) *Plugin {
	t.Helper()
	r, err := s.Register(tenant, plugin, p, Normal)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestApprovedSessionReuse: with ReuseApprovedSessions, a worker whose call completed is
// cleaned up and pooled; another tenant's registration of the same profile takes it
// (a reused call, not cold, no process start) and finds a fresh session. A profile
// without the policy keeps its worker bound.
func TestApprovedSessionReuse(t *testing.T) {
	s, _ := processScheduler(t, Options{MemoryBudgetMiB: 128})
	approved := Profile{Name: "sleep", MemoryMiB: 64, Reuse: ReuseApprovedSessions}
	a, b := mustRegister(t, s, "A", "p", approved), mustRegister(t, s, "B", "p", approved)
	bindA, pidA, _, resA := whoami(t, a)
	if bindA != "A/p" || !resA.Cold || resA.Reused {
		t.Fatalf("A's first call: %s cold %v reused %v", bindA, resA.Cold, resA.Reused)
	}
	waitSnap(t, s, "A's session is pooled", func(sn Snapshot) bool { return sn.Pooled == 1 && sn.Releasing == 0 })
	bindB, pidB, before, resB := whoami(t, b)
	if bindB != "B/p" || pidB != pidA || before != "0" || resB.Cold || !resB.Reused {
		t.Errorf("B's call: binding %s pid %s (A's %s), %s calls before, cold %v reused %v; want B/p on A's process, a fresh session, reused",
			bindB, pidB, pidA, before, resB.Cold, resB.Reused)
	}
	sn := waitSnap(t, s, "B's session is pooled", func(sn Snapshot) bool { return sn.Pooled == 1 })
	if sn.Starts != 1 || sn.LaunchedCalls != 1 || sn.ReusedCalls != 1 || sn.ColdCalls != 1 || sn.Releases != 2 {
		t.Errorf("counters: %+v", sn)
	}

	plain := mustRegister(t, s, "C", "p", Profile{Name: "sleep", MemoryMiB: 64})
	whoami(t, plain)
	if sn := s.Snapshot(); sn.Pooled != 1 || sn.Idle != 2 || sn.Releases != 2 {
		t.Errorf("a profile without reuse must keep its worker bound and unpooled: %+v", sn)
	}
	// A pooled worker of another profile is not taken: D's profile differs in memory.
	d := mustRegister(t, s, "D", "p", Profile{Name: "sleep", MemoryMiB: 32, Reuse: ReuseApprovedSessions})
	if _, _, _, res := whoami(t, d); !res.Cold || res.Reused {
		t.Errorf("D's call took a worker of another profile: cold %v reused %v", res.Cold, res.Reused)
	}
}

// TestPristineReserve: a requested profile gets a pristine worker while nothing waits;
// the next cold call of that profile takes it (still cold, but no start on its path);
// pressure evicts pristine workers before used ones; replenishing never evicts; and a
// target expires once its profile's demand is older than IdleTimeout.
func TestPristineReserve(t *testing.T) {
	s, _ := processScheduler(t, Options{MemoryBudgetMiB: 128, PristineReserve: 2, IdleTimeout: 400 * time.Millisecond, SweepInterval: 10 * time.Millisecond})
	prof := Profile{Name: "sleep", MemoryMiB: 64}
	a := mustRegister(t, s, "A", "p", prof)
	if _, _, _, res := whoami(t, a); !res.Cold || res.Pristine {
		t.Fatalf("A's first call: cold %v pristine %v; want a launched cold call", res.Cold, res.Pristine)
	}
	waitSnap(t, s, "a pristine worker of A's profile is ready", func(sn Snapshot) bool { return sn.Pristine == 1 })
	b := mustRegister(t, s, "B", "p", prof)
	bind, _, before, res := whoami(t, b)
	if bind != "B/p" || before != "0" || !res.Cold || !res.Pristine {
		t.Errorf("B's first call: %s, %s before, cold %v pristine %v; want a pristine worker bound to B/p", bind, before, res.Cold, res.Pristine)
	}
	sn := s.Snapshot()
	if sn.PristineCalls != 1 || sn.LaunchedCalls != 1 || sn.PristineStarts != 1 || sn.ReservedMiB != 128 {
		t.Errorf("counters after B: %+v", sn)
	}
	// The budget is full (A's and B's idle workers): nothing is replenished.
	time.Sleep(30 * time.Millisecond)
	if sn := s.Snapshot(); sn.PristineStarting+sn.Pristine != 0 || sn.PristineStarts != 1 {
		t.Errorf("the reserve evicted or overcommitted to replenish: %+v", sn)
	}
	// A call of another profile evicts the least recently used (A's), not B's.
	c := mustRegister(t, s, "C", "p", Profile{Name: "other", MemoryMiB: 64})
	whoami(t, c)
	if _, _, _, res := whoami(t, b); res.Cold {
		t.Error("B's worker was evicted instead of the least recently used one")
	}
	// A pristine worker is evicted before any used one.
	s2, _ := processScheduler(t, Options{MemoryBudgetMiB: 192, PristineReserve: 1})
	a2 := mustRegister(t, s2, "A", "p", prof)
	whoami(t, a2)
	waitSnap(t, s2, "a pristine worker is ready", func(sn Snapshot) bool { return sn.Pristine == 1 })
	c2 := mustRegister(t, s2, "C", "p", Profile{Name: "other", MemoryMiB: 64})
	whoami(t, c2) // fits in the free 64 MiB
	d2 := mustRegister(t, s2, "D", "p", Profile{Name: "third", MemoryMiB: 64})
	whoami(t, d2) // must evict: the pristine one goes
	if _, _, _, res := whoami(t, a2); res.Cold {
		t.Error("A's used worker was evicted while a pristine worker was idle")
	}
	if sn := s2.Snapshot(); sn.Evictions != 1 || sn.PristineCalls != 0 {
		t.Errorf("s2 counters: %+v", sn)
	}
	// Targets expire with their demand.
	sn = waitSnap(t, s, "demand expired and idle workers stopped", func(sn Snapshot) bool { return sn.Workers == 0 })
	if sn.Pristine != 0 || sn.IdleStops == 0 {
		t.Errorf("after expiry: %+v", sn)
	}
}

// TestPristineBesideIdleBound: MaxIdleWorkers bounds the used idle workers only, so a
// pristine worker started into the budget the bound leaves free stays ready (it is not
// evicted the moment it is idle, which would start and stop workers in a loop), a cold
// call takes it, and the bound then evicts the least recently used used worker.
func TestPristineBesideIdleBound(t *testing.T) {
	s, _ := processScheduler(t, Options{MemoryBudgetMiB: 256, MaxIdleWorkers: 1, PristineReserve: 1})
	prof := Profile{Name: "sleep", MemoryMiB: 64}
	a := mustRegister(t, s, "A", "p", prof)
	whoami(t, a)
	waitSnap(t, s, "a pristine worker is ready beside A's idle one", func(sn Snapshot) bool { return sn.Pristine == 1 && sn.Idle == 2 })
	time.Sleep(30 * time.Millisecond)
	if sn := s.Snapshot(); sn.PristineStarts != 1 || sn.Evictions != 0 || sn.Pristine != 1 {
		t.Errorf("the idle bound evicted the pristine worker or the reserve restarted it: %+v", sn)
	}
	b := mustRegister(t, s, "B", "p", prof)
	if _, _, _, res := whoami(t, b); !res.Pristine {
		t.Errorf("B's first call did not take the pristine worker: %+v", res)
	}
	sn := waitSnap(t, s, "the bound keeps one used idle worker", func(sn Snapshot) bool { return sn.Idle-sn.Pristine == 1 })
	if sn.Evictions != 1 || sn.LaunchedCalls != 1 || sn.PristineCalls != 1 {
		t.Errorf("after B: %+v", sn)
	}
	if _, _, _, res := whoami(t, b); res.Cold {
		t.Error("the bound evicted B's worker, the most recently used, instead of A's")
	}
}

// TestCleanupFailureStopsAdmissions: an approved session whose cleanup fails stops the
// scheduler's admissions: the failure shows in the snapshot, a queued call ends with
// ErrFailed without executing, and new calls are refused.
func TestCleanupFailureStopsAdmissions(t *testing.T) {
	s, _ := processScheduler(t, Options{MemoryBudgetMiB: 64})
	approved := Profile{Name: "sleep", MemoryMiB: 64, Reuse: ReuseApprovedSessions}
	a, b := mustRegister(t, s, "A", "p", approved), mustRegister(t, s, "B", "p", approved)
	if sn := s.Snapshot(); sn.Runtime != RuntimeRunning || sn.Failure != nil {
		t.Fatalf("a new scheduler: %+v", sn)
	}
	taint := make(chan error, 1)
	go func() {
		_, err := a.Invoke(context.Background(), "sleep", []byte("30ms"))
		if err == nil {
			_, err = a.Invoke(context.Background(), "taint", nil)
		}
		taint <- err
	}()
	waitSnap(t, s, "A's first call runs", func(sn Snapshot) bool { return sn.Active == 1 })
	_, errB := b.Invoke(context.Background(), "echo", []byte("x"))
	if err := <-taint; err != nil {
		t.Fatal(err)
	}
	sn := waitSnap(t, s, "the scheduler failed", func(sn Snapshot) bool { return sn.Runtime == RuntimeFailed })
	if sn.Failure == nil || !strings.Contains(sn.Failure.Error(), "cleanup cannot remove") || sn.ReleaseFailures != 1 {
		t.Errorf("snapshot after the failed cleanup: %+v", sn)
	}
	if errB != nil {
		// B waited for A's worker, took it after A's first (clean) session: before the failure
		t.Errorf("B's call before the failure: %v", errB)
	}
	_, err := b.Invoke(context.Background(), "echo", []byte("y"))
	if !errors.Is(err, ErrFailed) {
		t.Errorf("a call after the failure: %v, want ErrFailed", err)
	}
	if sn := s.Snapshot(); sn.Rejected.Failed != 1 {
		t.Errorf("Rejected.Failed %d, want 1", sn.Rejected.Failed)
	}
}

// TestFailureEndsQueuedCalls drives the failure with a fake worker whose release fails,
// while a call waits for the releasing worker's memory: it ends with ErrFailed and never
// executes.
func TestFailureEndsQueuedCalls(t *testing.T) {
	h := newHarness(t, Options{MemoryBudgetMiB: 64})
	h.l.failRelease = true
	prof := Profile{Name: "p", MemoryMiB: 64, Reuse: ReuseApprovedSessions}
	a, err := h.s.Register("A", "p", prof, Normal)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.s.Register("B", "q", Profile{Name: "q", MemoryMiB: 64}, Normal)
	if err != nil {
		t.Fatal(err)
	}
	h.l.holdRelease = make(chan struct{})
	ra := h.invoke(a, "x")
	h.next().answer()
	if got := h.wait(ra); got.err != nil {
		t.Fatal(got.err)
	}
	rb := h.invoke(b, "y") // A's worker is releasing: no room
	h.waitFor("B is queued", func(s Snapshot) bool { return s.Queued == 1 && s.Releasing == 1 })
	close(h.l.holdRelease)
	got := h.wait(rb)
	if !errors.Is(got.err, ErrFailed) {
		t.Errorf("queued call after the failure: %v, want ErrFailed", got.err)
	}
	h.noCall()
	sn := h.s.Snapshot()
	if sn.Runtime != RuntimeFailed || sn.Failure == nil || sn.Queued != 0 || sn.ReleaseFailures != 1 {
		t.Errorf("snapshot: %+v", sn)
	}
}

// TestCallbacksAndGrants: a plugin's callback runs when granted, is refused when not, and
// a scheduled call from inside a callback is denied.
func TestCallbacksAndGrants(t *testing.T) {
	s, _ := processScheduler(t, Options{})
	other := mustRegister(t, s, "A", "other", Profile{Name: "sleep", MemoryMiB: 64})
	var nestedErr error
	cbs := Callbacks{
		"lookup": func(ctx context.Context, payload []byte) ([]byte, error) {
			return append([]byte("v:"), payload...), nil
		},
		"nested": func(ctx context.Context, payload []byte) ([]byte, error) {
			_, nestedErr = other.Invoke(ctx, "echo", payload)
			return []byte("done"), nil
		},
		"secret": func(ctx context.Context, payload []byte) ([]byte, error) { return []byte("leaked"), nil },
	}
	if _, err := s.RegisterWithCallbacks("A", "bad", Profile{Name: "sleep", MemoryMiB: 64}, Normal, cbs, []string{"missing"}); err == nil ||
		!strings.Contains(err.Error(), `grant "missing" names no callback`) {
		t.Errorf("a grant without a callback: %v", err)
	}
	p, err := s.RegisterWithCallbacks("A", "p", Profile{Name: "sleep", MemoryMiB: 64}, Normal, cbs, []string{"lookup", "nested"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Invoke(context.Background(), "callback", []byte("lookup:x"))
	if err != nil || string(out) != "v:x" {
		t.Errorf("granted callback: %q, %v", out, err)
	}
	out, err = p.Invoke(context.Background(), "callback", []byte("secret:x"))
	var pe *PluginError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "callback not granted") || string(out) == "leaked" {
		t.Errorf("ungranted callback: %q, %v", out, err)
	}
	if _, err := p.Invoke(context.Background(), "callback", []byte("nested:x")); err != nil {
		t.Errorf("nested callback: %v", err)
	}
	if !errors.Is(nestedErr, ErrCallbackScope) {
		t.Errorf("a scheduled call from a callback: %v, want ErrCallbackScope", nestedErr)
	}
	sn := s.Snapshot()
	if sn.Callbacks != 2 || sn.CallbackDenials != 1 || sn.Rejected.CallbackScope != 1 {
		t.Errorf("counters: callbacks %d, denials %d, scope rejections %d; want 2, 1, 1", sn.Callbacks, sn.CallbackDenials, sn.Rejected.CallbackScope)
	}
}

// TestHeavyDeclarationLimit: at most MaxHeavyRegistrations registrations are heavy at
// once; closing one makes room. Normal registrations are not limited by it.
func TestHeavyDeclarationLimit(t *testing.T) {
	h := newHarness(t, Options{MaxHeavyRegistrations: 1})
	first := h.register("A", "h1", Heavy)
	if _, err := h.s.Register("B", "h2", Profile{Name: "h2", MemoryMiB: 64}, Heavy); !errors.Is(err, ErrHeavyLimit) {
		t.Errorf("second heavy registration: %v, want ErrHeavyLimit", err)
	}
	h.register("B", "n", Normal)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	h.register("B", "h2", Heavy)
}

// TestFaultRecovery: a worker process that dies mid-call fails that call only; the
// scheduler keeps running, counts the crashed worker's exit, and the registration's next
// call starts a new process.
func TestFaultRecovery(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewProcessLauncher(exe)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Launcher: l})
	if err != nil {
		t.Fatal(err)
	}
	p := mustRegister(t, s, "A", "p", Profile{Name: "sleep", MemoryMiB: 64})
	_, pid1, _, _ := whoami(t, p)
	if _, err := p.Invoke(context.Background(), "crash", nil); err == nil {
		t.Fatal("a call whose worker died answered")
	}
	_, pid2, before, res := whoami(t, p)
	if pid2 == pid1 || before != "0" || !res.Cold {
		t.Errorf("after the crash: pid %s (was %s), %s calls before, cold %v; want a new process", pid2, pid1, before, res.Cold)
	}
	sn := waitSnap(t, s, "the crashed worker's exit is counted", func(sn Snapshot) bool { return sn.StopFailures == 1 })
	if sn.Runtime != RuntimeRunning || sn.Failed != 1 || sn.Starts != 2 {
		t.Errorf("after recovery: %+v", sn)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Close: %v, want the crashed worker's exit status", err)
	}
	if pids, err := Survivors(l.Token()); err != nil || len(pids) != 0 {
		t.Errorf("survivors %v, %v", pids, err)
	}
}

// TestHungWorkerStopsAdmissions: a worker whose stop fails with ErrWorkerHung is a
// cleanup failure: admissions stop, the snapshot says why, and Close reports it.
func TestHungWorkerStopsAdmissions(t *testing.T) {
	l := newFakeLauncher()
	l.auto, l.hangStop = true, true
	s, err := New(Options{MaxWorkers: 1, Launcher: l})
	if err != nil {
		t.Fatal(err)
	}
	a := mustRegister(t, s, "A", "p", Profile{Name: "p", MemoryMiB: 64})
	b := mustRegister(t, s, "B", "p", Profile{Name: "p", MemoryMiB: 64})
	if _, err := a.Invoke(context.Background(), "x", nil); err != nil {
		t.Fatal(err)
	}
	// B's call evicts A's idle worker, whose stop hangs; B was admitted before that and runs
	if _, err := b.Invoke(context.Background(), "y", nil); err != nil {
		t.Fatal(err)
	}
	sn := waitSnap(t, s, "the scheduler failed", func(sn Snapshot) bool { return sn.Runtime == RuntimeFailed })
	if !errors.Is(sn.Failure, ErrWorkerHung) || sn.StopFailures != 1 {
		t.Errorf("snapshot: %+v", sn)
	}
	if _, err := a.Invoke(context.Background(), "z", nil); !errors.Is(err, ErrFailed) {
		t.Errorf("a call after the failure: %v, want ErrFailed", err)
	}
	if err := s.Close(); !errors.Is(err, ErrWorkerHung) {
		t.Errorf("Close: %v, want the hung worker's error", err)
	}
}
