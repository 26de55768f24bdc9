package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/receipt"
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
	// Leftover describes the processes the lane left running when it exited (a child that
	// called setsid, a daemon), which the starter then ended: "pid N: command".
	Leftover []string
	// Reaper names what found what the lane left running (owner.MechSubreaper,
	// owner.MechCgroup, owner.MechMark): the receipt says which one ran.
	Reaper string
	// Err is set when the process could not be started, timed out, was killed, or printed
	// more than MaxStdout.
	Err error
	// Stamps has a LineStamp for every line of stdout, in order, when the command asked for
	// them (Command.Stamp) and the kernel counts per thread; nil otherwise.
	Stamps []LineStamp
	// Sched is what the kernel counted over the whole process: its CPU time at exit
	// (rusage), the machine's steal time and flipbench's cgroup's throttled time over its
	// life.
	Sched *receipt.ProcessSched
}

// Starter runs one process to completion: a lane, a listing of a binary's lanes
// (ListLanes), a check (Valgrind). Every process flipbench starts but the builds' (package
// armbuild) starts through it, so each gets what ExecStarter gives it and tests can fake
// them all. The real one is ExecStarter.
type Starter interface {
	Start(ctx context.Context, c Command) Process
}

// Command is one process to run.
type Command struct {
	// Argv is the program and its arguments.
	Argv []string
	// Env is appended to flipbench's environment.
	Env []string
	// Dir is the working directory; empty means flipbench's.
	Dir string
	// Timeout bounds the process; it is killed with everything it started after it.
	Timeout time.Duration
	// CPUs, when set, are the only CPUs the process may run on (protocol.cpus): it starts
	// pinned to them, so a Go lane's GOMAXPROCS is their number. Nil leaves the placement
	// to the operating system.
	CPUs []int
	// Stamp asks for a LineStamp for every line the process writes to stdout
	// (Process.Stamps): a lane's result lines, whose intervals then say how much of each
	// sample the process ran and how much it waited for a CPU.
	Stamp bool
}

// ExecStarter runs processes with os/exec, each in its own process group so a timeout
// kills the lane and everything it started. It runs one lane at a time: after each, it
// ends whatever this process adopted as the child subreaper (see owner.Group).
type ExecStarter struct {
	// Clock stamps each process's start and end; nil is the machine's clock.
	Clock clock.Clock
	// Grace is how long what a lane left running has between SIGTERM and SIGKILL; zero
	// means DefaultGrace.
	Grace time.Duration
}

// DefaultGrace is the time a process a lane left running has to exit on SIGTERM before
// it gets SIGKILL.
const DefaultGrace = time.Second

const stderrTailBytes = 2048

// maxLeftover bounds the processes a lane left running that its record lists one by one;
// a lane that forks without end gets the rest counted ("and N more").
const maxLeftover = 100

// MaxStdout bounds what a lane may print on stdout: it prints its result lines there, a
// few hundred bytes each. A lane that prints more is killed and its run fails, rather
// than flipbench holding gigabytes of output in memory.
const MaxStdout = 64 << 20

