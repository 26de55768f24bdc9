package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flipbench/flipbench/internal/cpuset"
)

// OthersMeter starts measuring how much of the machine's CPU other processes use; the
// function it returns stops and gives that share in percent of all CPUs. The runner wraps
// every pass in it: the machine's busy time less flipbench's own and its lanes' (which the
// lanes' rusage accounts for) is what other work took while the pass ran. It costs two
// reads of /proc/stat and never sleeps.
type OthersMeter func() (stop func() float64)

// busyWarnPct is the share of the machine used by others that is worth a warning: a
// quarter (half a core on a 2-core machine).
const busyWarnPct = 25

// idleWindow is how long the runner watches the machine before its first pass, so that a
// busy host is reported before anything is measured.
const idleWindow = 50 * time.Millisecond

// FixedOthers is an OthersMeter that measures nothing and reports pct for every pass:
// for a machine that runs many flipbench processes at once on purpose (the test scripts),
// where what they take of each other is not a host's burst (FLIPBENCH_OTHERS_PCT).
func FixedOthers(pct float64) OthersMeter {
	return func() func() float64 { return func() float64 { return pct } }
}

// MeasureOthers is the real OthersMeter, from /proc/stat and rusage. Where /proc/stat
// cannot be read it reports 0.
func MeasureOthers() (stop func() float64) {
	busy0, total0, ok0 := cpuTimes()
	own0 := ownCPU()
	return func() float64 {
		busy1, total1, ok1 := cpuTimes()
		if !ok0 || !ok1 || total1 <= total0 {
			return 0
		}
		// /proc/stat counts in USER_HZ ticks, 100 per second on Linux.
		own := (ownCPU() - own0).Seconds() * 100
		others := float64(busy1-busy0) - own
		return max(0, min(100, 100*others/float64(total1-total0)))
	}
}

// ownCPU is the CPU time used by this process and its waited-for children (the lanes).
func ownCPU() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// cpuTimes reads the aggregate busy and total ticks of all CPUs from /proc/stat (idle and
// iowait count as not busy; guest time is already part of user time).
func cpuTimes() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	var idle uint64
	for i, x := range f[1:min(len(f), 9)] { // user nice system idle iowait irq softirq steal
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return total - idle, total, true
}

// LanePlacement returns the CPUs a run's lane processes go on when neither the page nor
// the flags name any (compare, gate and bisect): every CPU flipbench may use but the
// first, which is left to flipbench's own threads, host snapshots and progress, so they
// never take a lane's CPU (OwnPlacement); nil where flipbench has one CPU, which lanes
// then share with it. why says what was chosen and why, for doctor and the run's notes.
func LanePlacement() (cpus []int, why string) {
	all, err := cpuset.Allowed()
	switch {
	case err != nil:
		return nil, fmt.Sprintf("lanes unpinned: %v", err)
	case len(all) < 2:
		return nil, fmt.Sprintf("lanes unpinned: flipbench has one CPU (%s), which its lanes share with it", cpuset.Format(all))
	}
	lanes := all[1:]
	return lanes, fmt.Sprintf("every lane process %s (GOMAXPROCS %d unless a lane sets its own), flipbench's own threads on CPU %d, so that its snapshots and progress never take a lane's CPU; --cpus chooses others",
		cpuset.Placement(lanes), len(lanes), all[0])
}

// OwnPlacement returns the CPUs flipbench's own threads keep to while lanes run on lanes:
// every CPU flipbench may use but theirs; nil (stay where they are) when that leaves none.
func OwnPlacement(lanes []int) []int {
	if len(lanes) == 0 {
		return nil
	}
	all, err := cpuset.Allowed()
	if err != nil {
		return nil
	}
	return cpuset.Without(all, lanes)
}
