package pluginhost

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file holds the seed's contract measurements beyond experiment 40's lanes, as
// documented runs (docs/pluginhost.md pastes their output with the command and the host's
// load): the density pilot, the arrival-rate boundary, long-run memory and fault
// recovery. Every worker is a real process of this test binary. The tests here check what
// the runs rely on, never a time.

// contractMiB is the profile size of these runs, under a 256 MiB budget: four workers at
// once.
const contractMiB, contractBudget = 64, 256

// sleepProfile is the contract runs' profile under the reuse policy.
func sleepProfile(reuse ReusePolicy) Profile {
	return Profile{Name: "sleep", Version: "1", MemoryMiB: contractMiB, Reuse: reuse}
}

// registerTenants registers n tenants' plugin p, named prefix0 ... prefix(n-1).
func registerTenants(tb testing.TB, s *Scheduler, prefix string, n int, prof Profile) []*Plugin {
	tb.Helper()
	out := make([]*Plugin, n)
	for i := range out {
		out[i] = mustRegister(tb, s, fmt.Sprintf("%s%d", prefix, i), "p", prof)
	}
	return out
}

// callAll makes one call of op with payload on every plugin at once and waits for all.
func callAll(plugins []*Plugin, op, payload string) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Invoke(context.Background(), op, []byte(payload)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BenchmarkDensity is the density pilot: how the active working set (tenants calling at
// once, each with its own registration) changes what a call costs under a budget of four
// workers. One op is one round: every active tenant makes one 2 ms call at once. The
// registered count is a different question (BenchmarkRegistryDormant): dormant
// registrations cost nothing per call, an active working set beyond what the budget
// holds restarts processes unless approved-session reuse lets the workers move.
func BenchmarkDensity(b *testing.B) {
	for _, reuse := range []ReusePolicy{ReuseNone, ReuseApprovedSessions} {
		for _, active := range []int{2, 4, 8, 16} {
			name := fmt.Sprintf("reuse=%v/active=%d", reuse == ReuseApprovedSessions, active)
			b.Run(name, func(b *testing.B) { density(b, reuse, active) })
		}
	}
}

// density runs one density sub-benchmark.
func density(b *testing.B, reuse ReusePolicy, active int) {
	s, _ := processScheduler(b, Options{MemoryBudgetMiB: contractBudget})
	plugins := registerTenants(b, s, "t", active, sleepProfile(reuse))
	if err := callAll(plugins, "sleep", "2ms"); err != nil { // every tenant once: warm
		b.Fatal(err)
	}
	before := s.Snapshot()
	b.ResetTimer()
	for range b.N {
		if err := callAll(plugins, "sleep", "2ms"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after := s.Snapshot()
	calls := float64(b.N * active)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/calls, "ns/call")
	b.ReportMetric(calls/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(after.LaunchedCalls-before.LaunchedCalls)/calls, "launched/call")
	b.ReportMetric(float64(after.ReusedCalls-before.ReusedCalls)/calls, "reused/call")
}

// arrivalWorkers, arrivalExec and arrivalCalls shape the arrival-rate runs: four workers
// (the budget), calls of 4 ms, so the host completes at most 1000 calls a second; one op
// issues arrivalCalls calls open-loop at the load's rate over eight registrations.
const (
	arrivalWorkers = contractBudget / contractMiB
	arrivalExec    = 4 * time.Millisecond
	arrivalCalls   = 400
	arrivalRegs    = 8
	arrivalQueue   = 64
)

// BenchmarkArrivalRate finds the arrival-rate boundary: calls arrive open-loop (at fixed
// intervals, whatever the answers) at a share of the host's capacity, from 50% to 125%,
// over eight approved-reuse registrations, with a queue of 64. Below the boundary the
// queue time stays near zero; at it, it grows to several executions; beyond it the queue
// fills and calls are refused at once (busy). It reports the queue time's p50, p90 and p99,
// the busy share and the completed rate.
func BenchmarkArrivalRate(b *testing.B) {
	for _, pct := range []int{50, 75, 90, 100, 110, 125} {
		b.Run(fmt.Sprintf("load=%dpct", pct), func(b *testing.B) { arrivalRate(b, pct) })
	}
}

// arrivalRate runs one arrival-rate sub-benchmark.
func arrivalRate(b *testing.B, pct int) {
	s, _ := processScheduler(b, Options{MemoryBudgetMiB: contractBudget, MaxQueuedCalls: arrivalQueue})
	plugins := registerTenants(b, s, "t", arrivalRegs, sleepProfile(ReuseApprovedSessions))
	if err := callAll(plugins, "sleep", "0s"); err != nil {
		b.Fatal(err)
	}
	interval := arrivalExec * 100 / time.Duration(arrivalWorkers*pct)
	var (
		queue []time.Duration
		busy  int
	)
	b.ResetTimer()
	for range b.N {
		q, n := openLoop(b, plugins, interval)
		queue, busy = append(queue, q...), busy+n
	}
	b.StopTimer()
	slices.Sort(queue)
	total := float64(b.N * arrivalCalls)
	if len(queue) > 0 {
		b.ReportMetric(float64(queue[len(queue)/2].Microseconds())/1000, "queue-p50-ms")
		b.ReportMetric(float64(queue[len(queue)*9/10].Microseconds())/1000, "queue-p90-ms")
		b.ReportMetric(float64(queue[len(queue)*99/100].Microseconds())/1000, "queue-p99-ms")
	}
	b.ReportMetric(100*float64(busy)/total, "busy-pct")
	b.ReportMetric(float64(len(queue))/b.Elapsed().Seconds(), "completed/s")
	b.ReportMetric(1e9/float64(interval.Nanoseconds()), "offered/s")
}

// openLoop issues arrivalCalls calls round-robin over the plugins, one every interval
// (late ones at once, so the mean rate holds), and returns the completed calls' queue
// times and how many were refused as busy. Any other failure fails the run.
func openLoop(b *testing.B, plugins []*Plugin, interval time.Duration) ([]time.Duration, int) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		queue []time.Duration
		busy  int
		errs  []error
	)
	payload := []byte(arrivalExec.String())
	start := time.Now()
	for i := range arrivalCalls {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(p *Plugin) {
			defer wg.Done()
			res, err := p.InvokeMeasured(context.Background(), "sleep", payload)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrQueueFull):
				busy++
			case err != nil:
				errs = append(errs, err)
			default:
				queue = append(queue, res.QueueTime)
			}
		}(plugins[i%len(plugins)])
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return queue, busy
}

