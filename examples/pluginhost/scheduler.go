package pluginhost

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flipbench/flipbench/probe"
)

// Scheduler owns every worker of one host and admits calls to them. Create one per host
// with New and share it among tenants; Close it when done. It is safe for concurrent use.
type Scheduler struct {
	opt Options
	// starts holds one token per worker start in progress (Options.MaxConcurrentStarts).
	starts chan struct{}
	// ctx ends at Close, cancelling every running call.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	regs    map[regKey]*registration
	tenants map[string]*tenant
	// pending holds every registration with at least one queued call.
	pending map[*registration]struct{}
	// idle holds the idle used workers, least recently used first.
	idle list.List
	// idleMiB and idleHeavyMiB are the reservations of the idle workers: what pressure
	// could free by evicting all of them.
	idleMiB, idleHeavyMiB int
	// arrivals and admissions number calls as they are queued and admitted.
	arrivals, admissions uint64
	sweep                Timer
	snap                 Snapshot
	stopErrs             []error
	// wg counts running calls and stopping workers.
	wg sync.WaitGroup
}

// regKey identifies a registration.
type regKey struct{ tenant, plugin string }

// tenant is the scheduler's view of one tenant: what the fair policy ranks by.
type tenant struct {
	name string
	// active and heavyActive count the tenant's admitted calls that have not finished:
	// its active workers.
	active, heavyActive int
	// lastServed is the admission number of the tenant's latest admitted call, 0 when
	// none was admitted yet: least recently served is the smallest.
	lastServed uint64
	// regs counts the tenant's registrations.
	regs int
}

// registration is one (tenant, plugin) pair: its queue, its running call and its one
// worker.
type registration struct {
	tenant  *tenant
	plugin  string
	profile Profile
	class   WorkClass
	// queue holds the queued calls in arrival order; only the head may be admitted, and
	// only while no call of the registration runs.
	queue   []*call
	running *call
	// worker is the registration's one worker (starting, running or idle), or nil. A
	// registration never has a second one, and a worker never serves another.
	worker *worker
	// lastGone is closed once the registration's previous worker has exited (nil: it
	// never had one). A new worker starts only after it.
	lastGone chan struct{}
	closed   bool
	// retired is closed once the registration is closed, no call of it runs and its
	// worker is being stopped; workerGone is closed once that worker has exited.
	retired, workerGone chan struct{}
}

// worker is one worker of a registration, holding a memory reservation.
type worker struct {
	reg       *registration
	proc      Worker // nil until started
	mem       int
	heavy     bool
	idleSince time.Time
	// elem is the worker's place in Scheduler.idle while it is idle.
	elem *list.Element
	// gone is closed once the worker's process has exited.
	gone chan struct{}
}

// call is one invocation.
type call struct {
	reg     *registration
	ctx     context.Context
	op      string
	payload []byte
	size    int
	seq     uint64
	// admissionsAtArrival is Scheduler.admissions when the call was queued.
	admissionsAtArrival uint64
	enqueued, admitted  time.Time
	queued              bool
	cold                bool
	ahead               int
	// await are the exits a cold call's start waits for: the workers evicted to make
	// room for it and its registration's previous worker.
	await []chan struct{}
	done  chan outcome
}

// outcome is what a caller receives.
type outcome struct {
	res Result
	err error
}

// Result is the outcome of a measured invocation.
type Result struct {
	// Output is the plugin's answer.
	Output []byte
	// QueueTime runs from the call's arrival to its admission; ExecTime from its
	// admission to its answer (a cold call's worker start included); Elapsed is both.
	QueueTime, ExecTime, Elapsed time.Duration
	// Cold reports that the call was admitted without a resident worker and started one.
	Cold bool
	// AdmittedAhead counts the calls admitted after this one was queued and before it.
	AdmittedAhead int
	// PID is the process id of the worker that answered (0 when none did).
	PID int
}

