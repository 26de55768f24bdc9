package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sched "github.com/flipbench/flipbench/examples/pluginhost"
)

const (
	// budgetMiB is the host's memory budget, the only admission limit (no worker
	// ceiling). The profiles are sized so that the noisy tenant's four workers fit
	// (64+64+64+48 = 240 MiB) and a light tenant's 64 MiB worker does not fit beside
	// them: four workers run at once, as four slots would allow, but because of memory.
	budgetMiB = 256
	// slots is how many workers the flood runs at once under that budget (not a setting).
	slots = 4
	// bigMiB and smallMiB are the two profile sizes.
	bigMiB, smallMiB = 64, 48
	// pristineReserve is the reserve's cap in the settings that have one.
	pristineReserve = 2
	// headroomMiB is the budget of the NoisyThroughput reserve pair: the lane's whole
	// concurrent demand (the noisy tenant's 240 MiB and two light tenants' 64 MiB each,
	// 368) and the reserve's two targets (one 64 and one 48 MiB worker, 112) fit in it
	// (480), so the reserve never has to give way and no call waits for memory.
	headroomMiB = 512
	// idleBound bounds the used idle workers in the Thrash reserve pair: two of them
	// (at most 128 MiB) leave room under the 256 MiB budget for the reserve's two
	// targets (112 MiB) between samples, while the six pairs (336 MiB) still do not fit.
	idleBound = 2
	// noisyPlugins and floodDepth shape the flood: eight calls to each of the noisy
	// tenant's four registrations, 32 in all, 28 of them queued behind the four running.
	noisyPlugins = 4
	floodDepth   = 8
	floodCalls   = noisyPlugins * floodDepth
	// callSleep is a flood call's execution time; lightSleep a light call's; thrashSleep
	// a Thrash call's.
	callSleep   = "4ms"
	lightSleep  = "1ms"
	thrashSleep = "2ms"
	// thrashTenants x thrashPlugins pairs share the slots in Thrash, thrashDepth calls
	// each per sample.
	thrashTenants = 3
	thrashPlugins = 2
	thrashDepth   = 3
	// lightCalls is how many calls each of the two light tenants makes in the
	// throughput lanes.
	lightCalls = 2
	// attempts bounds how often a sample's flood is started again when the state was
	// not reached.
	attempts = 20
)

// setting is a host configuration the lanes run under.
type setting struct {
	// reuse turns on approved-session reuse on every profile. Off: every worker stays
	// bound to its registration and each cold call starts a process or takes a pristine
	// one.
	reuse bool
	// reserve is the pristine reserve's cap; 0: no reserve.
	reserve int
	// budget is the memory budget in MiB, the only admission limit.
	budget int
	// maxIdle bounds the used idle workers by count; 0: only the budget bounds them.
	maxIdle int
}

// The lanes' settings: the default (reuse and the reserve); the one without either (the
// lanes named ...NoReuse), the "before" of the cold calls; and the two pairs in which the
// seed's rule leaves the reserve room to work, each with and without it (the lanes named
// ...Reserve and ...NoReserve): a budget with headroom above the noisy lane's demand, and
// the Thrash budget with a bounded idle cache. Neither pair has reuse, the seed's
// default for a deployment whose operator has not reviewed it.
var (
	withReuse          = setting{reuse: true, reserve: pristineReserve, budget: budgetMiB}
	noReuse            = setting{budget: budgetMiB}
	headroomReserve    = setting{reserve: pristineReserve, budget: headroomMiB}
	headroomNoReserve  = setting{budget: headroomMiB}
	idleBoundReserve   = setting{reserve: pristineReserve, budget: budgetMiB, maxIdle: idleBound}
	idleBoundNoReserve = setting{budget: budgetMiB, maxIdle: idleBound}
)

// String describes the setting for the lanes' stderr line and the tests' names.
func (c setting) String() string {
	return fmt.Sprintf("budget %d MiB, no worker ceiling, approved-session reuse %v, pristine reserve %d, used idle workers at most %d (0: unbounded)",
		c.budget, c.reuse, c.reserve, c.maxIdle)
}

// profile returns a plugin profile of mib MiB under the setting.
func (c setting) profile(mib int) sched.Profile {
	p := sched.Profile{Name: "sleep", Version: "1", MemoryMiB: mib}
	if c.reuse {
		p.Reuse = sched.ReuseApprovedSessions
	}
	return p
}