// longRunTenants and longRunCalls shape one round of the long run: that many new tenants
// register, make that many calls each, and close.
const longRunTenants, longRunCalls = 8, 4

// churnRound registers longRunTenants new tenants named after round, makes longRunCalls
// rounds of calls of all of them at once, and closes them.
func churnRound(tb testing.TB, s *Scheduler, round int, prof Profile) {
	tb.Helper()
	plugins := registerTenants(tb, s, fmt.Sprintf("r%d-", round), longRunTenants, prof)
	for range longRunCalls {
		if err := callAll(plugins, "echo", "x"); err != nil {
			tb.Fatal(err)
		}
	}
	for _, p := range plugins {
		if err := p.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLongRun is the long-run memory run: one op is one churn round (eight new
// tenants, four calls each, closed again) on one scheduler with approved-session reuse
// and a pristine reserve, so the same few worker processes serve every tenant for the
// whole run. It reports the host's live heap after the run against after the first round
// (heap-growth-KiB), and the growth of the workers' summed resident memory over the first
// and the second half of the run: a leak in the scheduler or in a long-lived worker shows
// as growth that rises with the op count, the Go runtime's heap settling in a worker as
// growth in the first half only.
func BenchmarkLongRun(b *testing.B) {
	s, l := processScheduler(b, Options{MemoryBudgetMiB: contractBudget, PristineReserve: 2})
	prof := sleepProfile(ReuseApprovedSessions)
	churnRound(b, s, -1, prof)
	heap0, rss0 := liveHeapKiB(), workersRSSKiB(b, l)
	rssHalf := rss0
	b.ResetTimer()
	for i := range b.N {
		churnRound(b, s, i, prof)
		if i == b.N/2 {
			b.StopTimer()
			rssHalf = workersRSSKiB(b, l)
			b.StartTimer()
		}
	}
	b.StopTimer()
	heap1, rss1 := liveHeapKiB(), workersRSSKiB(b, l)
	sn := s.Snapshot()
	b.ReportMetric(float64(b.N*longRunTenants*longRunCalls), "calls")
	b.ReportMetric(heap1-heap0, "heap-growth-KiB")
	b.ReportMetric(heap1, "heap-KiB")
	b.ReportMetric(rssHalf-rss0, "worker-rss-growth-1st-half-KiB")
	b.ReportMetric(rss1-rssHalf, "worker-rss-growth-2nd-half-KiB")
	b.ReportMetric(rss1/float64(max(sn.Workers, 1)), "worker-rss-KiB")
	b.ReportMetric(float64(sn.Starts), "process-starts")
}

// liveHeapKiB is the live heap after a collection, in KiB.
func liveHeapKiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / 1024
}

// workersRSSKiB sums the resident memory of the launcher's live workers, in KiB.
func workersRSSKiB(tb testing.TB, l *ProcessLauncher) float64 {
	tb.Helper()
	pids, err := Survivors(l.Token())
	if err != nil {
		tb.Fatal(err)
	}
	sum := 0.0
	for _, pid := range pids {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue // exited meanwhile
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kib, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
				sum += kib
			}
		}
		f.Close()
	}
	return sum
}

