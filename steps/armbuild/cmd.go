package armbuild

import (
	"bytes"
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

	"github.com/flipbench/flipbench/internal/owner"
)

// command is one program to run: git, go, or an exec harness's build command.
type command struct {
	Dir  string
	Args []string
	// Env is added to (and overrides) this process's environment, after the variables
	// that would redirect git (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...) are removed.
	Env   []string
	Stdin io.Reader
}

// CmdError is a program that failed. It keeps the program's output, so the user sees
// what the compiler or git said.
type CmdError struct {
	Args   []string
	Dir    string
	Err    error  // the exit status, or why the program could not start
	Output string // stderr and stdout, trimmed
}

// Error formats the failure as "prog args: exit status N: output". Output of several
// lines (a compiler's errors) follows on the next lines.
func (e *CmdError) Error() string {
	msg := fmt.Sprintf("%s: %v", strings.Join(quoteArgs(e.Args), " "), e.Err)
	out := strings.TrimSpace(e.Output)
	switch {
	case out == "":
		return msg
	case !strings.Contains(out, "\n"):
		return msg + ": " + out
	default:
		return msg + ":\n" + out
	}
}

// Unwrap returns the underlying error (context.Canceled when interrupted).
func (e *CmdError) Unwrap() error { return e.Err }

// FirstLine returns the first non-empty line of the output, or the error itself.
func (e *CmdError) FirstLine() string {
	for l := range strings.SplitSeq(e.Output, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return e.Err.Error()
}

// maxOutput bounds the output kept in a CmdError; a compiler that prints a screenful of
// errors is cut to its first part, which holds the first error.
const maxOutput = 16 << 10

// run runs c to completion and returns its stdout. The program runs in its own process
// group; cancelling ctx kills the group (a build and every compiler it started). What it
// leaves running when it exits (a daemon, however it detached) is ended, as a lane's is
// (owner.Group), but not reported. On failure the error is a *CmdError holding stderr (and
// stdout when stderr is empty).
func run(ctx context.Context, c command) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CmdError{Args: c.Args, Dir: c.Dir, Err: err}
	}
	group := owner.NewGroup("build")
	defer group.Close()
	var stdout, stderr bytes.Buffer
	// Killed with flipbench, even by kill -9 (Pdeathsig fires when the thread that
	// started the child exits: the thread is locked until the program ends).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	newCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
		cmd.Dir = c.Dir
		// Marked (package owner), so that what the program starts and leaves running
		// after a kill -9 of flipbench is found and ended by the next run.
		cmd.Env = append(environ(c.Env), owner.Mark("build"))
		cmd.Stdin = c.Stdin
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		group.Attr(cmd.SysProcAttr)
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout = &stdout
		cmd.Stderr = &limitWriter{buf: &stderr, max: maxOutput}
		return cmd
	}
	cmd := newCmd()
	err := cmd.Start()
	if err != nil && !errors.Is(err, exec.ErrNotFound) && group.DropCgroup() {
		// A kernel without CLONE_INTO_CGROUP (before 5.7): without the cgroup, then.
		cmd = newCmd()
		err = cmd.Start()
	}
	if err == nil {
		group.Started(cmd.Process.Pid)
		err = cmd.Wait()
		group.End(time.Second, 5*time.Second)
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	out := stderr.String()
	if strings.TrimSpace(out) == "" && stdout.Len() <= maxOutput {
		out = stdout.String()
	}
	return stdout.Bytes(), &CmdError{Args: c.Args, Dir: c.Dir, Err: err, Output: out}
}

// environ returns this process's environment without the variables that would make git
// (or a build that calls git) work on some other repository, index or work tree than the
// one named on its command line, with extra appended (later entries win, as in os/exec).
func environ(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// interrupted reports whether err comes from a cancelled context.
func interrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// limitWriter keeps the first max bytes written to it and drops the rest.
type limitWriter struct {
	buf *bytes.Buffer
	max int
	cut bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	if w.buf.Len() >= w.max && !w.cut {
		w.cut = true
		w.buf.WriteString("\n[... output cut ...]")
	}
	return len(p), nil
}

// quoteArgs quotes the arguments that a shell would split, for messages.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?;&|<>()") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return out
}
