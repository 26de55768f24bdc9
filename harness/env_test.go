package harness

import (
	"os/exec"
	"testing"
	"time"
)

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
