package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &tailWriter{buf: &stderr, max: stderrTailBytes}

	p := Process{Started: now(), Exit: -1}
	err := cmd.Start()
	if err != nil {
		p.Ended = now()
		p.Err = fmt.Errorf("starting %s: %w", argv[0], err)
		return p
	}
	p.PID = cmd.Process.Pid
	err = cmd.Wait()
	p.Ended = now()
	p.Stdout = stdout.Bytes()
	p.StderrTail = tail(stderr.String())
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

// tailWriter keeps roughly the last max bytes written to it.
type tailWriter struct {
	buf *bytes.Buffer
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if over := t.buf.Len() - 2*t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
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
