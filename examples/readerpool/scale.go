package readerpool

import "runtime"

// Scale is the size of a pool chosen for the CPUs a process may run on: the lanes of
// experiments 266 and 275 and the release suite open their pools at it, so that the
// pool's shape follows the machine the lanes run on instead of being fixed at the four
// workers of the original experiments.
type Scale struct {
	// CPUs is the number of CPUs the process may run on.
	CPUs int
	// Workers is the pool size for them: see ScaleFor.
	Workers int
}

// MaxScaledWorkers is the largest pool ScaleFor chooses: the four workers of the
// original experiments, reached on a machine with four CPUs or more.
const MaxScaledWorkers = 4

// MinScaledWorkers is the smallest pool ScaleFor chooses, even on one CPU: two workers
// are the least that tell spreading reads from serialising them, or sticky dispatch from
// rotation (the original library's own pool never has fewer).
const MinScaledWorkers = 2

// ScaleFor returns the scale for a process that may run on cpus CPUs: one worker per
// CPU, at least MinScaledWorkers and at most MaxScaledWorkers. With a CPU for every
// worker, every worker a policy keeps back is a core a concurrent read could have used,
// which is what the original experiments measured on a machine with a core per worker;
// a pool larger than the CPUs is bound by the CPUs, not by its workers, so withholding a
// worker costs nothing there.
func ScaleFor(cpus int) Scale {
	return Scale{CPUs: cpus, Workers: min(max(cpus, MinScaledWorkers), MaxScaledWorkers)}
}

// ProcessScale returns the scale for the CPUs this process may run on:
// runtime.NumCPU, which on Linux counts the CPUs of the affinity mask the process
// started with, so a process that flipbench starts pinned (protocol.cpus) sees only its
// pinned CPUs. Unlike GOMAXPROCS, it does not change when a lane or the environment
// (GOMAXPROCS=1 for counted lanes) sets the number of Ps, so a counted lane and its
// timed companion build the same pool.
func ProcessScale() Scale {
	return ScaleFor(runtime.NumCPU())
}
