package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// This file holds residency: reservations, the idle cache of workers, eviction under
// pressure, the pristine reserve and the clean pool of approved-session reuse.
//
// Every worker holds a reservation of its profile's memory from the moment it is
// reserved (a call admitted cold, or the reserve launching a pristine worker) until it is
// stopped, whether it is starting, running, releasing or idle. The idle cache (one list,
// least recently used first) holds three kinds of workers, all evictable:
//
//   - a used worker still bound to its registration, after its call: the registration's
//     next call takes it (a warm call);
//   - a clean pooled worker: a worker of an approved-sessions profile whose session was
//     released after its call (the worker cleaned up and unbound, SessionWorker.Release);
//     the next call of any registration with the same profile takes it (a reused call,
//     not cold: the seed counts a call cold when it acquires no previously used clean
//     worker);
//   - a pristine worker: started by the reserve, never used, bound to nobody; a cold call
//     of a registration with its profile takes it instead of starting a process (still a
//     cold call, counted as a pristine call).
//
// Pristine workers sit at the front of the list, so pressure evicts them first, then the
// least recently used others. A cold call that does not fit evicts until it does. An
// evicted worker's process is stopped, never handed on. Its reservation passes to the new
// worker at once, but the new worker starts only once the evicted ones (and its own
// registration's previous worker) have exited, so the processes alive never exceed the
// budget, the ceiling, or one per registration.
//
// # The pristine reserve
//
// With Options.PristineReserve > 0, the scheduler remembers which profiles were requested
// (every admitted call records its registration's profile key), and keeps one pristine
// worker ready per profile requested within IdleTimeout, up to PristineReserve in all. A
// profile's key is everything that decides what runs: class, reuse policy, name, version, memory,
// arguments and environment (a language or program name alone is not a safe key).
// Replenishing happens only while no call is queued (the dispatcher is idle), only into
// budget that is free (it never evicts), and only with a free start slot (foreground
// starts come first). A pristine worker still starting is evictable too: evicting it
// cancels its launch, so the reserve never turns an admissible call into a waiting one.
// A cold call whose profile has a pristine worker starting takes that one and waits for
// it within its deadline. When a profile's demand is older than IdleTimeout, its target
// expires and its pristine worker is stopped at the next sweep.

// poolKey returns the key under which workers of a registration's profile and class are
// interchangeable once clean.
func poolKey(p Profile, class WorkClass) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%d\x00%s\x00%s", class, p.Reuse, p.Name, p.Version, p.MemoryMiB,
		strings.Join(p.Args, "\x01"), strings.Join(p.Env, "\x01"))
}

// roomAfterEvictingLocked reports whether a new worker of need MiB (heavy: of a heavy
// registration) fits once every idle worker and every unclaimed starting pristine worker
// is evicted.
func (s *Scheduler) roomAfterEvictingLocked(need int, heavy bool) bool {
	freeable, freeableHeavy, freeableCount := s.idleMiB, s.idleHeavyMiB, s.snap.Idle
	for w := range s.starting {
		if !w.claimed {
			freeable += w.mem
			freeableCount++
			if w.heavy {
				freeableHeavy += w.mem
			}
		}
	}
	if s.snap.ReservedMiB-freeable+need > s.opt.MemoryBudgetMiB {
		return false
	}
	if s.opt.MaxWorkers > 0 && s.snap.Workers-freeableCount+1 > s.opt.MaxWorkers {
		return false
	}
	return !heavy || s.snap.HeavyReservedMiB-freeableHeavy+need <= s.opt.MemoryBudgetMiB/2
}

// reserveLocked evicts starting pristine workers, then idle workers, until a new worker
// for r fits, then reserves it; the exits of the evicted workers are added to await, for
// the new worker's start to wait for. The caller has checked roomAfterEvictingLocked.
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
		for w := range s.starting {
			if !w.claimed && (overBudget || overCount || w.heavy) {
				victim = w
				break
			}
		}
		if victim == nil {
			for e := s.idle.Front(); e != nil; e = e.Next() {
				if w := e.Value.(*worker); overBudget || overCount || w.heavy {
					victim = w
					break
				}
			}
		}
		if victim == nil {
			panic(fmt.Sprintf("pluginhost: no idle worker to evict for %s/%s although admission found room", r.tenant.name, r.plugin))
		}
		s.stopWorkerLocked(victim)
		s.snap.Evictions++
		await = append(await, victim.gone)
	}
	w := s.newWorkerLocked(r.key, r.profile, r.class)
	w.reg = r
	r.worker = w
	return w, await
}

