package pluginhost

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
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
	// stopErrs holds the first maxStopErrs errors of stopping workers, for Close; the
	// rest are only counted (Snapshot.StopFailures), so crashing plugins cannot make a
	// long-running scheduler's memory grow.
	stopErrs []error
	// starting holds the pristine workers whose launch is in progress; releasing the
	// workers whose approved session is being cleaned up.
	starting, releasing map[*worker]struct{}
	// demand is the profiles requested recently, by pool key (the pristine reserve's
	// targets).
	demand map[string]demand
	// failure is the first cleanup failure: once set, no call is admitted (Snapshot.Failure).
	failure error
	// heavyRegs counts the registrations of class Heavy (Options.MaxHeavyRegistrations).
	heavyRegs int
	// wg counts running calls and stopping workers.
	wg sync.WaitGroup
}

// maxStopErrs is how many errors of stopping workers the scheduler keeps for Close.
const maxStopErrs = 16

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
	// key is the profile's pool key (poolKey): which unbound workers it may take.
	key string
	// callbacks are the application's callbacks; grants the names the plugin may call.
	callbacks Callbacks
	grants    map[string]bool
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

// worker is one worker, holding a memory reservation: bound to a registration, or
// unbound (pristine, or pooled after a released approved session).
type worker struct {
	// reg is the registration the worker serves, nil while it is unbound.
	reg *registration
	// key and profile are what the worker runs (poolKey).
	key     string
	profile Profile
	proc    Worker // nil until started
	mem     int
	heavy   bool
	// pristine: started by the reserve and never used.
	pristine bool
	// launching: a pristine launch is in progress (the worker is in Scheduler.starting);
	// claimed: a cold call took it while it starts; ready is closed when the launch
	// ended, launchErr saying how; cancelLaunch cancels it (eviction); evicted records that.
	launching, claimed, evicted bool
	ready                       chan struct{}
	launchErr                   error
	cancelLaunch                context.CancelFunc
	// bind: the call that took this worker must bind it first (it was unbound).
	bind bool
	// stopped: stopWorkerLocked ran.
	stopped   bool
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
	// reused and pristine say which unbound worker a call took (Result).
	reused, pristine bool
	ahead            int
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
	// Cold reports that the call was admitted without a resident worker and without a
	// previously used clean one: it started a process or took a pristine one.
	Cold bool
	// Reused reports that the call took a clean pooled worker another registration's
	// approved session had released; Pristine that it took a pristine worker.
	Reused, Pristine bool
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
	// Idle counts the workers in the idle cache: used ones still bound, clean pooled ones
	// (Pooled) and ready pristine ones (Pristine). PristineStarting counts pristine
	// workers being started by the reserve; Releasing workers cleaning up an approved
	// session.
	Idle, Pooled, Pristine, PristineStarting, Releasing int
	// Workers counts workers holding a reservation (starting, running or idle);
	// ReservedMiB is the memory reserved for them, HeavyReservedMiB the part for heavy
	// registrations.
	Workers, ReservedMiB, HeavyReservedMiB int
	// Registrations counts the registered (tenant, plugin) pairs.
	Registrations int

	// Calls counts calls accepted into the queue.
	Calls uint64
	// Admitted counts calls admitted; WarmCalls those served by their registration's
	// idle worker; ReusedCalls those that took a clean pooled worker (approved-session
	// reuse); ColdCalls the rest, admitted without a resident worker and without a
	// previously used clean one: PristineCalls of them took a pristine worker (no start on
	// their path), LaunchedCalls started their own process.
	Admitted, ColdCalls, WarmCalls, ReusedCalls, PristineCalls, LaunchedCalls uint64
	// Completed counts admitted calls the plugin answered (a plugin error included);
	// Failed those that ended otherwise (timeout, start or transport failure, close);
	// Timeouts the part of Failed that ran past the timeout.
	Completed, Failed, Timeouts uint64
	// Starts counts worker processes started (PristineStarts of them by the reserve),
	// StartFailures starts that failed.
	Starts, PristineStarts, StartFailures uint64
	// Releases counts approved sessions cleaned up and returned to the pool;
	// ReleaseFailures cleanups that failed (each stops admissions: Failure).
	Releases, ReleaseFailures uint64
	// Callbacks counts callbacks run for plugins; CallbackDenials those refused because
	// the registration holds no grant for them.
	Callbacks, CallbackDenials uint64
	// Evictions counts idle workers stopped to make room (memory, the worker ceiling or
	// MaxIdleWorkers); IdleStops those stopped after IdleTimeout; StopFailures workers
	// that did not exit cleanly.
	Evictions, IdleStops, StopFailures uint64
	// Expired and Cancelled count calls that ended in the queue (or arrived already
	// ended): they never executed.
	Expired, Cancelled uint64
	// Rejected counts calls refused at arrival.
	Rejected Rejections

	// Runtime is the scheduler's state: running, failed (a cleanup failed, so nothing
	// is admitted any more) or closed. Failure is the cleanup failure, nil unless
	// Runtime is RuntimeFailed.
	Runtime Runtime
	Failure error
}

