package freshness

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"
)

// frameBytes is the size of a frame's payload, which a worker digests as its real work.
const frameBytes = 4096

// Stats is the outcome of one run. Every generated frame is counted in exactly one of
// Usable, CompletedObsolete, DiscardedBeforeDispatch and Superseded.
type Stats struct {
	// Scenario and Policy name what ran.
	Scenario string
	Policy   Policy
	// Duration is the span of scenario time the frames were generated over.
	Duration time.Duration
	// Frames counts the generated frames.
	Frames int
	// Usable counts results delivered within max_age (stage C).
	Usable int
	// CompletedObsolete counts results delivered too old (stage C).
	CompletedObsolete int
	// DiscardedBeforeDispatch counts frames stage B discarded.
	DiscardedBeforeDispatch int
	// Superseded counts frames pushed out of a full queue by a newer one.
	Superseded int
	// Started counts frames started, per variant (indexed like Scenario.Variants).
	Started []int
	// Switches counts the started frames whose variant differs from the one started
	// before: what variant hysteresis keeps down.
	Switches int
	// DeadlineMissed counts delivered results later than the promise (generation +
	// Deadline), usable or not: the cost of an optimistic start.
	DeadlineMissed int
	// Doctor is the doctor's diagnosis of the scenario, made before the run (Run
	// always runs it first).
	Doctor Diagnosis
	// Compute is the worker time spent on all results; StaleCompute the part spent on
	// completed obsolete ones. Both are scenario times.
	Compute, StaleCompute time.Duration
	// Ages holds the age at delivery of every delivered result, usable or not, sorted.
	Ages []time.Duration
	// Checksum combines the digests the workers computed, so the work cannot be
	// optimised away and two runs of the same frames can be compared.
	Checksum uint64
}

// UsablePerSecond returns usable results per second of scenario time.
func (s Stats) UsablePerSecond() float64 {
	if s.Duration <= 0 {
		return 0
	}
	return float64(s.Usable) / s.Duration.Seconds()
}

// AgeQuantile returns the q-quantile (0 < q <= 1, nearest rank) of the ages at delivery,
// and false when nothing was delivered.
func (s Stats) AgeQuantile(q float64) (time.Duration, bool) {
	n := len(s.Ages)
	if n == 0 {
		return 0, false
	}
	i := int(q*float64(n)+0.9999999) - 1
	return s.Ages[min(max(i, 0), n-1)], true
}

// frame is one generated frame.
type frame struct {
	id     int
	gen    time.Duration // generation time, scenario time
	z      float64       // difficulty: a standard normal draw, the same for every variant
	digest uint64        // written by the worker's work, read by its done
}

// scheduler is the state of one run. Only the clock's loop touches it.
type scheduler struct {
	sc     Scenario
	policy Policy
	clock  Clock
	seed   uint64
	rng    *rand.Rand
	t0     time.Duration // scenario time of frame 0's generation
	frames int           // frames to generate
	next   int           // the next frame to generate
	queue  []*frame
	idle   []int // idle workers, used from the end
	stats  Stats
	// level is the current variant under hysteresis (an index into the variants; 0 is
	// the most preferred), stable counts the decisions in a row that would have allowed
	// the next more preferred one, last is the variant started last (-1: none yet).
	level, stable, last int
}

// Run runs the scenario with the given stage B policy on clock and returns its Stats.
// The frames (their times and difficulties) depend only on the scenario and the seed, so
// every policy and every clock sees the same frames. Run returns when every frame has an
// outcome, or with ctx's error.
//
// Before anything runs, Run has the doctor check the scenario's contract and keeps the
// diagnosis in Stats.Doctor: an over-committed contract still runs (the experiments
// measure exactly such contracts), but nobody can run one without its diagnosis.
func Run(ctx context.Context, clock Clock, sc Scenario, p Policy, seed uint64) (Stats, error) {
	diag, err := Doctor(sc)
	if err != nil {
		return Stats{}, err
	}
	s := &scheduler{sc: sc, policy: p, clock: clock, seed: seed,
		rng:    rand.New(rand.NewPCG(seed, 0x66726573686e6573)), // "freshnes"
		frames: sc.Frames(), t0: clock.Now(), last: -1}
	s.stats = Stats{Scenario: sc.Name, Policy: p, Duration: sc.Duration, Started: make([]int, len(sc.Variants)), Doctor: diag}
	for w := sc.Workers - 1; w >= 0; w-- {
		s.idle = append(s.idle, w)
	}
	s.arrangeNext()
	if err := clock.Run(ctx); err != nil {
		return Stats{}, err
	}
	slices.Sort(s.stats.Ages)
	return s.stats, nil
}