// Snapshot is the scheduler's state at one moment and its counts since New.
type Snapshot struct {
	// Queued counts the calls waiting for admission; QueuedBytes is their serialized size.
	Queued, QueuedBytes int
	// Active counts admitted calls that have not finished (starting a worker or
	// executing); HeavyActive the heavy ones among them.
	Active, HeavyActive int
	// Starting counts cold calls starting their worker; StartWaiting those waiting for a
	// start slot (Options.MaxConcurrentStarts).
	Starting, StartWaiting int
	// Idle counts idle used workers: the residency cache.
	Idle int
	// Workers counts workers holding a reservation (starting, running or idle);
	// ReservedMiB is the memory reserved for them, HeavyReservedMiB the part for heavy
	// registrations.
	Workers, ReservedMiB, HeavyReservedMiB int
	// Registrations counts the registered (tenant, plugin) pairs.
	Registrations int

	// Calls counts calls accepted into the queue.
	Calls uint64
	// Admitted counts calls admitted; ColdCalls those admitted without a resident
	// worker (so a worker was started for them), WarmCalls those served by their
	// registration's idle worker.
	Admitted, ColdCalls, WarmCalls uint64
	// Completed counts admitted calls the plugin answered (a plugin error included);
	// Failed those that ended otherwise (timeout, start or transport failure, close);
	// Timeouts the part of Failed that ran past the timeout.
	Completed, Failed, Timeouts uint64
	// Starts counts worker processes started, StartFailures starts that failed.
	Starts, StartFailures uint64
	// Evictions counts idle workers stopped to make room (memory, the worker ceiling or
	// MaxIdleWorkers); IdleStops those stopped after IdleTimeout; StopFailures workers
	// that did not exit cleanly.
	Evictions, IdleStops, StopFailures uint64
	// Expired and Cancelled count calls that ended in the queue (or arrived already
	// ended): they never executed.
	Expired, Cancelled uint64
	// Rejected counts calls refused at arrival.
	Rejected Rejections
}

// Rejections counts calls refused at arrival, by reason.
type Rejections struct {
	QueueFull, TooLarge, Closed uint64
}

// Total returns the number of rejected calls.
func (r Rejections) Total() uint64 { return r.QueueFull + r.TooLarge + r.Closed }

// New returns a scheduler with the given options (zero fields take their defaults).
func New(opt Options) (*Scheduler, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		opt:     opt,
		starts:  make(chan struct{}, opt.MaxConcurrentStarts),
		ctx:     ctx,
		cancel:  cancel,
		regs:    map[regKey]*registration{},
		tenants: map[string]*tenant{},
		pending: map[*registration]struct{}{},
	}
	s.mu.Lock()
	s.sweep = opt.Clock.AfterFunc(opt.SweepInterval, s.sweepTick)
	s.mu.Unlock()
	return s, nil
}

// Policy returns the admission policy in force (never PolicyDefault).
func (s *Scheduler) Policy() Policy { return s.opt.Policy }

// Snapshot returns the scheduler's current state and counts.
func (s *Scheduler) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap
	snap.Registrations = len(s.regs)
	return snap
}

// Plugin is a registration: one tenant's use of one plugin. Its calls queue in order and
// run one at a time on its one worker.
type Plugin struct {
	s *Scheduler
	r *registration
}

