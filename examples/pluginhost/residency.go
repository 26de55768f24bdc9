package pluginhost

import (
	"fmt"
	"time"
)

// This file holds residency: reservations, the idle LRU cache of used workers, and
// eviction under pressure.
//
// Every worker holds a reservation of its profile's memory from the moment its call is
// admitted until it is stopped, whether it is starting, running or idle. An idle used
// worker stays with its registration, at the back of the idle list (most recently used
// last), until its registration's next call takes it (a warm call), IdleTimeout passes
// (the sweep stops it), MaxIdleWorkers is exceeded, or pressure evicts it: a cold call
// whose worker does not fit stops idle workers, least recently used first, until it
// does. An evicted worker's process is stopped, never handed on: a tenant's used worker
// never serves another tenant, or another registration. Its reservation passes to the new
// worker at once, but the new worker starts only once the evicted ones (and its own
// registration's previous worker) have exited, so the processes alive never exceed the
// budget, the ceiling, or one per registration.

// roomAfterEvictingLocked reports whether a new worker of need MiB (heavy: of a heavy
// registration) fits once every idle worker is evicted.
func (s *Scheduler) roomAfterEvictingLocked(need int, heavy bool) bool {
	if s.snap.ReservedMiB-s.idleMiB+need > s.opt.MemoryBudgetMiB {
		return false
	}
	if s.opt.MaxWorkers > 0 && s.snap.Workers-s.snap.Idle+1 > s.opt.MaxWorkers {
		return false
	}
	return !heavy || s.snap.HeavyReservedMiB-s.idleHeavyMiB+need <= s.opt.MemoryBudgetMiB/2
}

// reserveLocked evicts idle workers until a new worker for r fits, then reserves it; the
// exits of the evicted workers are added to await, for the new worker's start to wait
// for. The caller has checked roomAfterEvictingLocked.
func (s *Scheduler) reserveLocked(r *registration, await []chan struct{}) (*worker, []chan struct{}) {
	need, heavy := r.profile.MemoryMiB, r.class == Heavy
	for {
		overBudget := s.snap.ReservedMiB+need > s.opt.MemoryBudgetMiB
		overCount := s.opt.MaxWorkers > 0 && s.snap.Workers+1 > s.opt.MaxWorkers
		overHeavy := heavy && s.snap.HeavyReservedMiB+need > s.opt.MemoryBudgetMiB/2
		if !overBudget && !overCount && !overHeavy {
			break
		}
		var victim *worker
		for e := s.idle.Front(); e != nil; e = e.Next() {
			if w := e.Value.(*worker); overBudget || overCount || w.heavy {
				victim = w
				break
			}
		}
		if victim == nil {
			panic(fmt.Sprintf("pluginhost: no idle worker to evict for %s/%s although admission found room", r.tenant.name, r.plugin))
		}
		s.stopWorkerLocked(victim)
		s.snap.Evictions++
		await = append(await, victim.gone)
	}
	w := &worker{reg: r, mem: need, heavy: heavy, gone: make(chan struct{})}
	r.worker = w
	s.snap.Workers++
	s.snap.ReservedMiB += need
	if heavy {
		s.snap.HeavyReservedMiB += need
	}
	return w, await
}

// idleLocked puts a used worker at the back of the idle list; beyond MaxIdleWorkers the
// front (least recently used) one is evicted.
func (s *Scheduler) idleLocked(w *worker, now time.Time) {
	w.idleSince = now
	w.elem = s.idle.PushBack(w)
	s.snap.Idle++
	s.idleMiB += w.mem
	if w.heavy {
		s.idleHeavyMiB += w.mem
	}
	for s.opt.MaxIdleWorkers > 0 && s.snap.Idle > s.opt.MaxIdleWorkers {
		s.stopWorkerLocked(s.idle.Front().Value.(*worker))
		s.snap.Evictions++
	}
}

// unidleLocked takes an idle worker off the idle list for its registration's next call.
func (s *Scheduler) unidleLocked(w *worker) {
	s.idle.Remove(w.elem)
	w.elem = nil
	s.snap.Idle--
	s.idleMiB -= w.mem
	if w.heavy {
		s.idleHeavyMiB -= w.mem
	}
}

// stopWorkerLocked releases a worker's reservation, detaches it from its registration and
// stops its process in the background; w.gone is closed when the process has exited.
func (s *Scheduler) stopWorkerLocked(w *worker) {
	if w.elem != nil {
		s.unidleLocked(w)
	}
	if w.reg.worker == w {
		w.reg.worker = nil
		w.reg.lastGone = w.gone
	}
	s.snap.Workers--
	s.snap.ReservedMiB -= w.mem
	if w.heavy {
		s.snap.HeavyReservedMiB -= w.mem
	}
	proc := w.proc
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(w.gone)
		if proc == nil {
			return
		}
		if err := proc.Stop(); err != nil {
			s.mu.Lock()
			s.snap.StopFailures++
			s.stopErrs = append(s.stopErrs, err)
			s.mu.Unlock()
		}
	}()
}
