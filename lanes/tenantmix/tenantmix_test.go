package tenantmix

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	sched "github.com/flipbench/flipbench/examples/pluginhost"
	"github.com/flipbench/flipbench/probe"
)

const (
	// budgetMiB and profileMiB are the suite's host: a 256 MiB budget and no worker
	// ceiling, so four 64 MiB workers run at once (slots), bound by memory as in
	// experiment 40's lanes. The suite keeps one profile size and no reuse, so what it
	// counts (calls waiting behind another tenant's) depends on admission order alone.
	budgetMiB  = 256
	profileMiB = 64
	slots      = budgetMiB / profileMiB
)

// host is this lane process's scheduler.
type host struct {
	s *sched.Scheduler
	l *sched.ProcessLauncher
}

// The process-wide scheduler, closed by TestMain after the lane.
var (
	sharedOnce sync.Once
	shared     *host
	sharedErr  error
)

// TestMain serves calls when started as a worker; otherwise it runs the lane, closes the
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
	if shared != nil {
		if err := shared.close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// newHost starts a scheduler whose workers are processes of this test binary.
func newHost() (*host, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	l, err := sched.NewProcessLauncher(exe)
	if err != nil {
		return nil, err
	}
	s, err := sched.New(sched.Options{MemoryBudgetMiB: budgetMiB, Launcher: l})
	if err != nil {
		return nil, err
	}
	return &host{s: s, l: l}, nil
}

// close closes the scheduler and checks that no worker process survived it.
func (h *host) close() error {
	err := h.s.Close()
	pids, perr := sched.Survivors(h.l.Token())
	if perr != nil {
		return errors.Join(err, perr)
	}
	if len(pids) > 0 {
		err = errors.Join(err, fmt.Errorf("worker processes still running after the lane: %v", pids))
	}
	return err
}

// lane runs work as one operation per b.N and reports the probe counters' change over
// all of it.
func lane(b *testing.B, work func(h *host, reg *registry) error) {
	b.Helper()
	b.StopTimer()
	sharedOnce.Do(func() {
		shared, sharedErr = newHost()
		if sharedErr == nil {
			exe, _ := os.Executable()
			fmt.Fprintf(os.Stderr, "tenantmix suite: policy %s; budget %d MiB, no worker ceiling, %d MiB profiles (%d workers fit); workers are processes of %s; GOMAXPROCS %d, %d CPUs\n",
				shared.s.Policy(), budgetMiB, profileMiB, slots, filepath.Base(exe), runtime.GOMAXPROCS(0), runtime.NumCPU())
		}
	})
	if sharedErr != nil {
		b.Fatal(sharedErr)
	}
	reg := &registry{h: shared, plugins: map[string]*sched.Plugin{}}
	before := probe.Take()
	b.StartTimer()
	for range b.N {
		if err := work(shared, reg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	d := probe.Take().Sub(before)
	for _, c := range probe.PluginHostCounters() {
		b.ReportMetric(float64(d.Get(c)), c.Name())
	}
}

// registry registers each (tenant, plugin) pair on first use.
type registry struct {
	h       *host
	mu      sync.Mutex
	plugins map[string]*sched.Plugin
}

// get returns the registration of tenant/plugin.
func (r *registry) get(tenant, plugin string) (*sched.Plugin, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := tenant + "/" + plugin
	if p, ok := r.plugins[key]; ok {
		return p, nil
	}
	p, err := r.h.s.Register(tenant, plugin, sched.Profile{Name: "sleep", MemoryMiB: profileMiB}, sched.Normal)
	if err != nil {
		return nil, err
	}
	r.plugins[key] = p
	return p, nil
}

// group runs functions on their own goroutines and collects their errors.
type group struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// go runs f on a new goroutine.
func (g *group) run(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, err)
			g.mu.Unlock()
		}
	}()
}

// wait waits for every function and returns their errors.
func (g *group) wait() error {
	g.wg.Wait()
	return errors.Join(g.errs...)
}

// sleepCall makes one call of d to tenant/plugin.
func sleepCall(reg *registry, tenant, plugin string, d time.Duration) error {
	p, err := reg.get(tenant, plugin)
	if err != nil {
		return err
	}
	_, err = p.Invoke(context.Background(), "sleep", []byte(d.String()))
	return err
}