// Runtime is the scheduler's state, as Snapshot reports it.
type Runtime int

const (
	// RuntimeRunning: calls are admitted.
	RuntimeRunning Runtime = iota
	// RuntimeFailed: a cleanup failed (a worker that would not exit when stopped,
	// ErrWorkerHung; an approved session whose cleanup failed); admissions stopped, queued calls ended with
	// ErrFailed and new ones are refused. This is not load shedding: read
	// Snapshot.Failure, fix the cause, and start a new scheduler.
	RuntimeFailed
	// RuntimeClosed: Close was called.
	RuntimeClosed
)

// String returns "running", "failed" or "closed".
func (r Runtime) String() string {
	switch r {
	case RuntimeRunning:
		return "running"
	case RuntimeFailed:
		return "failed"
	case RuntimeClosed:
		return "closed"
	}
	return fmt.Sprintf("runtime(%d)", int(r))
}

// Rejections counts calls refused at arrival, by reason.
type Rejections struct {
	QueueFull, TooLarge, Closed uint64
	// Failed: the scheduler stopped admissions after a cleanup failure.
	Failed uint64
	// CallbackScope: a scheduled call made from inside a callback, denied (it could wait
	// for a worker held by the very call that runs the callback).
	CallbackScope uint64
}

// Total returns the number of rejected calls.
func (r Rejections) Total() uint64 {
	return r.QueueFull + r.TooLarge + r.Closed + r.Failed + r.CallbackScope
}

// New returns a scheduler with the given options (zero fields take their defaults).
func New(opt Options) (*Scheduler, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		opt:       opt,
		starts:    make(chan struct{}, opt.MaxConcurrentStarts),
		ctx:       ctx,
		cancel:    cancel,
		regs:      map[regKey]*registration{},
		tenants:   map[string]*tenant{},
		pending:   map[*registration]struct{}{},
		starting:  map[*worker]struct{}{},
		releasing: map[*worker]struct{}{},
		demand:    map[string]demand{},
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
	switch {
	case s.closed:
		snap.Runtime = RuntimeClosed
	case s.failure != nil:
		snap.Runtime = RuntimeFailed
	}
	snap.Failure = s.failure
	return snap
}

// Plugin is a registration: one tenant's use of one plugin. Its calls queue in order and
// run one at a time on its one worker.
type Plugin struct {
	s *Scheduler
	r *registration
}

// Register registers the (tenant, plugin) pair with the worker profile and work class,
// with no callbacks. A pair can be registered once at a time (ErrRegistered); close the
// Plugin before registering it again, e.g. with another version.
func (s *Scheduler) Register(tenantName, plugin string, profile Profile, class WorkClass) (*Plugin, error) {
	return s.RegisterWithCallbacks(tenantName, plugin, profile, class, nil, nil)
}

