package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flipbench/flipbench/receipt"
)

// CaptureEnv records the state of the host: load, CPU, governor, memory, free disk under
// dir, and how busy other processes keep the CPU. Values that cannot be read on this system
// are left empty. A host that is busy (other processes using a quarter of the CPU or more
// while flipbench runs nothing) or short of disk gets a warning that says what to do. The
// load average is recorded but not warned on: it counts the lanes just measured.
func CaptureEnv(when string, collection, pass int, now time.Time, dir string) receipt.Snapshot {
	s := receipt.Snapshot{
		When:       when,
		Collection: collection,
		Pass:       pass,
		Time:       now.UTC(),
		CPUs:       runtime.NumCPU(),
		GoVersion:  runtime.Version(),
	}
	s.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		s.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			s.Load1, _ = strconv.ParseFloat(f[0], 64)
			s.Load5, _ = strconv.ParseFloat(f[1], 64)
			s.Load15, _ = strconv.ParseFloat(f[2], 64)
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				s.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); err == nil {
		s.Governor = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 {
				continue
			}
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "MemTotal:":
				s.MemTotalBytes = kb * 1024
			case "MemAvailable:":
				s.MemAvailBytes = kb * 1024
			}
		}
	}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil {
		s.DiskFreeBytes = int64(st.Bavail) * st.Bsize
	}
	s.BusyPct = busyPct(busyWindow)
	where := fmt.Sprintf("%s pass %d of collection %d", when, pass, collection)
	if s.BusyPct >= busyWarnPct {
		s.Warnings = append(s.Warnings, fmt.Sprintf("host busy %s: other processes used %.0f%% of the CPU while flipbench ran nothing; stop other work on this machine or rerun, since a busy host adds noise and drift", where, s.BusyPct))
	}
	if s.DiskFreeBytes > 0 && s.DiskFreeBytes < 1<<30 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("low disk %s: %d MiB free under %s; free some space, since a nearly full disk slows I/O-bound lanes", where, s.DiskFreeBytes>>20, dir))
	}
	return s
}

// The busy check: how long to watch the CPU between runs, and what share of the machine
// used by others is worth a warning (a quarter: half a core on a 2-core machine).
const (
	busyWindow  = 100 * time.Millisecond
	busyWarnPct = 25
)

// busyPct watches /proc/stat for window and returns the share of CPU time spent busy, in
// percent of all CPUs; 0 when it cannot be read. It is called between runs, when no lane
// is running, so the busy time is other processes'.
func busyPct(window time.Duration) float64 {
	idle0, total0, ok := cpuTimes()
	if !ok {
		return 0
	}
	time.Sleep(window)
	idle1, total1, ok := cpuTimes()
	if !ok || total1 <= total0 {
		return 0
	}
	return 100 * (1 - float64(idle1-idle0)/float64(total1-total0))
}

// cpuTimes reads the aggregate idle (idle + iowait) and total jiffies from /proc/stat.
func cpuTimes() (idle, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, x := range f[1:] {
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 { // guest time is already counted in user time
			break
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return idle, total, true
}