// loop makes n calls of d to tenant/plugin, pausing think between them.
func loop(reg *registry, tenant, plugin string, n int, d, think time.Duration) error {
	for i := range n {
		if i > 0 && think > 0 {
			time.Sleep(think)
		}
		if err := sleepCall(reg, tenant, plugin, d); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSteady: four tenants, two plugins each, closed loops slightly above capacity.
func BenchmarkSteady(b *testing.B) {
	lane(b, func(h *host, reg *registry) error {
		var g group
		for t := range 4 {
			for p := range 2 {
				g.run(func() error {
					return loop(reg, fmt.Sprintf("steady%d", t), fmt.Sprintf("p%d", p), 12, 3*time.Millisecond, 2*time.Millisecond)
				})
			}
		}
		return g.wait()
	})
}

// BenchmarkBursty: four mostly idle tenants firing bursts of six calls at seeded times.
func BenchmarkBursty(b *testing.B) {
	lane(b, func(h *host, reg *registry) error {
		rng := rand.New(rand.NewPCG(40, 1))
		var g group
		for t := range 4 {
			offsets := make([]time.Duration, 3)
			for i := range offsets {
				offsets[i] = time.Duration(rng.IntN(240)) * time.Millisecond
			}
			tenant := fmt.Sprintf("bursty%d", t)
			g.run(func() error {
				start := time.Now()
				var bursts group
				for _, off := range sortDurations(offsets) {
					time.Sleep(time.Until(start.Add(off)))
					for p := range 2 {
						for range 3 {
							bursts.run(func() error { return sleepCall(reg, tenant, fmt.Sprintf("p%d", p), 3*time.Millisecond) })
						}
					}
				}
				return bursts.wait()
			})
		}
		return g.wait()
	})
}

// BenchmarkNoisyNeighbour: one tenant holds every slot with back-to-back calls while three
// quiet tenants make occasional calls.
func BenchmarkNoisyNeighbour(b *testing.B) {
	lane(b, func(h *host, reg *registry) error {
		var g group
		for p := range 4 {
			g.run(func() error { return loop(reg, "noisy", fmt.Sprintf("p%d", p), 10, 3*time.Millisecond, 0) })
		}
		for q := range 3 {
			g.run(func() error {
				time.Sleep(time.Duration(q+1) * 3 * time.Millisecond)
				return loop(reg, fmt.Sprintf("quiet%d", q), "p", 4, 3*time.Millisecond, 15*time.Millisecond)
			})
		}
		return g.wait()
	})
}

// BenchmarkManySmallTenants: sixteen tenants with one plugin and three calls each.
func BenchmarkManySmallTenants(b *testing.B) {
	lane(b, func(h *host, reg *registry) error {
		rng := rand.New(rand.NewPCG(40, 2))
		var g group
		for t := range 16 {
			pauses := make([]time.Duration, 3)
			for i := range pauses {
				pauses[i] = time.Duration(rng.IntN(10_000)) * time.Microsecond
			}
			g.run(func() error {
				for _, pause := range pauses {
					time.Sleep(pause)
					if err := sleepCall(reg, fmt.Sprintf("small%d", t), "p", 2*time.Millisecond); err != nil {
						return err
					}
				}
				return nil
			})
		}
		return g.wait()
	})
}

// BenchmarkPositiveControl builds the counted situation on purpose: two tenants' first
// calls arrive while another tenant's calls run in every slot and more of them wait.
func BenchmarkPositiveControl(b *testing.B) { lane(b, positiveControl) }

// positiveControl is the control's workload.
func positiveControl(h *host, reg *registry) error {
	before := h.s.Snapshot()
	var g group
	for range 4 {
		for p := range 4 {
			g.run(func() error { return sleepCall(reg, "flood", fmt.Sprintf("p%d", p), 20*time.Millisecond) })
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := h.s.Snapshot()
		if s.Calls-before.Calls == 16 && s.Active == slots && s.Queued == 12 {
			break
		}
		if s.Completed > before.Completed || time.Now().After(deadline) {
			return errors.Join(g.wait(), fmt.Errorf("the flood was never seen queued: %+v", s))
		}
		time.Sleep(20 * time.Microsecond)
	}
	for _, t := range []string{"late1", "late2"} {
		g.run(func() error { return sleepCall(reg, t, "p", time.Millisecond) })
	}
	return g.wait()
}

// sortDurations returns ds sorted ascending.
func sortDurations(ds []time.Duration) []time.Duration {
	out := append([]time.Duration(nil), ds...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
