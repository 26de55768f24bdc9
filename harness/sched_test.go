package harness

import (
	"os"
	"testing"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
)

func TestIntervals(t *testing.T) {
	ms := time.Millisecond
	stamps := []LineStamp{
		{Line: 1, At: 1 * ms, CPU: 1 * ms},                    // goos: linux
		{Line: 2, At: 101 * ms, CPU: 91 * ms, Wait: 5 * ms},   // warmup result
		{Line: 3, At: 201 * ms, CPU: 141 * ms, Wait: 55 * ms}, // a sample half descheduled
		{Line: 4, At: 201 * ms, CPU: 141 * ms, Wait: 55 * ms}, // arrived in one read with 3
		{Line: 5, At: 301 * ms, CPU: 241 * ms, Wait: 55 * ms}, // a clean sample
	}
	got := Intervals(stamps, []int{3, 4, 5, 9})
	want := []receipt.Interval{
		{WallNs: int64(100 * ms), CPUNs: int64(50 * ms), WaitNs: int64(50 * ms)},
		{},
		{WallNs: int64(100 * ms), CPUNs: int64(100 * ms)},
		{},
	}
	if len(got) != len(want) {
		t.Fatalf("%d intervals, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("interval %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].WaitShare() != 0.5 || got[1].Measured() || got[2].WaitShare() != 0 {
		t.Errorf("shares %v %v %v", got[0].WaitShare(), got[1].Measured(), got[2].WaitShare())
	}
	if Intervals(nil, []int{1}) != nil {
		t.Error("intervals without stamps")
	}
}

// The counter reads this process's threads: their on-CPU time grows with work done, and
// the sums never fall.
func TestSchedCounterReadsThisProcess(t *testing.T) {
	c := newSchedCounter(os.Getpid())
	cpu0, wait0, ok := c.read()
	if !ok {
		t.Fatal("no schedstat for this process: flipbench measures interference from /proc/PID/task/*/schedstat (CONFIG_SCHED_INFO)")
	}
	deadline := time.Now().Add(30 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	cpu1, wait1, _ := c.read()
	if cpu1 <= cpu0 || wait1 < wait0 {
		t.Errorf("on-CPU %v -> %v, run-queue delay %v -> %v: want the first to grow and neither to fall", cpu0, cpu1, wait0, wait1)
	}
}