// Start runs c.Argv in c.Dir (empty: the current directory) with c.Env appended to this
// process's environment, on c.CPUs if set, and waits for it.
//
// Nothing the lane starts outlives it. flipbench is the child subreaper, so every process
// the lane started is reparented to it when its parent exits, whatever it did to its
// session, process group or environment; where a cgroup v2 hierarchy is writable, the lane
// also runs in a cgroup of its own; and every process it starts carries a mark in its
// environment (package owner). When the lane has exited, whatever of it still runs gets
// SIGTERM, then SIGKILL after the grace period, is reaped and is reported in Leftover
// (owner.Group.End). The lane dies with flipbench (a kill -9 of flipbench included), and
// what it started then is ended by the next run (CleanUp): by its cgroup, or by its mark.
// Output is read from pipes, up to MaxStdout of stdout and the tail of stderr, so no
// temporary file is left behind; a process that still holds a pipe after the sweep
// delays the reading by one second at most.
func (e ExecStarter) Start(ctx context.Context, c Command) Process {
	argv := c.Argv
	now := e.Clock.Now
	runCtx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	tag := "lane-" + strconv.FormatUint(rand.Uint64(), 36)
	group := owner.NewGroup(tag)
	defer group.Close()
	grace := e.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// Its own process group, so a timeout kills the lane and all it started; and killed
	// with flipbench, so a lane never outlives the run that measures it (Pdeathsig fires
	// when the thread that started the child exits: the thread is locked for the run).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	newCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
		cmd.Env = append(append(os.Environ(), c.Env...), owner.Mark(tag))
		cmd.Dir = c.Dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		group.Attr(cmd.SysProcAttr)
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		return cmd
	}
	cmd := newCmd()
	outR, outW, err := os.Pipe()
	if err != nil {
		return Process{Exit: -1, Err: fmt.Errorf("capturing output: %w", err)}
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return Process{Exit: -1, Err: fmt.Errorf("capturing output: %w", err)}
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW

	p := Process{Started: now(), Exit: -1}
	started := time.Now() // the machine's monotonic clock, for the line stamps
	err = startOn(cmd, c.CPUs)
	if err != nil && !errors.Is(err, exec.ErrNotFound) && group.DropCgroup() {
		// A kernel without CLONE_INTO_CGROUP (before 5.7): without the cgroup, then.
		cmd = newCmd()
		cmd.Stdout, cmd.Stderr = outW, errW
		err = startOn(cmd, c.CPUs)
	}
	outW.Close()
	errW.Close()
	if err != nil {
		p.Ended = now()
		p.Err = fmt.Errorf("starting %s: %w", argv[0], err)
		return p
	}
	p.PID = cmd.Process.Pid
	group.Started(p.PID)
	p.Reaper = group.Mechanism()
	stamper, onLines := newStamper(c.Stamp, p.PID, started)
	host := startHostCounters()
	stdout := make(chan captured, 1)
	stderr := make(chan captured, 1)
	go func() {
		stdout <- capture(outR, MaxStdout, false, func() { syscall.Kill(-p.PID, syscall.SIGKILL) }, onLines)
	}()
	go func() { stderr <- capture(errR, 2*stderrTailBytes, true, nil, nil) }()
	err = cmd.Wait()
	p.Ended = now()
	p.Sched = host.end()
	p.Leftover = endLeftovers(group, p.PID, p.Reaper, grace)
	// The machine's time, not the run's clock: the runtime compares a read deadline
	// with the machine's clock.
	deadline := time.Now().Add(time.Second)
	outR.SetReadDeadline(deadline)
	errR.SetReadDeadline(deadline)
	out, errTail := <-stdout, <-stderr
	if stamper != nil && stamper.ok {
		p.Stamps = stamper.stamps
	}
	p.Stdout = out.data
	p.StderrTail = tail(string(errTail.data))
	if st := cmd.ProcessState; st != nil {
		p.Exit = st.ExitCode()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru != nil {
			p.MaxRSSBytes = ru.Maxrss * 1024 // Linux reports KiB
			p.Sched.CPUNs = ru.Utime.Nano() + ru.Stime.Nano()
		}
	}
	p.TimedOut = runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	p.Err = processErr(ctx, p, c.Timeout, out, err)
	return p
}

// endLeftovers ends, reaps and lists whatever the lane (pid) left running, in its group
// or out of it (setsid, env -i), so that it cannot run into the next lane; at most
// maxLeftover are named.
func endLeftovers(group *owner.Group, pid int, reaper string, grace time.Duration) []string {
	var listed []string
	left, err := group.End(grace, 5*time.Second)
	for i, l := range left {
		if i == maxLeftover {
			listed = append(listed, fmt.Sprintf("and %d more", len(left)-i))
			break
		}
		listed = append(listed, l.String())
	}
	if err != nil {
		listed = append(listed, "ending what the lane left running: "+err.Error())
	}
	if reaper == owner.MechMark {
		// Nothing adopted what the lane left in its process group: killed as a group.
		syscall.Kill(-pid, syscall.SIGKILL)
	}
	return listed
}

