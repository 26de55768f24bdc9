package pluginhost

// This file holds the admission policy, and nothing else: which queued call is admitted
// next, whether a call may be admitted at all, and the incidence probe of the situation
// the policies disagree on. The policies differ in one comparison (before).
//
// Invariant: after every change of state (a call queued, finished or swept, a
// registration closed) dispatchLocked admits calls until no queued call is admissible. So
// a call that arrives and is not admitted at once waits because nothing could admit it,
// not because the dispatcher had not looked.
//
// # Eligible and admissible calls
//
// A registration's calls run one at a time, in arrival order: only the head of its queue,
// and only while none of its calls runs, is eligible. An eligible call is admissible when
//
//   - it is normal, or it is heavy and fewer than MaxHeavyCalls heavy calls run in all and
//     fewer than MaxHeavyCallsPerTenant of its tenant's; and
//   - its registration has an idle worker (a warm call: nothing is reserved), or a new
//     worker fits: its profile's memory within the budget, one more worker within
//     MaxWorkers, and for a heavy registration within half the budget of heavy
//     reservations, counting every idle worker as evictable (see residency.go).
//
// # The order
//
// PolicyFIFO admits the admissible call that arrived first. PolicyFair admits a call of
// the tenant with the fewest active workers (admitted calls not yet finished); among
// tenants with as many, the one whose latest admission is oldest (never served first);
// within a tenant, and between equal tenants, the call that arrived first. A call that
// is not admissible does not hold back one that is: a small profile can pass a large one
// waiting for memory.
//
// # Incidence counters
//
// Built with -tags flipbench_probe, enqueue counts for package probe, once per accepted
// call:
//
//   - calls: every call accepted into the queue;
//   - calls-queued: those not admitted at once;
//   - light-queued-behind-other-tenant: those not admitted at once that head their
//     registration (nothing of their own runs or waits ahead of them) while another
//     tenant with more active workers than theirs has calls queued. Every queued call
//     arrived earlier, so first-come first-served admits each admissible one of that
//     tenant's before this call, and fewest-active-first would admit this call first:
//     exactly the calls the two policies order differently.

// dispatchLocked admits queued calls, best first, until none is admissible.
func (s *Scheduler) dispatchLocked() {
	if s.closed || s.failure != nil {
		return
	}
	for {
		c := s.nextLocked()
		if c == nil {
			break
		}
		s.admitLocked(c)
	}
	s.replenishLocked()
}

// nextLocked returns the admissible call the policy ranks first, or nil.
func (s *Scheduler) nextLocked() *call {
	var best *call
	for r := range s.pending {
		if r.running != nil {
			continue
		}
		c := r.queue[0]
		if !s.admissibleLocked(c) {
			continue
		}
		if best == nil || s.before(c, best) {
			best = c
		}
	}
	return best
}

// before reports whether the policy admits a before b. Both are admissible heads of
// their registrations' queues. Arrival numbers are unique, so the order is total and
// does not depend on the order in which the registrations were looked at.
func (s *Scheduler) before(a, b *call) bool {
	if s.opt.Policy == PolicyFair {
		ta, tb := a.reg.tenant, b.reg.tenant
		if ta.active != tb.active {
			return ta.active < tb.active
		}
		if ta.lastServed != tb.lastServed {
			return ta.lastServed < tb.lastServed
		}
	}
	return a.seq < b.seq
}

// admissibleLocked reports whether the eligible call c could be admitted now.
func (s *Scheduler) admissibleLocked(c *call) bool {
	r := c.reg
	if r.class == Heavy && (s.snap.HeavyActive >= s.opt.MaxHeavyCalls || r.tenant.heavyActive >= s.opt.MaxHeavyCallsPerTenant) {
		return false
	}
	if r.worker != nil {
		return true // its own idle worker
	}
	if s.hasUnboundLocked(r) {
		return true // a clean pooled or a pristine worker of its profile
	}
	return s.roomAfterEvictingLocked(r.profile.MemoryMiB, r.class == Heavy)
}

// admitLocked takes c off its queue and runs it, on its registration's idle worker or on
// a new one, evicting idle workers of other registrations when a new one does not fit. A
// call whose context ended is dropped instead: it never executes.
func (s *Scheduler) admitLocked(c *call) {
	r := c.reg
	r.queue[0] = nil
	r.queue = r.queue[1:]
	if len(r.queue) == 0 {
		r.queue = nil
		delete(s.pending, r)
	}
	now := s.opt.Clock.Now()
	if err := s.endedLocked(c, now); err != nil {
		s.dropLocked(c, now, err)
		return
	}
	c.queued = false
	s.snap.Queued--
	s.snap.QueuedBytes -= c.size
	c.admitted = now
	c.ahead = int(s.admissions - c.admissionsAtArrival)
	s.admissions++
	s.snap.Admitted++
	r.running = c
	r.tenant.active++
	r.tenant.lastServed = s.admissions
	s.snap.Active++
	if r.class == Heavy {
		r.tenant.heavyActive++
		s.snap.HeavyActive++
	}
	s.noteDemandLocked(r, now)
	w := r.worker
	switch {
	case w != nil:
		s.unidleLocked(w)
		s.snap.WarmCalls++
	default:
		var reused bool
		if w, reused = s.takeUnboundLocked(r); w != nil {
			w.bind = true
			if reused {
				c.reused = true
				s.snap.ReusedCalls++
			} else {
				c.cold, c.pristine = true, true
				s.snap.ColdCalls++
				s.snap.PristineCalls++
			}
			break
		}
		if r.lastGone != nil {
			c.await = append(c.await, r.lastGone)
		}
		w, c.await = s.reserveLocked(r, c.await)
		c.cold = true
		s.snap.ColdCalls++
		s.snap.LaunchedCalls++
	}
	s.wg.Add(1)
	go s.execute(c, w)
}

// lightBehindOtherTenantLocked reports whether the queued call c is one the policies order
// differently (see the incidence counters above): it heads its registration, and another
// tenant with more active workers than c's has queued calls, all of which arrived before c.
func (s *Scheduler) lightBehindOtherTenantLocked(c *call) bool {
	r := c.reg
	if r.running != nil || len(r.queue) == 0 || r.queue[0] != c {
		return false
	}
	for o := range s.pending {
		if o.tenant != r.tenant && o.tenant.active > r.tenant.active {
			return true
		}
	}
	return false
}