// options returns the scheduler options of the setting.
func (c setting) options(policy sched.Policy, l sched.Launcher) sched.Options {
	return sched.Options{MemoryBudgetMiB: c.budget, Policy: policy, Launcher: l,
		PristineReserve: c.reserve, MaxIdleWorkers: c.maxIdle}
}

// noisyMiB is the size of the noisy tenant's registration i.
func noisyMiB(i int) int {
	if i == noisyPlugins-1 {
		return smallMiB
	}
	return bigMiB
}

// thrashMiB is the size of a thrash tenant's plugin i.
func thrashMiB(i int) int {
	if i == 0 {
		return bigMiB
	}
	return smallMiB
}

// fixture is the scheduler and registrations shared by every sample of the lane in this
// process.
type fixture struct {
	cfg    setting
	s      *sched.Scheduler
	l      *sched.ProcessLauncher
	noisy  []*sched.Plugin
	thrash []*sched.Plugin
	lights int // light tenants registered so far, to name the next one
	// startsMark is the scheduler's PristineStarts at the end of the last sample: the
	// reserve replenishes between samples, so a sample is charged the reserve's starts
	// since the previous one ended.
	startsMark uint64
	err        error
}

// The process-wide fixture: testing calls the benchmark function once per sample and
// nothing else survives between samples.
var (
	sharedOnce sync.Once
	shared     *fixture
)

