package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExecStarterKillsWhatTheLaneLeftBehind(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The lane starts a background sleeper in its own process group and exits at once.
	// It waits until the sleeper is sleep (a forked child is still sh until it execs).
	script := "sleep 30 & pid=$!; echo $pid > " + pidfile +
		`; while [ "$(cat /proc/$pid/comm)" != sleep ]; do :; done; echo 'BenchmarkA 1 5 ns/op'`
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", script}, Timeout: 10 * time.Second})
	if p.Err != nil || !strings.Contains(string(p.Stdout), "BenchmarkA") {
		t.Fatalf("run: %+v", p)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil {
		t.Fatal(err)
	}
	if len(p.Leftover) != 1 || p.Leftover[0] != fmt.Sprintf("pid %d: sleep 30", pid) {
		t.Fatalf("Leftover = %q, want the sleeper (pid %d)", p.Leftover, pid)
	}
	// The sleeper was reparented when the lane exited, so it is gone once it is dead or a
	// zombie waiting for its new parent to reap it.
	for range 50 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the lane's background process %d is still running after the lane ended", pid)
}

func TestExecStarterTimeoutKillsTheGroup(t *testing.T) {
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", "sleep 30; sleep 30"}, Timeout: 200 * time.Millisecond})
	if !p.TimedOut || p.Err == nil || !strings.Contains(p.Err.Error(), "timed out after 200ms") {
		t.Fatalf("process %+v, want a timeout", p)
	}
}

func TestExecStarterRunsInDir(t *testing.T) {
	dir := t.TempDir()
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"pwd"}, Env: []string{"X=1"}, Dir: dir, Timeout: 10 * time.Second})
	if p.Err != nil || strings.TrimSpace(string(p.Stdout)) != dir {
		t.Fatalf("pwd printed %q, want %q (%v)", p.Stdout, dir, p.Err)
	}
}

// A lane's child that leaves the lane's process group and session (setsid) is found by
// its mark, ended, and reported, so it cannot run into later measurements.
func TestExecStarterEndsAndReportsASetsidChild(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	script := "setsid sleep 300 & echo $! > " + pidfile + "; sleep 0.1; echo 'BenchmarkA 1 5 ns/op'"
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", script}, Timeout: 10 * time.Second})
	if p.Err != nil {
		t.Fatalf("run: %v", p.Err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	if len(p.Leftover) != 1 || p.Leftover[0] != fmt.Sprintf("pid %d: sleep 300", pid) {
		t.Fatalf("Leftover = %q, want the setsid sleep (pid %d)", p.Leftover, pid)
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Fatalf("the setsid child %d still runs: %s", pid, st)
	}
}

// A lane that floods stdout is killed once it passes MaxStdout, its run fails saying so,
// and the output kept stays bounded; nothing is written to $TMPDIR.
func TestExecStarterBoundsStdout(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", "yes BenchmarkA 1 5 ns/op"}, Timeout: time.Minute})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "printed more than 64 MiB on stdout and was killed") {
		t.Fatalf("err = %v, want the flood named", p.Err)
	}
	if len(p.Stdout) > MaxStdout {
		t.Fatalf("kept %d bytes of stdout, more than %d", len(p.Stdout), MaxStdout)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("$TMPDIR holds %d files after the run, want none", len(entries))
	}
}

// A lane's stderr is kept as its tail, however much it writes.
func TestExecStarterKeepsTheStderrTail(t *testing.T) {
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line $i >&2; i=$((i+1)); done; exit 3"}, Timeout: time.Minute})
	if p.Exit != 3 || !strings.HasSuffix(p.StderrTail, "line 1999") || len(p.StderrTail) > stderrTailBytes {
		t.Fatalf("exit %d, stderr tail %d bytes ending %q", p.Exit, len(p.StderrTail), p.StderrTail[max(0, len(p.StderrTail)-20):])
	}
}

// lingering returns the processes whose command line holds token, zombies included: a
// process reaped is gone from /proc.
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
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			out = append(out, e.Name()+": "+strings.TrimSpace(string(st)))
		}
	}
	return out
}

// uniqueSleep returns a sleep duration (about 300 s) that no other process uses, so the
// test can find its sleepers by their command line.
func uniqueSleep() string { return fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9) }

