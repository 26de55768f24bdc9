//go:build linux

package harness

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// MeasureOthers reads Linux's /proc/stat; elsewhere it reports 0, so this test is Linux's.

func TestMeasureOthersSeesAnotherProcess(t *testing.T) {
	if _, _, ok := cpuTimes(); !ok {
		t.Fatal("cannot read /proc/stat: MeasureOthers measures nothing, and every receipt's host load is missing")
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
