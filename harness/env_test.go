package harness

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestBusyPctSeesOtherWork(t *testing.T) {
	if _, _, ok := cpuTimes(); !ok {
		t.Skip("no /proc/stat here")
	}
	// Keep every CPU busy: whatever else the machine does, at least half of it is busy.
	var stop atomic.Bool
	for range runtime.NumCPU() {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	busy := busyPct(200 * time.Millisecond)
	stop.Store(true)
	if busy < 50 || busy > 100 {
		t.Fatalf("busy %.0f%% with every CPU spinning, want at least 50%%", busy)
	}
}

func TestCaptureEnvReadsTheHost(t *testing.T) {
	s := CaptureEnv("before", 1, 2, time.Unix(0, 0), t.TempDir())
	if s.When != "before" || s.Collection != 1 || s.Pass != 2 || s.CPUs < 1 || s.GoVersion == "" || s.DiskFreeBytes <= 0 {
		t.Fatalf("snapshot %+v", s)
	}
	if s.BusyPct < 0 || s.BusyPct > 100 {
		t.Fatalf("busy %.1f%%", s.BusyPct)
	}
}
