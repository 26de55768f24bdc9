package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Process is one finished lane process.
type Process struct {
	PID         int
	Exit        int // -1 when killed by a signal or a timeout
	Stdout      []byte
	StderrTail  string
	MaxRSSBytes int64
	Started     time.Time
	Ended       time.Time
	TimedOut    bool
	// Err is set when the process could not be started, timed out or was killed.
	Err error
}

// Starter runs one lane process to completion. The real one is ExecStarter; tests may fake
// it.
type Starter interface {
	Start(ctx context.Context, argv, env []string, dir string, timeout time.Duration) Process
}

// ExecStarter runs lane processes with os/exec, each in its own process group so a timeout
// kills the lane and everything it started.
type ExecStarter struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

const stderrTailBytes = 2048

// Start runs argv in dir (empty: the current directory) with env appended to this
// process's environment, and waits for it.
func (e ExecStarter) Start(ctx context.Context, argv, env []string, dir string, timeout time.Duration) Process {
	now := e.Now
	if now == nil {
		now = time.Now
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	// Its own process group, so a timeout kills the lane and all it started; and killed
	// with flipbench, so a lane never outlives the run that measures it (Pdeathsig fires
	// when the thread that started the child exits: the thread is locked for the run).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Output goes to files, not pipes: a lane that leaves a child holding its stdout open
	// must not keep Wait waiting after the lane itself has exited.
	stdout, err := os.CreateTemp("", "flipbench-stdout-*")
	if err != nil {
		return Process{Exit: -1, Err: fmt.Errorf("capturing output: %w", err)}
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "flipbench-stderr-*")
	if err != nil {
		return Process{Exit: -1, Err: fmt.Errorf("capturing output: %w", err)}
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr

	p := Process{Started: now(), Exit: -1}
	err = cmd.Start()
	if err != nil {
		p.Ended = now()
		p.Err = fmt.Errorf("starting %s: %w", argv[0], err)
		return p
	}
	p.PID = cmd.Process.Pid
	err = cmd.Wait()
	var err2 error
	p.Ended = now()
	// Whatever the lane left running in its group must not run into the next lane.
	syscall.Kill(-p.PID, syscall.SIGKILL)
	if p.Stdout, err2 = os.ReadFile(stdout.Name()); err2 != nil && err == nil {
		err = fmt.Errorf("reading the lane's output: %w", err2)
	}
	p.StderrTail = tail(readTail(stderr.Name(), 2*stderrTailBytes))
	if st := cmd.ProcessState; st != nil {
		p.Exit = st.ExitCode()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru != nil {
			p.MaxRSSBytes = ru.Maxrss * 1024 // Linux reports KiB
		}
	}
	switch {
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		p.TimedOut = true
		p.Err = fmt.Errorf("timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		p.Err = ctx.Err()
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.Err = fmt.Errorf("killed by signal %s", ws.Signal())
			} else {
				p.Err = fmt.Errorf("exited with status %d", p.Exit)
			}
		} else {
			p.Err = err
		}
	}
	return p
}

// readTail returns up to the last n bytes of a file.
func readTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// tail returns at most the last stderrTailBytes of s, starting at a line boundary.
func tail(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= stderrTailBytes {
		return s
	}
	s = s[len(s)-stderrTailBytes:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
