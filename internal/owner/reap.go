package owner

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Mechanisms that can end what a Group's program left running, as a receipt names them.
const (
	// MechSubreaper: this process is the child subreaper of what it starts, so every
	// descendant whose parent exits is reparented to it and found among its children.
	MechSubreaper = "subreaper"
	// MechCgroup: the program runs in a cgroup (v2) of its own, which every descendant
	// inherits; this process is the subreaper as well, and reaps what it ends.
	MechCgroup = "cgroup+subreaper"
	// MechMark: only the mark in the environment (Marked) finds what is left; a process
	// that clears its environment escapes it.
	MechMark = "owner mark"
)

// Subreaper makes this process the child subreaper of its descendants (Linux prctl
// PR_SET_CHILD_SUBREAPER): a process whose parent exits is reparented to this process,
// not to init, whatever it did to its session, process group or environment. Calling it
// again is harmless. The attribute is not inherited by the children.
func Subreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming the child subreaper: %w", err)
	}
	return nil
}

// IsSubreaper reports whether this process is a child subreaper.
func IsSubreaper() bool {
	var v int32
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0)
	return err == nil && v != 0
}

// Waited returns the pids of the children that os/exec started in this
// process and has not reaped yet: on Linux 5.4 and later it holds a pidfd for each from
// the moment the child exists until its Wait has reaped it, and /proc/self/fdinfo names
// the pid of every pidfd. Those are the children a sweep must never wait for, or it would
// steal the exit status their Wait is waiting for.
func Waited() (map[int]bool, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, e := range entries {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || link != "anon_inode:[pidfd]" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed since
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
					out[pid] = true
				}
			}
		}
	}
	return out, nil
}

// scan reads /proc/PID/stat of every process. Listing /proc goes by increasing pid, so a
// process that exists for the whole listing (a child not reaped, a zombie included) is
// never missed, whatever is created or exits meanwhile.
func scan() (map[int]stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make(map[int]stat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out[pid] = st
		}
	}
	return out, nil
}

// adopted returns the children of this process that os/exec is not waiting for, from a
// scan: its children are read first and its pidfds after, so a child os/exec started is
// either among the pidfds or already reaped (gone, and then never signalled or waited for
// by pid, since its pid holds no process any more: see sweep).
func adopted(procs map[int]stat, self int) ([]int, error) {
	var kids []int
	for pid, st := range procs {
		if st.ppid == self {
			kids = append(kids, pid)
		}
	}
	if len(kids) == 0 {
		return nil, nil
	}
	waited, err := Waited()
	if err != nil {
		return nil, err
	}
	kids = slices.DeleteFunc(kids, func(pid int) bool { return waited[pid] })
	slices.Sort(kids)
	return kids, nil
}

// subtree returns roots and every process below them in procs.
func subtree(procs map[int]stat, roots []int) []int {
	children := map[int][]int{}
	for pid, st := range procs {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	seen := map[int]bool{}
	var out []int
	stack := append([]int(nil), roots...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		stack = append(stack, children[pid]...)
	}
	return out
}

// sweepOptions says what a sweep ends besides the adopted descendants.
type sweepOptions struct {
	reap   bool                  // end and reap the adopted children (the subreaper's)
	cgroup string                // a cgroup whose members to end, "" for none
	marked func(ID, string) bool // the marks whose processes to end, nil for none
	grace  time.Duration         // between SIGTERM and SIGKILL
	wait   time.Duration         // for SIGKILL to end them
	sleep  func(time.Duration)   // time.Sleep, for tests
	// now is time.Now (tests fake it), never the run's clock (package clock): the grace
	// and the wait are timeouts that pace signals on the machine's monotonic clock, and
	// a fake clock must not keep a sweep from ending.
	now    func() time.Time
	signal func(int, syscall.Signal) error // syscall.Kill
}

// sweep ends, and reaps where it is their parent, what a program left running after it
// exited: the adopted children of this process and everything below them, the members
// of opts.cgroup and the marked processes. Each gets SIGTERM, then SIGKILL once grace has
// passed. It returns them (as they were when first seen running) in the order found.
//
// It stops only when a scan finds no adopted child at all (zombies included) and the
// cgroup empty. No process the program started can be missed then: while this process is
// the subreaper, every descendant of the program is below some adopted child of it, from
// the moment the program has exited (its children are reparented before its exit is
// reported) until it is reaped, and a child is reaped only by this sweep, after the scan
// that saw it; a child reparented while a scan runs is reparented because its parent,
// below an adopted child that the same scan sees, exited.
func sweep(opts sweepOptions) ([]Proc, error) {
	self := os.Getpid()
	termAt := map[ID]time.Time{}
	var found []Proc
	seen := map[ID]bool{}
	deadline := opts.now().Add(opts.grace + opts.wait)
	markedDone := opts.marked == nil
	var marked []int
	for {
		procs, err := scan()
		if err != nil {
			return found, err
		}
		var kids []int
		if opts.reap {
			if kids, err = adopted(procs, self); err != nil {
				return found, err
			}
		}
		targets := subtree(procs, kids)
		if opts.cgroup != "" {
			members, err := cgroupProcs(opts.cgroup)
			if err != nil {
				return found, err
			}
			targets = append(targets, subtree(procs, members)...)
		}
		targets = append(targets, subtree(procs, marked)...)
		var running []int
		for _, pid := range targets {
			if st, ok := procs[pid]; ok && st.state != 'Z' && st.state != 'X' && pid != self {
				running = append(running, pid)
			}
		}
		if len(running) == 0 && len(kids) == 0 {
			if markedDone {
				return found, nil
			}
			// Last, the mark: processes outside this process's tree (started by
			// something that is not a descendant) whose environment still carries it.
			ps, err := Marked(opts.marked)
			if err != nil {
				return found, err
			}
			if len(ps) == 0 {
				return found, nil
			}
			marked = marked[:0]
			for _, p := range ps {
				marked = append(marked, p.PID)
			}
			continue
		}
		now := opts.now()
		for _, pid := range running {
			id := ID{PID: pid, Start: procs[pid].start}
			at, ok := termAt[id]
			switch {
			case !ok:
				termAt[id] = now
				cmd := cmdline(pid)
				// Recorded once the signal reached it: a child os/exec reaped since
				// the scan is gone, and is no leftover.
				if opts.signal(pid, syscall.SIGTERM) == nil && !seen[id] {
					seen[id] = true
					found = append(found, Proc{PID: pid, Cmd: cmd})
				}
			case now.Sub(at) >= opts.grace:
				opts.signal(pid, syscall.SIGKILL)
			}
		}
		reaped := false
		for _, pid := range kids {
			if st := procs[pid]; st.state == 'Z' || st.state == 'X' {
				var ws unix.WaitStatus
				if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
					reaped = true
				}
			}
		}
		if now.After(deadline) {
			var left []string
			for _, pid := range running {
				left = append(left, Proc{PID: pid, Cmd: cmdline(pid)}.String())
			}
			return found, fmt.Errorf("still running %s after SIGKILL: %s", opts.wait, strings.Join(left, "; "))
		}
		if !reaped {
			opts.sleep(2 * time.Millisecond)
		}
	}
}