// Simulate runs the scenario on a new VirtualClock: deterministic and instant.
func Simulate(sc Scenario, p Policy, seed uint64) (Stats, error) {
	return Run(context.Background(), NewVirtualClock(), sc, p, seed)
}

// arrangeNext arranges the arrival of the next frame, Transport after its generation.
func (s *scheduler) arrangeNext() {
	if s.next >= s.frames {
		return
	}
	f := &frame{id: s.next, gen: s.t0 + time.Duration(s.next)*s.sc.Interval(), z: s.rng.NormFloat64()}
	s.next++
	s.stats.Frames++
	s.clock.AfterFunc(f.gen+s.sc.Transport-s.clock.Now(), func() { s.arrive(f) })
}

// arrive queues a frame that reached the scheduler and dispatches what it can.
func (s *scheduler) arrive(f *frame) {
	s.arrangeNext()
	if len(s.queue) >= s.sc.QueueCap {
		s.queue = s.queue[1:]
		s.stats.Superseded++
	}
	s.queue = append(s.queue, f)
	s.dispatch()
}

// dispatch runs stage B on head frames while a worker is idle.
func (s *scheduler) dispatch() {
	for len(s.idle) > 0 && len(s.queue) > 0 {
		f := s.queue[0]
		s.queue = s.queue[1:]
		now := s.clock.Now()
		d := s.sc.DecideFrom(s.policy, f.gen, now, s.level)
		s.hysteresis(f, now, d)
		if !d.Start {
			s.stats.DiscardedBeforeDispatch++
			continue
		}
		if s.last >= 0 && d.Variant != s.last {
			s.stats.Switches++
		}
		s.last = d.Variant
		w := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		rt := s.sc.Variants[d.Variant].Runtime(f.z)
		s.stats.Started[d.Variant]++
		seed := s.seed
		s.clock.Work(w, rt, func() { f.digest = digest(seed, f.id) }, func() { s.complete(w, f, rt) })
	}
}

// hysteresis moves the current variant after a decision, when the scenario has
// hysteresis: down at once to the variant the frame needed (the feasible one, or the
// fastest when none was), up by one only after After decisions in a row in which the next
// more preferred variant would have kept the promise with Reserve to spare.
func (s *scheduler) hysteresis(f *frame, now time.Duration, d Decision) {
	h := s.sc.Hysteresis
	if h == nil {
		return
	}
	need := s.sc.Fastest()
	if d.Feasible {
		need = d.Variant
	}
	if need > s.level {
		s.level, s.stable = need, 0
		return
	}
	if s.level == 0 {
		return
	}
	better := s.sc.Variants[s.level-1]
	if now+better.Conservative()+h.Reserve <= f.gen+s.sc.DeadlineAfterGen() {
		s.stable++
	} else {
		s.stable = 0
	}
	if s.stable >= h.After {
		s.level, s.stable = s.level-1, 0
	}
}

// complete is stage C for a finished frame; the worker becomes idle again.
func (s *scheduler) complete(w int, f *frame, rt time.Duration) {
	now := s.clock.Now()
	s.stats.Compute += rt
	s.stats.Ages = append(s.stats.Ages, now-f.gen)
	s.stats.Checksum ^= f.digest
	if now-f.gen > s.sc.DeadlineAfterGen() {
		s.stats.DeadlineMissed++
	}
	if s.sc.Usable(f.gen, now) {
		s.stats.Usable++
	} else {
		s.stats.CompletedObsolete++
		s.stats.StaleCompute += rt
	}
	s.idle = append(s.idle, w)
	s.dispatch()
}

// digest is a worker's real work: the FNV-1a hash of a frame's pseudo-random payload.
func digest(seed uint64, id int) uint64 {
	var buf [frameBytes]byte
	x := seed ^ uint64(id)*0x9e3779b97f4a7c15
	for i := 0; i < len(buf); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(buf[i:], x)
	}
	h := fnv.New64a()
	h.Write(buf[:])
	return h.Sum64()
}