// TestMain serves calls when started as a worker; otherwise it runs the lanes, closes the
// scheduler and fails the process when a worker process outlives it.
func TestMain(m *testing.M) {
	if sched.IsWorker(os.Getenv) {
		if err := sched.Serve(os.Stdin, os.Stdout, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if shared != nil && shared.s != nil {
		if err := shared.close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// setup returns the shared fixture, building it on first use, and stops the benchmark
// timer for good: the lanes time with the scheduler's measurements or a stopwatch.
func setup(b *testing.B, cfg setting) *fixture {
	b.Helper()
	b.StopTimer()
	sharedOnce.Do(func() {
		shared = newFixture(sched.PolicyDefault, cfg)
		if shared.err == nil {
			// The workload and the policy in force, once per process: the receipt keeps
			// every run's stderr tail, so each run records what it measured.
			exe, _ := os.Executable()
			fmt.Fprintf(os.Stderr, "pluginhost lanes: policy %s; %s; profiles %d and %d MiB; "+
				"flood %d calls (%d registrations x %d) of sleep %s; light calls sleep %s; thrash %d pairs x %d calls of sleep %s; "+
				"workers are processes of %s; GOMAXPROCS %d, %d CPUs\n",
				shared.s.Policy(), cfg, bigMiB, smallMiB,
				floodCalls, noisyPlugins, floodDepth, callSleep, lightSleep, thrashTenants*thrashPlugins, thrashDepth, thrashSleep,
				filepath.Base(exe), runtime.GOMAXPROCS(0), runtime.NumCPU())
		}
	})
	if shared.err == nil && shared.cfg != cfg {
		b.Fatalf("this process's lanes were set up as %+v, not %+v: run one lane per process", shared.cfg, cfg)
	}
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	return shared
}

// newFixture starts a scheduler with the policy (PolicyDefault: the build's) whose
// workers are processes of this test binary, and registers the lanes' tenants.
func newFixture(policy sched.Policy, cfg setting) *fixture {
	f := &fixture{cfg: cfg}
	exe, err := os.Executable()
	if err != nil {
		f.err = err
		return f
	}
	if f.l, f.err = sched.NewProcessLauncher(exe); f.err != nil {
		return f
	}
	if f.s, f.err = sched.New(cfg.options(policy, f.l)); f.err != nil {
		return f
	}
	for i := range noisyPlugins {
		p, err := f.s.Register("noisy", fmt.Sprintf("p%d", i), cfg.profile(noisyMiB(i)), sched.Normal)
		if err != nil {
			f.err = err
			return f
		}
		f.noisy = append(f.noisy, p)
	}
	for t := range thrashTenants {
		for i := range thrashPlugins {
			p, err := f.s.Register(fmt.Sprintf("thrash%d", t), fmt.Sprintf("q%d", i), cfg.profile(thrashMiB(i)), sched.Normal)
			if err != nil {
				f.err = err
				return f
			}
			f.thrash = append(f.thrash, p)
		}
	}
	return f
}

// close closes the scheduler and checks that no worker process survived it.
func (f *fixture) close() error {
	err := f.s.Close()
	pids, perr := sched.Survivors(f.l.Token())
	if perr != nil {
		return errors.Join(err, perr)
	}
	if len(pids) > 0 {
		err = errors.Join(err, fmt.Errorf("worker processes still running after the lanes: %v", pids))
	}
	return err
}

// light registers a light tenant never seen before.
func (f *fixture) light(tb testing.TB) *sched.Plugin {
	tb.Helper()
	f.lights++
	p, err := f.s.Register(fmt.Sprintf("light%d", f.lights), "p", f.cfg.profile(bigMiB), sched.Normal)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// batch is a group of calls running on their own goroutines.
type batch struct {
	wg       sync.WaitGroup
	finished atomic.Int32
	mu       sync.Mutex
	err      error
}

// issue starts one call of p on a new goroutine and returns once the scheduler has
// accepted it, so successive issues arrive in the order they are made. It spins on the
// snapshot (no sleep): the whole flood is issued within a fraction of one call's
// execution.
func (u *batch) issue(tb testing.TB, f *fixture, p *sched.Plugin, payload string) {
	tb.Helper()
	before := f.s.Snapshot().Calls
	u.start(p, payload, 1)
	deadline := time.Now().Add(10 * time.Second)
	for f.s.Snapshot().Calls == before {
		if time.Now().After(deadline) {
			tb.Fatalf("a call of %s/%s never reached the scheduler", p.Tenant(), p.Name())
		}
		runtime.Gosched()
	}
}

// start issues calls of p, one after another, on a new goroutine.
func (u *batch) start(p *sched.Plugin, payload string, calls int) {
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for range calls {
			_, err := p.Invoke(context.Background(), "sleep", []byte(payload))
			u.finished.Add(1)
			if err != nil {
				u.mu.Lock()
				u.err = errors.Join(u.err, fmt.Errorf("%s/%s: %w", p.Tenant(), p.Name(), err))
				u.mu.Unlock()
				return
			}
		}
	}()
}

// wait waits for every call of the batch and fails the lane if one failed.
func (u *batch) wait(tb testing.TB) {
	tb.Helper()
	u.wg.Wait()
	if u.err != nil {
		tb.Fatal(u.err)
	}
}

// await polls the scheduler until cond holds, failing the lane if it never does. It only
// bounds a wait for goroutines to reach the scheduler; it never decides a timed value.
func (f *fixture) await(tb testing.TB, what string, cond func(sched.Snapshot) bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := f.s.Snapshot()
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s; snapshot %+v", what, s)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// settle brings the noisy tenant back to its starting residency, untimed: one call to each
// of its registrations at once, so each holds an idle worker, and nothing queued.
func (f *fixture) settle(tb testing.TB) {
	tb.Helper()
	u := &batch{}
	for _, p := range f.noisy {
		u.start(p, "0s", 1)
	}
	u.wait(tb)
	f.await(tb, "the noisy tenant's workers are idle", func(s sched.Snapshot) bool {
		return s.Active == 0 && s.Queued == 0 && s.Releasing == 0 && s.PristineStarting == 0 && s.Idle-s.Pristine == noisyPlugins
	})
}

// flood issues the 32 flood calls, in round-robin order over the noisy registrations
// (each accepted before the next is issued, so every sample queues them alike), and waits until the scheduler reports all of them
// accepted, four running and 28 queued, none finished. When a call finished first, the
// flood is drained, the residency settled and the flood started again (retries counts
// that). It returns the batch and the time its first call was issued.
func (f *fixture) flood(tb testing.TB, retries *int) (*batch, time.Time) {
	tb.Helper()
	for range attempts {
		before := f.s.Snapshot()
		u := &batch{}
		start := time.Now()
		for range floodDepth {
			for _, p := range f.noisy {
				u.issue(tb, f, p, callSleep)
			}
		}
		reached := false
		f.await(tb, "the flood is queued", func(s sched.Snapshot) bool {
			if u.finished.Load() > 0 || s.Completed+s.Failed > before.Completed+before.Failed {
				return true // too late
			}
			reached = s.Calls-before.Calls == floodCalls && s.Active == slots && s.Queued == floodCalls-slots
			return reached
		})
		if reached {
			return u, start
		}
		u.wait(tb)
		*retries++
		f.settle(tb)
	}
	tb.Fatalf("in %d attempts a flood call always finished before the flood was queued; the host is too busy for this lane", attempts)
	return nil, time.Time{}
}

// meter reports the scheduler's counters over the measured part of the samples.
type meter struct {
	cold, launched, pristine, reused, evictions, pristineStarts uint64
	retries                                                     int
	before                                                      sched.Snapshot
}

// begin starts counting.
func (m *meter) begin(f *fixture) { m.before = f.s.Snapshot() }

// end stops counting.
func (m *meter) end(f *fixture) {
	s := f.s.Snapshot()
	m.cold += s.ColdCalls - m.before.ColdCalls
	m.launched += s.LaunchedCalls - m.before.LaunchedCalls
	m.pristine += s.PristineCalls - m.before.PristineCalls
	m.reused += s.ReusedCalls - m.before.ReusedCalls
	m.evictions += s.Evictions - m.before.Evictions
	m.pristineStarts += s.PristineStarts - f.startsMark
	f.startsMark = s.PristineStarts
}

// report reports cold-calls/op (of them launched-calls/op started their own process and
// pristine-calls/op took a pristine one), reused-calls/op, evictions/op,
// pristine-starts/op (the reserve's starts since the previous sample ended, replenishing
// between samples included; they are off every call's path, and with launched-calls/op
// they are all the process starts a sample costs) and retries/op.
func (m *meter) report(b *testing.B) {
	b.ReportMetric(float64(m.cold)/float64(b.N), "cold-calls/op")
	b.ReportMetric(float64(m.launched)/float64(b.N), "launched-calls/op")
	b.ReportMetric(float64(m.pristine)/float64(b.N), "pristine-calls/op")
	b.ReportMetric(float64(m.reused)/float64(b.N), "reused-calls/op")
	b.ReportMetric(float64(m.evictions)/float64(b.N), "evictions/op")
	b.ReportMetric(float64(m.pristineStarts)/float64(b.N), "pristine-starts/op")
	b.ReportMetric(float64(m.retries)/float64(b.N), "retries/op")
}

// lightFirstCall runs one sample of LightFirstCall: a fresh light tenant's first call
// issued while the flood waits.
func lightFirstCall(tb testing.TB, f *fixture, m *meter) sched.Result {
	tb.Helper()
	f.settle(tb)
	light := f.light(tb)
	m.begin(f)
	fl, _ := f.flood(tb, &m.retries)
	res, err := light.InvokeMeasured(context.Background(), "sleep", []byte(lightSleep))
	if err != nil {
		tb.Fatal(err)
	}
	fl.wait(tb)
	m.end(f)
	if err := light.Close(); err != nil {
		tb.Fatal(err)
	}
	return res
}

// BenchmarkLightFirstCall reports the queue time of a light tenant's first call issued
// while a noisy tenant's flood waits.
func BenchmarkLightFirstCall(b *testing.B) {
	f := setup(b, withReuse)
	var (
		m           meter
		queue, exec time.Duration
		ahead       int
	)
	for range b.N {
		res := lightFirstCall(b, f, &m)
		queue += res.QueueTime
		exec += res.ExecTime
		ahead += res.AdmittedAhead
	}
	b.ReportMetric(float64(queue.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(ahead)/float64(b.N), "admitted-ahead/op")
	b.ReportMetric(float64(exec.Nanoseconds())/float64(b.N), "light-exec-ns/op")
	m.report(b)
}

// mixed runs one sample of the throughput lanes: the flood, then two light tenants
// making two calls each once it waits. It returns the time from the flood's first call
// to the flood's last answer, and to the last answer of all.
func mixed(tb testing.TB, f *fixture, m *meter) (noisy, total time.Duration) {
	tb.Helper()
	f.settle(tb)
	lights := []*sched.Plugin{f.light(tb), f.light(tb)}
	m.begin(f)
	fl, start := f.flood(tb, &m.retries)
	lb := &batch{}
	for _, l := range lights {
		lb.start(l, callSleep, lightCalls)
	}
	fl.wg.Wait()
	noisy = time.Since(start)
	lb.wg.Wait()
	total = time.Since(start)
	fl.wait(tb)
	lb.wait(tb)
	m.end(f)
	for _, l := range lights {
		if err := l.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return noisy, total
}

// BenchmarkNoisyThroughput times the flood, with two light tenants' calls among it, until
// the flood's last call is answered.
func BenchmarkNoisyThroughput(b *testing.B) { noisyThroughput(b, withReuse) }

// BenchmarkNoisyThroughputNoReuse is NoisyThroughput without approved-session reuse or
// the pristine reserve: every cold call starts a process.
func BenchmarkNoisyThroughputNoReuse(b *testing.B) { noisyThroughput(b, noReuse) }

// noisyThroughput runs NoisyThroughput under cfg.
func noisyThroughput(b *testing.B, cfg setting) {
	f := setup(b, cfg)
	var (
		m   meter
		sum time.Duration
	)
	for range b.N {
		noisy, _ := mixed(b, f, &m)
		sum += noisy
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op")
	m.report(b)
}

// BenchmarkNoisyThroughputReserve is NoisyThroughput without reuse, under a budget with
// headroom for the whole workload and the pristine reserve: the first light tenant's
// first call takes the reserve's ready 64 MiB worker instead of starting a process.
func BenchmarkNoisyThroughputReserve(b *testing.B) { noisyThroughput(b, headroomReserve) }

// BenchmarkNoisyThroughputNoReserve is NoisyThroughputReserve without the reserve: both
// light tenants' first calls start a process.
func BenchmarkNoisyThroughputNoReserve(b *testing.B) { noisyThroughput(b, headroomNoReserve) }

// BenchmarkTotalThroughput times the same workload until every call is answered.
func BenchmarkTotalThroughput(b *testing.B) {
	f := setup(b, withReuse)
	var (
		m   meter
		sum time.Duration
	)
	for range b.N {
		_, total := mixed(b, f, &m)
		sum += total
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op")
	m.report(b)
}

// thrash runs one sample of Thrash: once nothing runs, releases or starts, three calls to
// each of the six pairs, issued in round-robin order at once, timed until all are
// answered. It checks that all 18 were accepted.
func thrash(tb testing.TB, f *fixture, m *meter) time.Duration {
	tb.Helper()
	f.await(tb, "the host is quiet", func(s sched.Snapshot) bool {
		return s.Active == 0 && s.Queued == 0 && s.Releasing == 0 && s.PristineStarting == 0
	})
	m.begin(f)
	u := &batch{}
	start := time.Now()
	for range thrashDepth {
		for _, p := range f.thrash {
			u.issue(tb, f, p, thrashSleep)
		}
	}
	u.wg.Wait()
	d := time.Since(start)
	u.wait(tb)
	m.end(f)
	if n := f.s.Snapshot().Calls - m.before.Calls; n != thrashDepth*thrashTenants*thrashPlugins {
		tb.Fatalf("%d calls accepted in a Thrash sample, want %d", n, thrashDepth*thrashTenants*thrashPlugins)
	}
	return d
}

// BenchmarkThrash times 18 calls of six pairs on four slots.
func BenchmarkThrash(b *testing.B) { benchThrash(b, withReuse) }

// BenchmarkThrashNoReuse is Thrash without approved-session reuse or the pristine
// reserve.
func BenchmarkThrashNoReuse(b *testing.B) { benchThrash(b, noReuse) }

// BenchmarkThrashReserve is Thrash without reuse, with the used idle workers bounded to
// two and the pristine reserve, which fills the budget the bound leaves free between
// samples: a sample's first cold calls of each profile take a ready worker.
func BenchmarkThrashReserve(b *testing.B) { benchThrash(b, idleBoundReserve) }

// BenchmarkThrashNoReserve is ThrashReserve without the reserve.
func BenchmarkThrashNoReserve(b *testing.B) { benchThrash(b, idleBoundNoReserve) }

// benchThrash runs Thrash under cfg.
func benchThrash(b *testing.B, cfg setting) {
	f := setup(b, cfg)
	var (
		m   meter
		sum time.Duration
	)
	for range b.N {
		sum += thrash(b, f, &m)
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op")
	m.report(b)
}

// singleTenant runs one sample of SingleTenant: the flood alone, timed until all of it
// is answered.
func singleTenant(tb testing.TB, f *fixture, m *meter) time.Duration {
	tb.Helper()
	f.settle(tb)
	m.begin(f)
	fl, start := f.flood(tb, &m.retries)
	fl.wg.Wait()
	d := time.Since(start)
	fl.wait(tb)
	m.end(f)
	return d
}

// BenchmarkSingleTenant times the noisy tenant's flood with no other tenant.
func BenchmarkSingleTenant(b *testing.B) {
	f := setup(b, withReuse)
	var (
		m   meter
		sum time.Duration
	)
	for range b.N {
		sum += singleTenant(b, f, &m)
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op")
	m.report(b)
}