// CallbackFunc is an application callback a plugin may ask for during a call. Its ctx
// is the call's, marked as a callback scope: a scheduled call made with it (or a context
// derived from it) is denied with ErrCallbackScope.
type CallbackFunc func(ctx context.Context, payload []byte) ([]byte, error)

// Callbacks are a registration's application callbacks, by name.
type Callbacks map[string]CallbackFunc

// RegisterWithCallbacks is Register with the application's callbacks and the grants, the
// names among them the plugin is allowed to call (both come from the authenticated
// application, never from the plugin). A callback the plugin asks for without a grant
// is refused (Snapshot.CallbackDenials); a grant must name a callback.
func (s *Scheduler) RegisterWithCallbacks(tenantName, plugin string, profile Profile, class WorkClass, callbacks Callbacks, grants []string) (*Plugin, error) {
	granted := map[string]bool{}
	for _, g := range grants {
		if callbacks[g] == nil {
			return nil, fmt.Errorf("register %s/%s: grant %q names no callback", tenantName, plugin, g)
		}
		granted[g] = true
	}
	switch {
	case profile.Reuse != ReuseNone && profile.Reuse != ReuseApprovedSessions:
		return nil, fmt.Errorf("register %s/%s: unknown profile Reuse %d", tenantName, plugin, int(profile.Reuse))
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
	if class == Heavy {
		if s.heavyRegs >= s.opt.MaxHeavyRegistrations {
			return nil, fmt.Errorf("register %s/%s: %w (%d heavy registrations)", tenantName, plugin, ErrHeavyLimit, s.heavyRegs)
		}
		s.heavyRegs++
	}
	t := s.tenants[tenantName]
	if t == nil {
		t = &tenant{name: tenantName}
		s.tenants[tenantName] = t
	}
	t.regs++
	r := &registration{tenant: t, plugin: plugin, profile: profile, class: class, key: poolKey(profile, class),
		callbacks: callbacks, grants: granted, retired: make(chan struct{})}
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
		for w := range s.starting {
			if !w.claimed {
				s.stopWorkerLocked(w)
			}
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := s.stopErrs
	if more := s.snap.StopFailures - uint64(len(errs)); more > 0 {
		errs = append(slices.Clone(errs), fmt.Errorf("and %d more workers whose stop failed", more))
	}
	return errors.Join(errs...)
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
	case ctx.Value(callbackScopeKey{}) != nil:
		s.snap.Rejected.CallbackScope++
		return nil, fmt.Errorf("%s/%s %s: %w", r.tenant.name, r.plugin, op, ErrCallbackScope)
	case s.failure != nil:
		s.snap.Rejected.Failed++
		return nil, fmt.Errorf("%s/%s: %w: %w", r.tenant.name, r.plugin, ErrFailed, s.failure)
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
	for e := s.idle.Front(); e != nil; {
		next := e.Next()
		w := e.Value.(*worker)
		timeout := s.opt.IdleTimeout
		if w.reg == nil {
			timeout = s.opt.ReusableIdleTimeout
		}
		if !w.pristine && now.Sub(w.idleSince) >= timeout {
			s.stopWorkerLocked(w)
			s.snap.IdleStops++
		}
		e = next
	}
	s.expireDemandLocked(now)
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
	switch {
	case w.ready != nil && w.bind:
		// a pristine or released worker: wait for its launch or cleanup if it is still
		// in progress, then bind it
		select {
		case <-w.ready:
			err = w.launchErr
		case <-ctx.Done():
			err = fmt.Errorf("waiting for a pristine worker to start: %w", ctx.Err())
		}
		if err == nil {
			err = s.bind(ctx, w, r)
		}
	case w.bind:
		err = s.bind(ctx, w, r)
	case c.cold:
		err = s.start(ctx, c, w)
	}
	var out []byte
	if err == nil {
		out, err = w.proc.Call(ctx, Request{Tenant: r.tenant.name, Plugin: r.plugin, Op: c.op, Payload: c.payload,
			Callback: s.callbackFor(r)})
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

// bind binds an unbound worker the call took to its registration.
func (s *Scheduler) bind(ctx context.Context, w *worker, r *registration) error {
	sw, ok := w.proc.(SessionWorker)
	if !ok {
		return fmt.Errorf("worker of profile %s cannot be bound: its launcher's workers are not SessionWorkers", w.profile.Name)
	}
	if err := sw.Bind(ctx, r.tenant.name, r.plugin); err != nil {
		return err
	}
	w.bind = false
	return nil
}

// callbackScopeKey marks a context as a callback's: scheduled calls made with it are
// denied.
type callbackScopeKey struct{}

// callbackFor returns the callback runner of r's calls: it refuses a name without a
// grant and runs a granted one in a callback scope.
func (s *Scheduler) callbackFor(r *registration) func(ctx context.Context, name string, payload []byte) ([]byte, error) {
	return func(ctx context.Context, name string, payload []byte) ([]byte, error) {
		s.mu.Lock()
		if !r.grants[name] {
			s.snap.CallbackDenials++
			s.mu.Unlock()
			return nil, fmt.Errorf("%s/%s: %w: %q", r.tenant.name, r.plugin, ErrNotGranted, name)
		}
		s.snap.Callbacks++
		s.mu.Unlock()
		return r.callbacks[name](context.WithValue(ctx, callbackScopeKey{}, r), payload)
	}
}

// failLocked records a cleanup failure: the first one stops admissions for good, ends
// every queued call with ErrFailed and shows in Snapshot.Failure and Snapshot.Runtime.
func (s *Scheduler) failLocked(err error) {
	if s.failure != nil || s.closed {
		return
	}
	s.failure = err
	now := s.opt.Clock.Now()
	for r := range s.pending {
		for _, c := range r.queue {
			s.dropLocked(c, now, fmt.Errorf("%s/%s: %w: %w", r.tenant.name, r.plugin, ErrFailed, err))
		}
		r.queue = nil
		delete(s.pending, r)
	}
}

// release cleans up an approved session's worker after its call, off the caller's path,
// and puts it into the clean pool; a failed cleanup stops the worker and admissions.
func (s *Scheduler) release(w *worker) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.opt.NormalTimeout)
	err := w.proc.(SessionWorker).Release(ctx)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.Releasing--
	delete(s.releasing, w)
	if err != nil {
		err = fmt.Errorf("cleaning up an approved session of profile %s: %w", w.profile.Name, err)
		w.launchErr = err
	} else {
		s.snap.Releases++
	}
	close(w.ready) // a call that claimed the worker meanwhile goes on (or fails with err)
	switch {
	case err != nil:
		s.snap.ReleaseFailures++
		s.stopWorkerLocked(w)
		s.failLocked(err)
	case w.claimed:
	case s.closed:
		s.stopWorkerLocked(w)
	default:
		w.bind = true
		s.idleLocked(w, s.opt.Clock.Now())
	}
	s.dispatchLocked()
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
		Reused:        c.reused,
		Pristine:      c.pristine,
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
	_, session := w.proc.(SessionWorker)
	switch {
	case keep && !s.closed && r.profile.Reuse == ReuseApprovedSessions && session && w.proc != nil:
		// the session goes back to the pool once its cleanup succeeds; the registration
		// keeps no residency
		r.worker = nil
		w.reg = nil
		w.claimed = false
		w.ready = make(chan struct{})
		s.releasing[w] = struct{}{}
		s.snap.Releasing++
		s.wg.Add(1)
		go s.release(w)
		if r.closed {
			s.retireLocked(r)
		}
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
		if r.class == Heavy {
			s.heavyRegs--
		}
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