// A lane's child that clears its environment and leaves the lane's session (env -i setsid
// -f) carries no mark, yet it is ended, reaped and reported: flipbench is its subreaper.
func TestExecStarterEndsAChildThatClearedItsEnvironment(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	dur := uniqueSleep()
	script := "env -i setsid -f sh -c 'echo $$ > " + pidfile + "; exec sleep " + dur + "'" +
		"; until [ -s " + pidfile + " ] && [ \"$(cat /proc/$(cat " + pidfile + ")/comm)\" = sleep ]; do :; done; echo 'BenchmarkA 1 5 ns/op'"
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", script}, Timeout: 10 * time.Second})
	if p.Err != nil {
		t.Fatalf("run: %v (%s)", p.Err, p.StderrTail)
	}
	b, _ := os.ReadFile(pidfile)
	pid := strings.TrimSpace(string(b))
	if want := "pid " + pid + ": sleep " + dur; len(p.Leftover) != 1 || p.Leftover[0] != want {
		t.Fatalf("Leftover = %q, want [%q]", p.Leftover, want)
	}
	if p.Reaper != "subreaper" && p.Reaper != "cgroup+subreaper" {
		t.Fatalf("Reaper = %q, want the subreaper", p.Reaper)
	}
	if left := lingering(t, dur); len(left) > 0 {
		t.Fatalf("still in /proc after the run (running, or a zombie not reaped): %v", left)
	}
}

// A lane that forks in a loop as it exits: the sweep waits for the lane's exit, then ends
// every process below it, including those forked while the sweep runs, and one that
// ignores SIGTERM gets SIGKILL after the grace period; none is left, not even a zombie.
func TestExecStarterEndsALaneThatForksAsItExits(t *testing.T) {
	for _, c := range []struct{ name, trap string }{{"term", ""}, {"ignores-term", "trap '' TERM; "}} {
		t.Run(c.name, func(t *testing.T) {
			dur := uniqueSleep()
			// Two loops: one in the lane's session, one that left it; each forks sleepers
			// until it is ended. The lane exits while they fork.
			loop := "(" + c.trap + "while :; do sleep " + dur + " & done)"
			script := loop + " & setsid sh -c '" + strings.ReplaceAll(loop, "'", `'\''`) + "' & echo 'BenchmarkA 1 5 ns/op'"
			p := ExecStarter{Grace: 100 * time.Millisecond}.Start(context.Background(), Command{Argv: []string{"sh", "-c", script}, Timeout: 10 * time.Second})
			if p.Err != nil {
				t.Fatalf("run: %v (%s)", p.Err, p.StderrTail)
			}
			if len(p.Leftover) == 0 {
				t.Fatal("no leftover recorded")
			}
			t.Logf("%s: %d leftover entries, the last %q", p.Reaper, len(p.Leftover), p.Leftover[len(p.Leftover)-1])
			if len(p.Leftover) > maxLeftover+1 {
				t.Fatalf("%d leftovers listed, want at most %d and a count", len(p.Leftover), maxLeftover)
			}
			for _, l := range p.Leftover {
				if strings.HasPrefix(l, "ending what") {
					t.Fatalf("the sweep failed: %s", l)
				}
			}
			if left := lingering(t, dur); len(left) > 0 {
				t.Fatalf("%d processes left after the run (of %d recorded): %v", len(left), len(p.Leftover), left)
			}
		})
	}
}

// The sweep never touches a child that os/exec in this process is waiting for: it keeps
// running through another lane's sweep, and its own Wait still gets its exit status.
func TestExecStarterLeavesOtherChildrenAlone(t *testing.T) {
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	p := ExecStarter{}.Start(context.Background(), Command{Argv: []string{"sh", "-c", "setsid sleep 300 & echo 'BenchmarkA 1 5 ns/op'"}, Timeout: 10 * time.Second})
	if p.Err != nil || len(p.Leftover) != 1 {
		t.Fatalf("run: %v, leftover %q", p.Err, p.Leftover)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the other child was ended by the lane's sweep: %v", err)
	}
	other.Process.Kill()
	err := other.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the other child's Wait = %v, want killed by SIGKILL (its status not stolen)", err)
	}
}
