package owner

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestID(t *testing.T) {
	self := Self()
	if self.PID != os.Getpid() || self.Start == 0 {
		t.Fatalf("Self() = %+v", self)
	}
	if !self.Alive() {
		t.Fatal("this process is not alive")
	}
	if (ID{PID: self.PID, Start: self.Start + 1}).Alive() {
		t.Fatal("a pid with another start time counts as this process")
	}
	back, ok := ParseID(self.String())
	if !ok || back != self {
		t.Fatalf("ParseID(%q) = %+v, %v", self.String(), back, ok)
	}
	for _, bad := range []string{"", "12", "x.1", "1.x", "-1.5", "0.5"} {
		if _, ok := ParseID(bad); ok {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

// start runs sleep with the given mark and returns it; the test reaps it.
func start(t *testing.T, mark string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func pids(ps []Proc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}

// A process marked by this process is found by its tag; one marked by an owner that is no
// longer alive is an orphan, and EndOrphans ends it.
func TestMarkedAndOrphans(t *testing.T) {
	mine := start(t, Mark("run-1"))
	dead := ID{PID: os.Getpid(), Start: Self().Start + 7}
	orphan := start(t, EnvVar+"="+dead.String()+"/run-9")

	got, err := Marked(func(id ID, tag string) bool { return id == Self() && tag == "run-1" })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids(got), []int{mine.Process.Pid}) || got[0].Cmd != "sleep 30" {
		t.Fatalf("Marked(run-1) = %v, want only pid %d (sleep 30)", got, mine.Process.Pid)
	}
	orphans, err := Orphans()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids(orphans), orphan.Process.Pid) || slices.Contains(pids(orphans), mine.Process.Pid) {
		t.Fatalf("Orphans() = %v, want pid %d and not %d", orphans, orphan.Process.Pid, mine.Process.Pid)
	}
	// Any flipbench on the machine ends orphans when it starts (go test ./... runs the
	// command's scripts beside this test), so another may end this one first: then the
	// orphan is gone, and a new one is made for EndOrphans to end, up to three times.
	for attempt := 1; ; attempt++ {
		ended, err := EndOrphans()
		if err != nil {
			t.Fatalf("EndOrphans: %v", err)
		}
		mine := slices.Contains(pids(ended), orphan.Process.Pid)
		done := make(chan error, 1)
		go func() { done <- orphan.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("EndOrphans() = %v: the orphan %d still runs", pids(ended), orphan.Process.Pid)
		}
		if mine {
			break
		}
		if attempt == 3 {
			t.Fatalf("EndOrphans() = %v three times, without the orphan it was given (another process ended each first)", pids(ended))
		}
		orphan = start(t, EnvVar+"="+dead.String()+"/run-9")
	}
	if (ID{PID: mine.Process.Pid}).Alive() {
		t.Fatal("a zero start time matched a live process")
	}
}

func TestStaleTemp(t *testing.T) {
	if StaleTemp(TempName("1", "plan.json")) {
		t.Error("a temporary file of this live process counts as stale")
	}
	dead := ID{PID: os.Getpid(), Start: Self().Start + 3}
	if !StaleTemp(TempPrefix + dead.String() + "-1-plan.json") {
		t.Error("a temporary file of a dead owner is not stale")
	}
	for _, n := range []string{"plan.json", ".plan.json.123", TempPrefix + "garbage"} {
		if StaleTemp(n) {
			t.Errorf("%q counts as a stale temporary file", n)
		}
	}
}

// A temporary file that a killed writer left is recognised by its dead owner and removed;
// one of a live writer (this test) is kept.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := TempPrefix + (ID{PID: os.Getpid(), Start: Self().Start + 1}).String() + "-123-plan.json"
	live := TempName("456", "env.json")
	for _, n := range []string{dead, live, ".other", "plan.json"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	removed, err := RemoveStaleTemps(dir)
	if err != nil || len(removed) != 1 || removed[0] != dead {
		t.Fatalf("removed %v, %v; want only %s", removed, err, dead)
	}
	for _, n := range []string{live, ".other", "plan.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v, want it kept", n, err)
		}
	}
}
