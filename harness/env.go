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

	"github.com/flipbench/flipbench/model/receipt"
)

// CaptureEnv records the state of the host: load, CPU, governor, memory and free disk under
// dir. Values that cannot be read on this system are left empty. A host short of disk gets
// a warning that says what to do. The load average is recorded but not warned on: it
// counts the lanes just measured; the runner measures what other processes use instead
// (see OthersMeter).
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
		var swapTotal, swapFree int64
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
			case "SwapTotal:":
				swapTotal = kb * 1024
			case "SwapFree:":
				swapFree = kb * 1024
			}
		}
		s.SwapUsedBytes = max(0, swapTotal-swapFree)
	}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil {
		s.DiskFreeBytes = int64(st.Bavail) * st.Bsize
	}
	where := fmt.Sprintf("%s pass %d of collection %d", when, pass, collection)
	if s.DiskFreeBytes > 0 && s.DiskFreeBytes < 1<<30 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("low disk %s: %d MiB free under %s; free some space, since a nearly full disk slows I/O-bound lanes", where, s.DiskFreeBytes>>20, dir))
	}
	return s
}