// newWorkerLocked reserves a worker of the profile.
func (s *Scheduler) newWorkerLocked(key string, p Profile, class WorkClass) *worker {
	w := &worker{key: key, profile: p, mem: p.MemoryMiB, heavy: class == Heavy, gone: make(chan struct{})}
	s.snap.Workers++
	s.snap.ReservedMiB += w.mem
	if w.heavy {
		s.snap.HeavyReservedMiB += w.mem
	}
	return w
}

// takeUnboundLocked returns a clean worker for a cold call of r that needs no start: a
// pooled one (used, clean: reused is true), else one whose approved session is being
// cleaned up, which it claims (reused too: the call waits for the cleanup), else a ready
// pristine one, else a pristine one still starting, which it claims. It returns nil when
// there is none.
func (s *Scheduler) takeUnboundLocked(r *registration) (w *worker, reused bool) {
	var pristine *worker
	for e := s.idle.Front(); e != nil; e = e.Next() {
		v := e.Value.(*worker)
		if v.reg != nil || v.key != r.key {
			continue
		}
		if !v.pristine {
			s.unidleLocked(v)
			v.reg = r
			r.worker = v
			return v, true
		}
		if pristine == nil {
			pristine = v
		}
	}
	for v := range s.releasing {
		if !v.claimed && v.key == r.key {
			v.claimed = true
			v.reg = r
			r.worker = v
			return v, true
		}
	}
	if pristine != nil {
		s.unidleLocked(pristine)
		pristine.pristine = false
		pristine.reg = r
		r.worker = pristine
		return pristine, false
	}
	for v := range s.starting {
		if !v.claimed && v.key == r.key {
			v.claimed = true
			v.pristine = false
			v.reg = r
			r.worker = v
			return v, false
		}
	}
	return nil, false
}

// hasUnboundLocked reports whether takeUnboundLocked would find a worker for r.
func (s *Scheduler) hasUnboundLocked(r *registration) bool {
	for e := s.idle.Front(); e != nil; e = e.Next() {
		if v := e.Value.(*worker); v.reg == nil && v.key == r.key {
			return true
		}
	}
	for v := range s.starting {
		if !v.claimed && v.key == r.key {
			return true
		}
	}
	for v := range s.releasing {
		if !v.claimed && v.key == r.key {
			return true
		}
	}
	return false
}

// idleLocked puts a worker into the idle cache: a pristine one at the front (evicted
// first), any other at the back. Beyond MaxIdleWorkers used idle workers (pristine ones
// are bounded by PristineReserve, not by it) the least recently used one is evicted.
func (s *Scheduler) idleLocked(w *worker, now time.Time) {
	w.idleSince = now
	if w.pristine {
		w.elem = s.idle.PushFront(w)
		s.snap.Pristine++
	} else {
		w.elem = s.idle.PushBack(w)
		if w.reg == nil {
			s.snap.Pooled++
		}
	}
	s.snap.Idle++
	s.idleMiB += w.mem
	if w.heavy {
		s.idleHeavyMiB += w.mem
	}
	for s.opt.MaxIdleWorkers > 0 && s.snap.Idle-s.snap.Pristine > s.opt.MaxIdleWorkers {
		s.stopWorkerLocked(s.oldestUsedIdleLocked())
		s.snap.Evictions++
	}
}

// oldestUsedIdleLocked returns the least recently used idle worker that is not pristine.
// The caller has checked that there is one.
func (s *Scheduler) oldestUsedIdleLocked() *worker {
	for e := s.idle.Front(); e != nil; e = e.Next() {
		if w := e.Value.(*worker); !w.pristine {
			return w
		}
	}
	panic("pluginhost: no used idle worker although the idle cache is over its bound")
}

// unidleLocked takes a worker out of the idle cache for a call.
func (s *Scheduler) unidleLocked(w *worker) {
	s.idle.Remove(w.elem)
	w.elem = nil
	s.snap.Idle--
	switch {
	case w.pristine:
		s.snap.Pristine--
	case w.reg == nil:
		s.snap.Pooled--
	}
	s.idleMiB -= w.mem
	if w.heavy {
		s.idleHeavyMiB -= w.mem
	}
}

// stopWorkerLocked releases a worker's reservation, detaches it from its registration and
// stops its process in the background; w.gone is closed when the process has exited. A
// pristine worker still starting has its launch cancelled; its launch closes w.gone.
func (s *Scheduler) stopWorkerLocked(w *worker) {
	if w.stopped {
		return
	}
	w.stopped = true
	if w.elem != nil {
		s.unidleLocked(w)
	}
	if w.reg != nil && w.reg.worker == w {
		w.reg.worker = nil
		w.reg.lastGone = w.gone
	}
	s.snap.Workers--
	s.snap.ReservedMiB -= w.mem
	if w.heavy {
		s.snap.HeavyReservedMiB -= w.mem
	}
	if w.launching {
		w.evicted = true
		delete(s.starting, w)
		s.snap.PristineStarting--
		w.cancelLaunch()
		return
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
			if len(s.stopErrs) < maxStopErrs {
				s.stopErrs = append(s.stopErrs, err)
			}
			if errors.Is(err, ErrWorkerHung) {
				s.failLocked(fmt.Errorf("stopping a worker: %w", err))
			}
			s.mu.Unlock()
		}
	}()
}