// Register registers the (tenant, plugin) pair with the worker profile and work class.
// A pair can be registered once at a time (ErrRegistered); close the Plugin before
// registering it again, e.g. with another version.
func (s *Scheduler) Register(tenantName, plugin string, profile Profile, class WorkClass) (*Plugin, error) {
	switch {
	case tenantName == "" || plugin == "":
		return nil, errors.New("register: tenant and plugin must not be empty")
	case class != Normal && class != Heavy:
		return nil, fmt.Errorf("register %s/%s: unknown work class %d", tenantName, plugin, int(class))
	case profile.MemoryMiB <= 0:
		return nil, fmt.Errorf("register %s/%s: profile MemoryMiB must be positive, got %d", tenantName, plugin, profile.MemoryMiB)
	case profile.MemoryMiB > s.opt.MemoryBudgetMiB:
		return nil, fmt.Errorf("register %s/%s: profile MemoryMiB %d exceeds the budget of %d MiB", tenantName, plugin, profile.MemoryMiB, s.opt.MemoryBudgetMiB)
	case class == Heavy && profile.MemoryMiB > s.opt.MemoryBudgetMiB/2:
		return nil, fmt.Errorf("register %s/%s: a heavy profile may reserve at most half the budget (%d MiB), got %d", tenantName, plugin, s.opt.MemoryBudgetMiB/2, profile.MemoryMiB)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	key := regKey{tenantName, plugin}
	if _, ok := s.regs[key]; ok {
		return nil, fmt.Errorf("register %s/%s: %w", tenantName, plugin, ErrRegistered)
	}
	t := s.tenants[tenantName]
	if t == nil {
		t = &tenant{name: tenantName}
		s.tenants[tenantName] = t
	}
	t.regs++
	r := &registration{tenant: t, plugin: plugin, profile: profile, class: class, retired: make(chan struct{})}
	s.regs[key] = r
	return &Plugin{s: s, r: r}, nil
}

// Tenant returns the registration's tenant.
func (p *Plugin) Tenant() string { return p.r.tenant.name }

// Name returns the registration's plugin name.
func (p *Plugin) Name() string { return p.r.plugin }

// Invoke calls op with payload and returns the plugin's output.
func (p *Plugin) Invoke(ctx context.Context, op string, payload []byte) ([]byte, error) {
	res, err := p.InvokeMeasured(ctx, op, payload)
	return res.Output, err
}

// InvokeMeasured calls op with payload and returns the output with the call's queue and
// execution times. The call waits in the queue until it is admitted or ctx ends; ctx's
// deadline and cancellation are noticed by the sweep (about every SweepInterval) and at
// admission, and a call that ended in the queue never executes (ErrExpired,
// ErrCancelled). Once admitted, the call runs within its class timeout and ctx.
func (p *Plugin) InvokeMeasured(ctx context.Context, op string, payload []byte) (Result, error) {
	c, err := p.s.enqueue(ctx, p.r, op, payload)
	if err != nil {
		return Result{}, err
	}
	o := <-c.done
	return o.res, o.err
}

// Close ends the registration: its queued calls fail with ErrClosed, a running call is
// let finish, and its worker is stopped. When Close returns the worker's process has
// exited and the pair may be registered again.
func (p *Plugin) Close() error {
	s, r := p.s, p.r
	s.mu.Lock()
	if !r.closed {
		r.closed = true
		now := s.opt.Clock.Now()
		for _, c := range r.queue {
			s.dropLocked(c, now, fmt.Errorf("%s/%s: %w", r.tenant.name, r.plugin, ErrClosed))
		}
		r.queue = nil
		delete(s.pending, r)
		if r.running == nil {
			s.retireLocked(r)
		}
		s.dispatchLocked()
	}
	s.mu.Unlock()
	<-r.retired
	<-r.workerGone
	return nil
}

// Close stops the scheduler: queued calls fail with ErrClosed, running calls are
// cancelled (ErrClosed), and every worker is stopped. It returns once every worker
// process has exited, with the errors of workers that did not exit cleanly.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		if s.sweep != nil {
			s.sweep.Stop()
		}
		now := s.opt.Clock.Now()
		for r := range s.pending {
			for _, c := range r.queue {
				s.dropLocked(c, now, ErrClosed)
			}
			r.queue = nil
			delete(s.pending, r)
		}
		for s.idle.Len() > 0 {
			s.stopWorkerLocked(s.idle.Front().Value.(*worker))
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.stopErrs...)
}

