package owner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lingering returns the processes whose command line holds token, zombies included.
func lingering(t *testing.T, token string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), token) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// run runs cmd to its end. Its output goes to /dev/null: a pipe would stay open as long
// as what it leaves running.
func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
}

func uniqueSleep() string { return fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9) }

func testSweep(reap bool, cgroup string) sweepOptions {
	return sweepOptions{reap: reap, cgroup: cgroup, grace: 50 * time.Millisecond, wait: 5 * time.Second,
		sleep: time.Sleep, now: time.Now, signal: syscall.Kill}
}

// The subreaper alone (no cgroup, no mark) finds what a program left however it left:
// a child that cleared its environment and left the session, and a loop that forks
// until it is ended; the sweep ends and reaps them all. A child os/exec is waiting for
// is neither signalled nor reaped.
func TestSweepBySubreaperAlone(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Fatal(err)
	}
	if !IsSubreaper() {
		t.Fatal("IsSubreaper() = false after Subreaper()")
	}
	waited := exec.Command("sleep", "30")
	if err := waited.Start(); err != nil {
		t.Fatal(err)
	}
	defer waited.Process.Kill()
	if w, err := Waited(); err != nil || !w[waited.Process.Pid] {
		t.Fatalf("Waited() = %v, %v: want the child os/exec started (pid %d)", w, err, waited.Process.Pid)
	}
	dur := uniqueSleep()
	script := "env -i setsid -f sleep " + dur + "; setsid -f sh -c 'while :; do sleep " + dur + " & done'; sleep 0.02"
	run(t, exec.Command("sh", "-c", script))
	found, err := sweep(testSweep(true, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 || !slices.ContainsFunc(found, func(p Proc) bool { return strings.Contains(p.Cmd, "sleep "+dur) }) {
		t.Fatalf("found %v, want the sleepers and the loop", found)
	}
	if left := lingering(t, dur); len(left) > 0 {
		t.Fatalf("left after the sweep: %v", left)
	}
	if err := waited.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child os/exec waits for was ended: %v", err)
	}
}

// Without the subreaper's reaping, a sweep finds nothing but the mark and the cgroup.
func TestSweepWithoutReapingLeavesChildrenAlone(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Fatal(err)
	}
	dur := uniqueSleep()
	run(t, exec.Command("sh", "-c", "env -i setsid -f sleep "+dur))
	found, err := sweep(testSweep(false, ""))
	if err != nil || len(found) != 0 {
		t.Fatalf("sweep without reaping found %v, %v", found, err)
	}
	if found, err := sweep(testSweep(true, "")); err != nil || len(found) != 1 {
		t.Fatalf("sweep found %v, %v, want the sleeper", found, err)
	}
}

// A cgroup that a flipbench no longer alive made is found by the next run, which ends
// what runs in it (a child with no mark) and removes it; a live owner's is left alone.
// Where no cgroup v2 hierarchy is writable, the fallback is checked instead: the probe says
// so, and the sweep of stale cgroups finds nothing and fails on nothing.
func TestEndStaleCgroups(t *testing.T) {
	dead := ID{PID: os.Getpid(), Start: Self().Start + 7}
	dir, fd, err := makeCgroup(dead, "lane-test")
	if err != nil {
		if CgroupWritable() == nil {
			t.Fatalf("makeCgroup failed (%v) where CgroupWritable says a cgroup can be made", err)
		}
		if ended, err := EndStaleCgroups(); err != nil || len(ended) != 0 {
			t.Fatalf("without cgroups EndStaleCgroups() = %v, %v; want nothing", ended, err)
		}
		t.Logf("no writable cgroup v2 hierarchy (%v): checked the subreaper-only fallback", err)
		return
	}
	defer syscall.Close(fd)
	live, lfd, err := makeCgroup(Self(), "lane-test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Close(lfd); removeCgroup(live) }()
	dur := uniqueSleep()
	cmd := exec.Command("sh", "-c", "env -i setsid -f sleep "+dur)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	run(t, cmd)
	if procs, _ := cgroupProcs(dir); len(procs) != 1 {
		t.Fatalf("the cgroup holds %v, want the sleeper", procs)
	}
	ended, err := EndStaleCgroups()
	if err != nil {
		t.Fatal(err)
	}
	// The sleeper, or setsid's child not yet turned into it.
	if len(ended) != 1 || !strings.HasSuffix(ended[0].Cmd, "sleep "+dur) {
		t.Fatalf("EndStaleCgroups() = %v, want the sleeper", ended)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("the dead owner's cgroup %s is still there", dir)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("the live owner's cgroup was removed: %v", err)
	}
	sweep(testSweep(true, "")) // reap the sleeper
}

// The mark stays the last line of defence: a marked process that is not below an adopted
// child (here a child os/exec waits for, as one started by something outside the
// program's tree would be) is ended by the group's End, and recorded.
func TestGroupEndsWhatOnlyTheMarkFinds(t *testing.T) {
	g := NewGroup("lane-marktest")
	defer g.Close()
	cmd := exec.Command("sleep", uniqueSleep())
	cmd.Env = append(os.Environ(), Mark("lane-marktest"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	found, err := g.End(50*time.Millisecond, 5*time.Second)
	if err != nil || len(found) != 1 || found[0].PID != cmd.Process.Pid {
		t.Fatalf("End() = %v, %v, want the marked sleeper %d", found, err, cmd.Process.Pid)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("the marked child's Wait = %v, want terminated by SIGTERM", err)
	}
}

// A group whose program os/exec holds no pidfd for (Linux before 5.4) does not reap: it
// could not tell its adopted children from those os/exec waits for. It says so.
func TestGroupWithoutPidfdDoesNotReap(t *testing.T) {
	t.Setenv(NoCgroupEnv, "off")
	g := NewGroup("lane-nopidfd")
	defer g.Close()
	if g.Mechanism() != MechSubreaper {
		t.Fatalf("Mechanism() = %q before the start, want %q", g.Mechanism(), MechSubreaper)
	}
	g.Started(os.Getppid()) // a process this one holds no pidfd for
	if g.Mechanism() != MechMark {
		t.Fatalf("Mechanism() = %q for a program without a pidfd, want %q", g.Mechanism(), MechMark)
	}
}
