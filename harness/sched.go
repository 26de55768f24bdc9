package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/receipt"
)

// schedCounter reads what the kernel counted for every thread of one process:
// /proc/PID/task/*/schedstat gives each thread's time on a CPU and its time runnable but
// waiting in a run queue (its run-queue delay), in nanoseconds. A thread that exits takes
// its counts with it, so each thread's last reading is kept and the sums never fall.
type schedCounter struct {
	pid  int
	last map[string][2]int64 // thread ID -> on-CPU and run-queue nanoseconds last read
}

func newSchedCounter(pid int) *schedCounter {
	return &schedCounter{pid: pid, last: map[string][2]int64{}}
}

// read returns the process's on-CPU time and run-queue delay so far, summed over every
// thread it has had. ok is false when the kernel gives no schedstat (no /proc, or a kernel
// without CONFIG_SCHED_INFO).
func (c *schedCounter) read() (cpu, wait time.Duration, ok bool) {
	dir := filepath.Join("/proc", strconv.Itoa(c.pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil && len(c.last) == 0 {
		return 0, 0, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited between the listing and the read
		}
		f := strings.Fields(string(bytes.TrimSpace(b)))
		if len(f) < 2 {
			continue
		}
		on, err1 := strconv.ParseInt(f[0], 10, 64)
		rq, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			c.last[t.Name()] = [2]int64{on, rq}
		}
	}
	if len(c.last) == 0 {
		return 0, 0, false
	}
	var on, rq int64
	for _, v := range c.last {
		on, rq = on+v[0], rq+v[1]
	}
	return time.Duration(on), time.Duration(rq), true
}

// LineStamp is what the kernel had counted for a process when one line of its output had
// arrived: the moment, its threads' time on a CPU and their run-queue delay, all since the
// process started.
type LineStamp struct {
	// Line is the 1-based number of the output line.
	Line int
	At   time.Duration
	CPU  time.Duration
	Wait time.Duration
}

// lineStamper takes a LineStamp for every line of a process's output as it arrives.
type lineStamper struct {
	counter *schedCounter
	start   time.Time
	lines   int
	stamps  []LineStamp
	ok      bool
}

// seen records that n more lines have arrived; they share one reading of the counters
// (lines that arrive in one read were written at once).
func (s *lineStamper) seen(n int) {
	if n == 0 {
		return
	}
	cpu, wait, ok := s.counter.read()
	s.ok = s.ok || ok
	at := time.Since(s.start)
	for range n {
		s.lines++
		s.stamps = append(s.stamps, LineStamp{Line: s.lines, At: at, CPU: cpu, Wait: wait})
	}
}

// Intervals returns, for the output lines given (1-based, increasing), what the kernel
// counted over each line's interval: from the line before it (the start of the process for
// the first line) to the line itself. A line whose interval took no measurable time (it
// arrived in one read with the line before) has a zero interval. Nil when stamps is empty.
func Intervals(stamps []LineStamp, lines []int) []receipt.Interval {
	if len(stamps) == 0 {
		return nil
	}
	at := func(line int) LineStamp {
		if line < 1 || line > len(stamps) {
			return LineStamp{}
		}
		return stamps[line-1]
	}
	out := make([]receipt.Interval, len(lines))
	for i, l := range lines {
		a, b := at(l-1), at(l)
		if b.Line == 0 || b.At <= a.At {
			continue
		}
		out[i] = receipt.Interval{WallNs: int64(b.At - a.At), CPUNs: int64(max(0, b.CPU-a.CPU)), WaitNs: int64(max(0, b.Wait-a.Wait))}
	}
	return out
}

// newStamper returns the stamper of a process's output lines and the function capture
// calls with each read's line count; nil and nil when the command asked for none.
func newStamper(stamp bool, pid int, start time.Time) (*lineStamper, func(int)) {
	if !stamp {
		return nil, nil
	}
	s := &lineStamper{counter: newSchedCounter(pid), start: start}
	return s, s.seen
}

// hostCounters are what the host had counted when a process started: the machine's steal
// time and flipbench's cgroup's throttled time, each with whether it could be read.
type hostCounters struct {
	steal                int64
	throttled            time.Duration
	stealOK, throttledOK bool
}

func startHostCounters() hostCounters {
	var h hostCounters
	h.steal, h.stealOK = stealTicks()
	h.throttled, h.throttledOK = throttled()
	return h
}

// end returns what the host counted over the process's life; the caller adds its CPU time.
func (h hostCounters) end() *receipt.ProcessSched {
	s := &receipt.ProcessSched{}
	if steal, ok := stealTicks(); ok && h.stealOK {
		s.StealNs = (steal - h.steal) * int64(10*time.Millisecond) // USER_HZ is 100 on Linux
	}
	if thr, ok := throttled(); ok && h.throttledOK {
		s.ThrottledNs = int64(thr - h.throttled)
	}
	return s
}

// stealTicks returns the machine's steal time so far (the time a hypervisor gave its
// CPUs to other guests), in USER_HZ ticks from /proc/stat, and false where it cannot be
// read.
func stealTicks() (int64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	// cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	v, err := strconv.ParseInt(f[8], 10, 64)
	return v, err == nil
}

// throttled returns how long the cgroup flipbench runs in was held back by its CPU limit
// so far (cpu.stat's throttled time, cgroup v2 or v1), and false where it has no limit to
// report.
func throttled() (time.Duration, bool) {
	for _, p := range []struct {
		file, key string
		unit      time.Duration
	}{{"/sys/fs/cgroup/cpu.stat", "throttled_usec", time.Microsecond}, {"/sys/fs/cgroup/cpu/cpu.stat", "throttled_time", time.Nanosecond}} {
		b, err := os.ReadFile(p.file)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
			if ok && k == p.key {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					return time.Duration(n) * p.unit, true
				}
			}
		}
	}
	return 0, false
}

// SchedstatErr says why this machine's kernel gives no per-thread schedstat (nil when it
// does), read from this process's own first thread.
func SchedstatErr() error {
	_, _, ok := newSchedCounter(os.Getpid()).read()
	if !ok {
		return fmt.Errorf("/proc/%d/task/*/schedstat unreadable (a kernel without CONFIG_SCHED_INFO, or no /proc)", os.Getpid())
	}
	return nil
}

// PlacementOf says where a run with lane CPUs lanes (nil: unpinned) puts its lanes and
// flipbench's own threads, for doctor.
func PlacementOf(lanes []int) string {
	if len(lanes) == 0 {
		_, why := LanePlacement()
		return "the run places no lane (protocol.cpus, --cpus): the operating system places them; compare, the gate and bisect would place them by default: " + why
	}
	s := "every lane process " + cpuset.Placement(lanes)
	if own := OwnPlacement(lanes); len(own) > 0 {
		s += ", flipbench's own threads " + strings.TrimPrefix(cpuset.Placement(own), "pinned ")
	}
	return s
}