// enqueue queues a call, or refuses it, and runs the dispatcher.
func (s *Scheduler) enqueue(ctx context.Context, r *registration, op string, payload []byte) (*call, error) {
	size := requestSize(r.tenant.name, r.plugin, op, payload)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed || r.closed:
		s.snap.Rejected.Closed++
		return nil, fmt.Errorf("%s/%s: %w", r.tenant.name, r.plugin, ErrClosed)
	case size > s.opt.MaxCallBytes:
		s.snap.Rejected.TooLarge++
		return nil, fmt.Errorf("%w: %d bytes serialized, limit %d", ErrTooLarge, size, s.opt.MaxCallBytes)
	case s.snap.Queued >= s.opt.MaxQueuedCalls:
		s.snap.Rejected.QueueFull++
		return nil, fmt.Errorf("%w: %d calls waiting", ErrQueueFull, s.snap.Queued)
	}
	now := s.opt.Clock.Now()
	s.arrivals++
	c := &call{
		reg: r, ctx: ctx, op: op, payload: payload, size: size,
		seq: s.arrivals, admissionsAtArrival: s.admissions, enqueued: now,
		done: make(chan outcome, 1),
	}
	if err := s.endedLocked(c, now); err != nil {
		s.dropLocked(c, now, err)
		return c, nil
	}
	r.queue = append(r.queue, c)
	c.queued = true
	s.pending[r] = struct{}{}
	s.snap.Queued++
	s.snap.QueuedBytes += size
	s.snap.Calls++
	probe.Calls.Add(1)
	s.dispatchLocked()
	if c.queued {
		probe.CallsQueued.Add(1)
		if probe.Enabled && s.lightBehindOtherTenantLocked(c) {
			probe.LightQueuedBehindOtherTenant.Add(1)
		}
	}
	return c, nil
}

// endedLocked returns why c may no longer execute (its context ended, or its deadline
// has passed by the scheduler's clock), or nil.
func (s *Scheduler) endedLocked(c *call, now time.Time) error {
	err := c.ctx.Err()
	if err == nil {
		if dl, ok := c.ctx.Deadline(); ok && !now.Before(dl) {
			err = context.DeadlineExceeded
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w after %s: %w", ErrExpired, now.Sub(c.enqueued), err)
	default:
		return fmt.Errorf("%w after %s: %w", ErrCancelled, now.Sub(c.enqueued), err)
	}
}

// dropLocked ends a call that will not execute with err, counting it as expired or
// cancelled when err says so. A queued call must already be out of its registration's
// queue; the queue's gauges are updated here.
func (s *Scheduler) dropLocked(c *call, now time.Time, err error) {
	if c.queued {
		c.queued = false
		s.snap.Queued--
		s.snap.QueuedBytes -= c.size
	}
	switch {
	case errors.Is(err, ErrExpired):
		s.snap.Expired++
	case errors.Is(err, ErrCancelled):
		s.snap.Cancelled++
	}
	wait := now.Sub(c.enqueued)
	c.done <- outcome{res: Result{QueueTime: wait, Elapsed: wait}, err: err}
}

// sweepTick removes ended calls from the queue and stops idle workers past the idle
// timeout, then arms the next sweep.
func (s *Scheduler) sweepTick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.opt.Clock.Now()
	for r := range s.pending {
		kept := r.queue[:0]
		for _, c := range r.queue {
			if err := s.endedLocked(c, now); err != nil {
				s.dropLocked(c, now, err)
				continue
			}
			kept = append(kept, c)
		}
		clear(r.queue[len(kept):])
		r.queue = kept
		if len(r.queue) == 0 {
			delete(s.pending, r)
		}
	}
	for s.idle.Len() > 0 {
		w := s.idle.Front().Value.(*worker)
		if now.Sub(w.idleSince) < s.opt.IdleTimeout {
			break
		}
		s.stopWorkerLocked(w)
		s.snap.IdleStops++
	}
	s.dispatchLocked()
	s.sweep = s.opt.Clock.AfterFunc(s.opt.SweepInterval, s.sweepTick)
}

