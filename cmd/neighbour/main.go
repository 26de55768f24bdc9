// Command neighbour is the seeded bursty spinner that every busy-host claim of flipbench
// names as its load: a few processes, each spinning on a CPU in bursts of random length
// with random pauses between them, as other work on a shared machine does. It is how the
// project loads a host on purpose, so that a measurement "with a neighbour" can be made
// again by anyone (docs/busy-host.md).
//
//	neighbour -procs 3 -demand 2 -seed 1 -for 10m          # about 2 CPUs of demand, unpinned
//	neighbour -procs 3 -demand 2 -seed 1 -pin 1 -pinned 1  # one of them pinned to CPU 1
//
// Each process alternates a burst of busy spinning, of a length drawn uniformly from
// -burst-min to -burst-max, with a pause drawn so that its share of busy time is
// demand/procs on average. The draws come from the seed (each process its own stream), so
// a seed names one load pattern. Every process runs in a session of its own (setsid), as
// a separate tenant would, so the kernel's autogroup does not lump them with the lanes
// being measured. It stops after -for, on SIGINT or SIGTERM, and when its parent dies.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/flipbench/flipbench/internal/cpuset"
)

// options are the spinner's flags.
type options struct {
	procs              int
	demand             float64
	seed               uint64
	burstMin, burstMax time.Duration
	dur                time.Duration
	pin                string
	pinned             int
	worker             int // >0 in a spinning child: its index, 1-based
}

func main() {
	var o options
	flag.IntVar(&o.procs, "procs", 3, "spinning processes")
	flag.Float64Var(&o.demand, "demand", 2, "CPUs of demand, all processes together (each spins demand/procs of the time)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the bursts and pauses")
	flag.DurationVar(&o.burstMin, "burst-min", 20*time.Millisecond, "shortest burst")
	flag.DurationVar(&o.burstMax, "burst-max", 200*time.Millisecond, "longest burst")
	flag.DurationVar(&o.dur, "for", 10*time.Minute, "how long to run")
	flag.StringVar(&o.pin, "pin", "", "a CPU list (taskset -c form) the first -pinned processes are pinned to")
	flag.IntVar(&o.pinned, "pinned", 0, "how many processes are pinned to -pin")
	flag.IntVar(&o.worker, "worker", 0, "internal: spin as worker N")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "neighbour:", err)
		os.Exit(2)
	}
}

// run checks the options and starts the workers, or spins as one.
func run(o options) error {
	switch {
	case o.procs < 1:
		return fmt.Errorf("-procs %d: want at least 1", o.procs)
	case !(o.demand > 0) || o.demand > float64(o.procs):
		return fmt.Errorf("-demand %g: want more than 0 and at most -procs (%d): each process spins at most all of the time", o.demand, o.procs)
	case o.burstMin <= 0 || o.burstMax < o.burstMin:
		return fmt.Errorf("-burst-min %v, -burst-max %v: want 0 < min <= max", o.burstMin, o.burstMax)
	case o.dur <= 0:
		return fmt.Errorf("-for %v: want a positive duration", o.dur)
	case o.pinned < 0 || o.pinned > o.procs || (o.pinned > 0) != (o.pin != ""):
		return fmt.Errorf("-pin %q -pinned %d: give both, with -pinned at most -procs", o.pin, o.pinned)
	}
	if o.worker > 0 {
		spin(o)
		return nil
	}
	return supervise(o)
}

// supervise starts one worker process per -procs, each in a session of its own, waits
// for them, and ends them when it is stopped.
func supervise(o options) error {
	var cpus []int
	if o.pin != "" {
		var err error
		if cpus, err = cpuset.Parse(o.pin); err != nil {
			return fmt.Errorf("-pin %q: %w", o.pin, err)
		}
	}
	var kids []*exec.Cmd
	runtime.LockOSThread() // Pdeathsig follows the thread that started the child
	for i := 1; i <= o.procs; i++ {
		args := []string{"-worker", strconv.Itoa(i), "-procs", strconv.Itoa(o.procs), "-demand", strconv.FormatFloat(o.demand, 'g', -1, 64),
			"-seed", strconv.FormatUint(o.seed, 10), "-burst-min", o.burstMin.String(), "-burst-max", o.burstMax.String(), "-for", o.dur.String()}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if i <= o.pinned {
			restore, err := cpuset.PinThread(cpus)
			if err != nil {
				return err
			}
			err = cmd.Start()
			restore()
			if err != nil {
				return err
			}
		} else if err := cmd.Start(); err != nil {
			return err
		}
		kids = append(kids, cmd)
	}
	where := "unpinned"
	if o.pinned > 0 {
		where = fmt.Sprintf("%d pinned to CPUs %s", o.pinned, o.pin)
	}
	fmt.Fprintf(os.Stderr, "neighbour: %d processes, %g CPUs of demand (%.0f%% each), bursts %v to %v, seed %d, %s, for %v\n",
		o.procs, o.demand, 100*o.demand/float64(o.procs), o.burstMin, o.burstMax, o.seed, where, o.dur)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for _, k := range kids {
			k.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-stop:
		for _, k := range kids {
			k.Process.Kill()
		}
		<-done
	}
	return nil
}

// spin is one worker: bursts of busy spinning and pauses (schedule), until -for has passed.
func spin(o options) {
	next := schedule(o)
	end := time.Now().Add(o.dur)
	for time.Now().Before(end) {
		burst, pause := next()
		until := time.Now().Add(burst)
		for x := uint64(1); time.Now().Before(until); x++ {
			x ^= x << 13 // work the CPU without touching memory
		}
		time.Sleep(pause)
	}
}

// schedule returns worker o.worker's stream of bursts and pauses, drawn from its own
// stream of the seed: a burst uniform from -burst-min to -burst-max, then a pause uniform
// from 0 to twice burst x (1-duty)/duty, so that the worker is busy demand/procs of the
// time on average.
func schedule(o options) func() (burst, pause time.Duration) {
	rng := rand.New(rand.NewPCG(o.seed, uint64(o.worker)))
	duty := o.demand / float64(o.procs)
	span := float64(o.burstMax - o.burstMin)
	return func() (time.Duration, time.Duration) {
		burst := o.burstMin + time.Duration(rng.Float64()*span)
		mean := float64(burst) * (1 - duty) / duty
		return burst, time.Duration(2 * mean * rng.Float64())
	}
}