// TestLongRunBounded: after many churn rounds the scheduler holds nothing of the closed
// tenants (registrations, tenants, queues, demand) and no more workers than the budget,
// and the same few processes served every call. What BenchmarkLongRun measures as memory
// rests on this.
func TestLongRunBounded(t *testing.T) {
	s, l := processScheduler(t, Options{MemoryBudgetMiB: contractBudget, PristineReserve: 2})
	prof := sleepProfile(ReuseApprovedSessions)
	const rounds = 40
	for i := range rounds {
		churnRound(t, s, i, prof)
	}
	waitSnap(t, s, "the host is quiet", func(sn Snapshot) bool { return sn.Active == 0 && sn.Releasing == 0 && sn.PristineStarting == 0 })
	s.mu.Lock()
	regs, tenants, pending, demand, idle := len(s.regs), len(s.tenants), len(s.pending), len(s.demand), s.idle.Len()
	s.mu.Unlock()
	if regs != 0 || tenants != 0 || pending != 0 || demand != 1 || idle > arrivalWorkers {
		t.Errorf("after %d rounds the scheduler holds %d registrations, %d tenants, %d pending, %d demand entries, %d idle workers; want 0, 0, 0, 1, at most %d",
			rounds, regs, tenants, pending, demand, idle, arrivalWorkers)
	}
	sn := s.Snapshot()
	if max := uint64(longRunTenants + 2); sn.Starts > max || sn.ReusedCalls < rounds*longRunTenants*longRunCalls/2 {
		t.Errorf("%d process starts (want at most %d) and %d reused calls over %d calls", sn.Starts, max, sn.ReusedCalls, sn.Calls)
	}
	if pids, err := Survivors(l.Token()); err != nil || len(pids) > sn.Workers {
		t.Errorf("%d worker processes alive for %d workers: %v", len(pids), sn.Workers, err)
	}
}

// faultTenants is how many tenants share the host in the fault runs: one whose plugin
// crashes, the others calling beside it.
const faultTenants = 4

// BenchmarkFaultRecovery measures recovery from a plugin that dies mid-call: one op is
// one fault. Tenant f0's worker process exits during its call while the other tenants'
// calls run; f0's next call starts a new process. It reports the recovery time (f0's
// next call, its process start included), the crashed calls (1 per op) and the other
// tenants' failed calls (0).
func BenchmarkFaultRecovery(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewProcessLauncher(exe)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Options{MemoryBudgetMiB: contractBudget, Launcher: l})
	if err != nil {
		b.Fatal(err)
	}
	plugins := registerTenants(b, s, "f", faultTenants, sleepProfile(ReuseNone))
	if err := callAll(plugins, "sleep", "0s"); err != nil {
		b.Fatal(err)
	}
	var recovery time.Duration
	othersFailed := 0
	b.ResetTimer()
	for range b.N {
		d, n := fault(b, plugins)
		recovery += d
		othersFailed += n
	}
	b.StopTimer()
	sn := s.Snapshot()
	b.ReportMetric(float64(recovery.Nanoseconds())/float64(b.N), "recovery-ns/op")
	b.ReportMetric(float64(sn.Failed)/float64(b.N), "crashed-calls/op")
	b.ReportMetric(float64(othersFailed)/float64(b.N), "others-failed/op")
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		b.Errorf("Close: %v, want the crashed workers' exit status", err)
	}
	if pids, err := Survivors(l.Token()); err != nil || len(pids) != 0 {
		b.Errorf("survivors %v, %v", pids, err)
	}
}

// fault runs one fault: the other tenants call (sleep 4 ms) while f0's call crashes its
// worker; then f0 calls again. It returns f0's recovery call's elapsed time and how many
// of the other tenants' calls failed.
func fault(b *testing.B, plugins []*Plugin) (time.Duration, int) {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed int
	)
	for _, p := range plugins[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Invoke(context.Background(), "sleep", []byte("4ms")); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	if _, err := plugins[0].Invoke(context.Background(), "crash", nil); err == nil {
		b.Fatal("a call whose worker died answered")
	}
	res, err := plugins[0].InvokeMeasured(context.Background(), "echo", []byte("x"))
	if err != nil || !res.Cold {
		b.Fatalf("f0's call after the crash: cold %v, %v; want a new process", res.Cold, err)
	}
	wg.Wait()
	return res.Elapsed, failed
}

// TestStopErrorsBounded: a scheduler whose plugins crash again and again keeps only the
// first maxStopErrs stop errors for Close and counts the rest, and it keeps serving.
func TestStopErrorsBounded(t *testing.T) {
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
	p := mustRegister(t, s, "A", "p", sleepProfile(ReuseNone))
	const crashes = maxStopErrs + 4
	for range crashes {
		if _, err := p.Invoke(context.Background(), "crash", nil); err == nil {
			t.Fatal("a call whose worker died answered")
		}
	}
	if _, err := p.Invoke(context.Background(), "echo", []byte("x")); err != nil {
		t.Fatalf("the call after %d crashes: %v", crashes, err)
	}
	waitSnap(t, s, "every crash is counted", func(sn Snapshot) bool { return sn.StopFailures == crashes })
	s.mu.Lock()
	kept := len(s.stopErrs)
	s.mu.Unlock()
	err = s.Close()
	if kept != maxStopErrs || err == nil || !strings.Contains(err.Error(), "and 4 more workers whose stop failed") {
		t.Errorf("kept %d stop errors (want %d); Close: %v", kept, maxStopErrs, err)
	}
	if pids, err := Survivors(l.Token()); err != nil || len(pids) != 0 {
		t.Errorf("survivors %v, %v", pids, err)
	}
}