// execute runs an admitted call on its worker, starting the worker first when the call
// is cold, and hands the outcome back to the scheduler.
func (s *Scheduler) execute(c *call, w *worker) {
	defer s.wg.Done()
	r := c.reg
	timeout := s.opt.NormalTimeout
	if r.class == Heavy {
		timeout = s.opt.HeavyTimeout
	}
	if t := r.profile.Timeout; t > 0 && t < timeout {
		timeout = t
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	var err error
	if c.cold {
		err = s.start(ctx, c, w)
	}
	var out []byte
	if err == nil {
		out, err = w.proc.Call(ctx, Request{Tenant: r.tenant.name, Plugin: r.plugin, Op: c.op, Payload: c.payload})
	}
	var pluginErr *PluginError
	keep := err == nil || errors.As(err, &pluginErr) // the worker answered: still usable
	timedOut := false
	if !keep {
		switch {
		case s.ctx.Err() != nil:
			err = fmt.Errorf("%w: %w", ErrClosed, err)
		case c.ctx.Err() != nil:
			err = fmt.Errorf("%s/%s %s: %w", r.tenant.name, r.plugin, c.op, err)
		case errors.Is(err, context.DeadlineExceeded):
			timedOut = true
			err = fmt.Errorf("%w after %s: %s/%s %s", ErrTimeout, timeout, r.tenant.name, r.plugin, c.op)
		}
	}
	s.finish(c, w, out, err, keep, timedOut)
}

// start starts the worker of a cold call within ctx: once the workers it replaces have
// exited, and once it has a start slot.
func (s *Scheduler) start(ctx context.Context, c *call, w *worker) error {
	for _, gone := range c.await {
		select {
		case <-gone:
		case <-ctx.Done():
			return fmt.Errorf("waiting for an evicted worker to exit: %w", ctx.Err())
		}
	}
	s.mu.Lock()
	s.snap.StartWaiting++
	s.mu.Unlock()
	select {
	case s.starts <- struct{}{}:
	case <-ctx.Done():
		s.mu.Lock()
		s.snap.StartWaiting--
		s.mu.Unlock()
		return fmt.Errorf("waiting for a start slot: %w", ctx.Err())
	}
	s.mu.Lock()
	s.snap.StartWaiting--
	s.snap.Starting++
	s.mu.Unlock()
	r := w.reg
	proc, err := s.opt.Launcher.Launch(ctx, LaunchSpec{Tenant: r.tenant.name, Plugin: r.plugin, Profile: r.profile})
	<-s.starts
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.Starting--
	if err != nil {
		s.snap.StartFailures++
		return err
	}
	s.snap.Starts++
	w.proc = proc
	return nil
}

// finish records a finished call, returns its worker to residency (keep) or stops it,
// admits what can now run, and answers the caller.
func (s *Scheduler) finish(c *call, w *worker, out []byte, err error, keep, timedOut bool) {
	s.mu.Lock()
	now := s.opt.Clock.Now()
	r := c.reg
	res := Result{
		Output:        out,
		QueueTime:     c.admitted.Sub(c.enqueued),
		ExecTime:      now.Sub(c.admitted),
		Elapsed:       now.Sub(c.enqueued),
		Cold:          c.cold,
		AdmittedAhead: c.ahead,
	}
	if w.proc != nil {
		res.PID = w.proc.PID()
	}
	r.running = nil
	r.tenant.active--
	s.snap.Active--
	if r.class == Heavy {
		r.tenant.heavyActive--
		s.snap.HeavyActive--
	}
	if keep {
		s.snap.Completed++
	} else {
		s.snap.Failed++
	}
	if timedOut {
		s.snap.Timeouts++
	}
	switch {
	case r.closed:
		s.retireLocked(r) // stops the worker
	case keep && !s.closed:
		s.idleLocked(w, now)
	default:
		s.stopWorkerLocked(w)
	}
	s.dispatchLocked()
	s.mu.Unlock()
	c.done <- outcome{res: res, err: err}
}

// retireLocked ends a closed registration with no running call: it stops its worker and
// unregisters the pair, then releases Plugin.Close.
func (s *Scheduler) retireLocked(r *registration) {
	r.workerGone = closedChan()
	if w := r.worker; w != nil {
		r.workerGone = w.gone
		s.stopWorkerLocked(w)
	}
	key := regKey{r.tenant.name, r.plugin}
	if s.regs[key] == r {
		delete(s.regs, key)
		r.tenant.regs--
		if r.tenant.regs == 0 && r.tenant.active == 0 {
			delete(s.tenants, r.tenant.name)
		}
	}
	close(r.retired)
}

// closedChan returns a closed channel.
func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
