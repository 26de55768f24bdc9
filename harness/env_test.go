package harness

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestMeasureOthersSeesAnotherProcess(t *testing.T) {
	if _, _, ok := cpuTimes(); !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("cannot read /proc/stat on Linux: MeasureOthers measures nothing, and every receipt's host load is missing")
		}
		t.Skip("no /proc/stat on " + runtime.GOOS + ": MeasureOthers reads Linux's")
	}
	// Another process spinning on one CPU: at least a good part of one CPU is others'.
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	stop := MeasureOthers()
	time.Sleep(300 * time.Millisecond)
	others := stop()
	spin.Process.Kill()
	spin.Wait()
	if min := 50.0 / float64(runtime.NumCPU()); others < min {
		t.Fatalf("others used %.0f%% with a process spinning on one of %d CPUs, want at least %.0f%%", others, runtime.NumCPU(), min)
	}
}

func TestOwnCPUCountsThisProcessAndItsLanes(t *testing.T) {
	// MeasureOthers subtracts ownCPU from the machine's busy time, so ownCPU must see this
	// process's work and that of the lanes it waited for.
	start := ownCPU()
	deadline := time.Now().Add(10 * time.Second)
	for ownCPU()-start < 100*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("ownCPU did not see 100 ms of this process spinning")
		}
	}
	before := ownCPU()
	if err := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	if ownCPU() <= before {
		t.Fatal("ownCPU did not count the CPU time of a waited-for child")
	}
}

func TestCaptureEnvReadsTheHost(t *testing.T) {
	s := CaptureEnv("before", 1, 2, time.Unix(0, 0), t.TempDir())
	if s.When != "before" || s.Collection != 1 || s.Pass != 2 || s.CPUs < 1 || s.GoVersion == "" || s.DiskFreeBytes <= 0 {
		t.Fatalf("snapshot %+v", s)
	}
}