// processErr says why a finished process p gives no usable output, or nil: timed out
// (p.TimedOut), interrupted (ctx), too much output, a failed exit (waitErr), or a pipe
// that could not be read.
func processErr(ctx context.Context, p Process, timeout time.Duration, out captured, waitErr error) error {
	switch {
	case p.TimedOut:
		return fmt.Errorf("timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		return ctx.Err()
	case out.over:
		return fmt.Errorf("printed more than %d MiB on stdout and was killed; a lane prints its result lines there, and its logs on stderr", MaxStdout>>20)
	case waitErr != nil:
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return waitErr
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("killed by signal %s", ws.Signal())
		}
		return fmt.Errorf("exited with status %d", p.Exit)
	case out.err != nil:
		return fmt.Errorf("reading the lane's output: %w", out.err)
	}
	return nil
}

// captured is what capture read from a pipe.
type captured struct {
	data []byte
	over bool // more than the limit came (stdout)
	err  error
}

// capture reads r to its end (or its read deadline). It keeps the first limit bytes, or
// with keepTail the last limit bytes. When more than limit bytes come and onOver is set,
// it calls onOver once (to kill the writer) and keeps reading, discarding, so the writer
// never blocks. onLines, when set, is called after each read of kept bytes with the number
// of line ends it held.
func capture(r *os.File, limit int, keepTail bool, onOver func(), onLines func(n int)) captured {
	var c captured
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			switch {
			case keepTail:
				c.data = append(c.data, buf[:n]...)
				if len(c.data) > limit {
					c.data = append(c.data[:0], c.data[len(c.data)-limit:]...)
				}
			case len(c.data)+n <= limit:
				c.data = append(c.data, buf[:n]...)
				if onLines != nil {
					onLines(bytes.Count(buf[:n], []byte("\n")))
				}
			case !c.over:
				c.over = true
				if onOver != nil {
					onOver()
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				c.err = err
			}
			return c
		}
	}
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

// CleanUp ends what flipbench processes that were killed (kill -9, a crash, a machine
// reset) left behind before a run starts: the processes their lanes and builds started
// (package owner), their temporary files in dir, beside it and in $TMPDIR (a run's
// scratch folder), and the receipt folders beside dir they made but never wrote a plan
// into (receipt.RemoveAbandoned). It returns one note per thing it
// did, to be shown as a warning.
func CleanUp(dir string) ([]string, error) {
	var notes []string
	ended, err := owner.EndOrphans()
	if len(ended) > 0 {
		var what []string
		for _, p := range ended {
			what = append(what, p.String())
		}
		notes = append(notes, fmt.Sprintf("ended %d processes that a killed flipbench run left running (%s); they would have competed with this run's measurements",
			len(ended), strings.Join(what, "; ")))
	}
	if err != nil {
		return notes, fmt.Errorf("ending what a killed run left running: %w", err)
	}
	var errs []error
	for _, d := range []string{dir, filepath.Dir(dir), os.TempDir()} {
		removed, err := owner.RemoveStaleTemps(d)
		if len(removed) > 0 {
			notes = append(notes, fmt.Sprintf("removed %d temporary files that a killed flipbench left in %s", len(removed), d))
		}
		errs = append(errs, err)
	}
	removed, err := receipt.RemoveAbandoned(filepath.Dir(dir))
	if len(removed) > 0 {
		notes = append(notes, fmt.Sprintf("removed %d receipt folders that runs killed before their plan was written left in %s (%s)", len(removed), filepath.Dir(dir), strings.Join(removed, ", ")))
	}
	return notes, errors.Join(append(errs, err)...)
}

// startOn starts cmd on cpus (all the process's when nil): the locked thread that starts
// it is pinned to them while it does, and the child inherits that.
func startOn(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	restore, err := cpuset.PinThread(cpus)
	if err != nil {
		return err
	}
	err = cmd.Start()
	if rerr := restore(); rerr != nil && err == nil {
		err = fmt.Errorf("restoring flipbench's CPUs after starting the lane: %w", rerr)
	}
	return err
}
