package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExecStarterKillsWhatTheLaneLeftBehind(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The lane starts a background sleeper in its own process group and exits at once.
	script := "sleep 30 & echo $! > " + pidfile + "; echo 'BenchmarkA 1 5 ns/op'"
	p := ExecStarter{}.Start(context.Background(), []string{"sh", "-c", script}, nil, "", 10*time.Second)
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
	p := ExecStarter{}.Start(context.Background(), []string{"sh", "-c", "sleep 30; sleep 30"}, nil, "", 200*time.Millisecond)
	if !p.TimedOut || p.Err == nil || !strings.Contains(p.Err.Error(), "timed out after 200ms") {
		t.Fatalf("process %+v, want a timeout", p)
	}
}

func TestExecStarterRunsInDir(t *testing.T) {
	dir := t.TempDir()
	p := ExecStarter{}.Start(context.Background(), []string{"pwd"}, []string{"X=1"}, dir, 10*time.Second)
	if p.Err != nil || strings.TrimSpace(string(p.Stdout)) != dir {
		t.Fatalf("pwd printed %q, want %q (%v)", p.Stdout, dir, p.Err)
	}
}