// demand is a profile requested recently: what the pristine reserve keeps a worker of.
type demand struct {
	profile Profile
	class   WorkClass
	last    time.Time
}

// noteDemandLocked records that a call of r was admitted now.
func (s *Scheduler) noteDemandLocked(r *registration, now time.Time) {
	if s.opt.PristineReserve == 0 {
		return
	}
	s.demand[r.key] = demand{profile: r.profile, class: r.class, last: now}
}

// replenishLocked starts pristine workers toward the targets, if the dispatcher is idle:
// one per profile with recent demand and no pristine worker (ready or starting), up to
// PristineReserve in all, each only into free budget and with a free start slot.
func (s *Scheduler) replenishLocked() {
	if s.opt.PristineReserve == 0 || s.closed || s.failure != nil || s.snap.Queued > 0 {
		return
	}
	have := map[string]bool{}
	count := 0
	for e := s.idle.Front(); e != nil; e = e.Next() {
		if w := e.Value.(*worker); w.pristine {
			have[w.key] = true
			count++
		}
	}
	for w := range s.starting {
		if !w.claimed {
			have[w.key] = true
			count++
		}
	}
	keys := make([]string, 0, len(s.demand))
	for k := range s.demand {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.demand[keys[i]].last.After(s.demand[keys[j]].last) })
	for _, k := range keys {
		if count >= s.opt.PristineReserve {
			return
		}
		d := s.demand[k]
		heavy := d.class == Heavy
		if have[k] || s.snap.ReservedMiB+d.profile.MemoryMiB > s.opt.MemoryBudgetMiB ||
			(s.opt.MaxWorkers > 0 && s.snap.Workers+1 > s.opt.MaxWorkers) ||
			(heavy && s.snap.HeavyReservedMiB+d.profile.MemoryMiB > s.opt.MemoryBudgetMiB/2) {
			continue
		}
		select {
		case s.starts <- struct{}{}:
		default:
			return // every start slot is taken: foreground starts first
		}
		w := s.newWorkerLocked(k, d.profile, d.class)
		w.pristine, w.launching = true, true
		w.ready = make(chan struct{})
		ctx, cancel := context.WithCancel(s.ctx)
		w.cancelLaunch = cancel
		s.starting[w] = struct{}{}
		s.snap.PristineStarting++
		have[k] = true
		count++
		s.wg.Add(1)
		go s.launchPristine(ctx, w)
	}
}

// launchPristine starts a pristine worker (holding a start slot) and puts it into the idle
// cache, hands it to the call that claimed it, or stops it when it was evicted meanwhile.
func (s *Scheduler) launchPristine(ctx context.Context, w *worker) {
	defer s.wg.Done()
	timeout := s.opt.NormalTimeout
	if w.heavy {
		timeout = s.opt.HeavyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	proc, err := s.opt.Launcher.Launch(ctx, LaunchSpec{Profile: w.profile})
	cancel()
	<-s.starts
	s.mu.Lock()
	defer s.mu.Unlock()
	w.launching = false
	w.cancelLaunch()
	if w.evicted {
		// stopWorkerLocked released the reservation; end the process it did not see.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(w.gone)
			if proc != nil {
				_ = proc.Stop()
			}
		}()
		return
	}
	delete(s.starting, w)
	s.snap.PristineStarting--
	if err != nil {
		s.snap.StartFailures++
		w.launchErr = err
		close(w.ready)
		s.stopWorkerLocked(w) // releases the reservation; no process to stop
		s.dispatchLocked()
		return
	}
	s.snap.Starts++
	s.snap.PristineStarts++
	w.proc = proc
	close(w.ready)
	switch {
	case w.claimed:
	case s.closed:
		s.stopWorkerLocked(w)
	default:
		s.idleLocked(w, s.opt.Clock.Now())
	}
	s.dispatchLocked()
}

// expireDemandLocked drops demand older than IdleTimeout and stops the pristine workers
// of profiles no longer in demand.
func (s *Scheduler) expireDemandLocked(now time.Time) {
	for k, d := range s.demand {
		if now.Sub(d.last) >= s.opt.IdleTimeout {
			delete(s.demand, k)
		}
	}
	for e := s.idle.Front(); e != nil; {
		next := e.Next()
		if w := e.Value.(*worker); w.pristine {
			if _, ok := s.demand[w.key]; !ok {
				s.stopWorkerLocked(w)
				s.snap.IdleStops++
			}
		}
		e = next
	}
}
