// Package owner tells what a flipbench process leaves behind from what a live one is still
// using: temporary files and the processes it starts (lanes, builds, and whatever those
// start in turn).
//
// A flipbench process is identified by an ID: its pid and its start time, so that a pid
// the kernel has handed to another program since does not count as the same process.
// Temporary files carry the ID in their names; every process flipbench starts carries it
// in its environment (EnvVar, with a tag saying which run started it), and the children of
// those processes inherit it. So after a run, Marked finds what outlived it (a child that
// called setsid, a daemon left behind), and after a kill -9, the next flipbench finds and
// ends the processes and removes the files of an owner that is no longer alive.
//
// It works on Linux through /proc, without privileges, for the processes of the same
// user (all processes, as root). A process that clears its environment before it runs on
// escapes the mark; that is the honest limit of this method, and why the mark is the last
// line of defence: a Group (group.go) makes this process the child subreaper of what it
// starts, so every descendant of a program is reparented to it whatever it does to its
// environment, and where a cgroup v2 hierarchy is writable, runs the program in a cgroup
// of its own, which also outlives a kill -9 of this process (EndStaleCgroups).
package owner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ID identifies one process: its pid and its start time in clock ticks after boot.
type ID struct {
	PID   int
	Start uint64
}

// String formats the ID as "PID.START".
func (id ID) String() string { return strconv.Itoa(id.PID) + "." + strconv.FormatUint(id.Start, 10) }

// ParseID parses an ID written by String.
func ParseID(s string) (ID, bool) {
	p, st, ok := strings.Cut(s, ".")
	if !ok {
		return ID{}, false
	}
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(st, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return ID{}, false
	}
	return ID{PID: pid, Start: start}, true
}

// Self returns the ID of this process.
func Self() ID {
	id := ID{PID: os.Getpid()}
	id.Start, _ = startTime(id.PID)
	return id
}

// Alive reports whether the process is still running: the pid exists, is not a zombie, and
// started at the recorded time.
func (id ID) Alive() bool {
	st, err := readStat(id.PID)
	if err != nil {
		return false
	}
	return st.state != 'Z' && st.state != 'X' && st.start == id.Start
}

// stat is what Marked and Alive need from /proc/PID/stat.
type stat struct {
	state byte
	ppid  int
	start uint64
}

// readStat reads /proc/PID/stat. The command name is in parentheses and may hold spaces
// and parentheses itself, so the fields are counted after the last ')'.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return stat{state: f[0][0], ppid: ppid, start: start}, nil
}

func startTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// EnvVar is the environment variable that marks every process flipbench starts. Its
// value is "ID/TAG": the owner's ID and a tag of the owner's choosing (which run).
const EnvVar = "FLIPBENCH_OWNER"

// Mark returns the environment entry that marks a process started by this process for the
// run tag (letters, digits, '-', '_' and '.').
func Mark(tag string) string { return EnvVar + "=" + Self().String() + "/" + tag }

// Proc is a marked process found in /proc.
type Proc struct {
	PID int
	// Owner and Tag are what its mark says.
	Owner ID
	Tag   string
	// Cmd is its command line, for messages.
	Cmd string
}

// String describes the process as "pid N: command".
func (p Proc) String() string { return fmt.Sprintf("pid %d: %s", p.PID, p.Cmd) }

// Marked returns the live processes (zombies left out) whose environment carries a mark
// for which keep returns true. This process is never among them. Processes whose
// environment cannot be read (another user's, without privileges) are passed over.
func Marked(keep func(owner ID, tag string) bool) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read
		}
		value, ok := markIn(env)
		if !ok {
			continue
		}
		idText, tag, _ := strings.Cut(value, "/")
		id, ok := ParseID(idText)
		if !ok || !keep(id, tag) {
			continue
		}
		if st, err := readStat(pid); err != nil || st.state == 'Z' || st.state == 'X' {
			continue
		}
		out = append(out, Proc{PID: pid, Owner: id, Tag: tag, Cmd: cmdline(pid)})
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.PID - b.PID })
	return out, nil
}

// markIn returns the value of EnvVar in a NUL-separated environment block.
func markIn(env []byte) (string, bool) {
	prefix := []byte(EnvVar + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// cmdline returns a process's command line, its arguments joined by spaces and cut to
// 200 bytes.
func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Kill sends SIGKILL to every process of procs and waits, up to wait, until none of them
// runs any more (a zombie waiting for its parent counts as ended). It returns an error
// naming those still running then.
func Kill(procs []Proc, wait time.Duration) error {
	for _, p := range procs {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	// A timeout, on the machine's monotonic clock (package clock says why).
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		var left []string
		for _, p := range procs {
			if st, err := readStat(p.PID); err == nil && st.state != 'Z' && st.state != 'X' {
				left = append(left, p.String())
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("still running after SIGKILL: %s", strings.Join(left, "; "))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Orphans returns the marked processes whose owner is no longer alive: what a flipbench
// killed with SIGKILL left running.
func Orphans() ([]Proc, error) {
	alive := map[ID]bool{}
	return Marked(func(id ID, _ string) bool {
		a, ok := alive[id]
		if !ok {
			a = id.Alive()
			alive[id] = a
		}
		return !a
	})
}

// EndOrphans ends the processes that flipbench processes no longer alive left running
// and returns them, so the caller can say what it ended: those in the cgroups they made
// (EndStaleCgroups), which a process that clears its environment cannot leave, then the
// marked ones (Orphans).
func EndOrphans() ([]Proc, error) {
	ended, cerr := EndStaleCgroups()
	procs, err := Orphans()
	if err != nil || len(procs) == 0 {
		return ended, errors.Join(cerr, err)
	}
	return append(ended, procs...), errors.Join(cerr, Kill(procs, 5*time.Second))
}

// TempPrefix starts the name of every temporary file flipbench makes; the owner's ID
// follows, then "-", so a later run can tell a dead owner's files from a live one's.
const TempPrefix = ".flipbench-tmp-"

// TempName returns a name for a temporary file of this process that ends in base:
// ".flipbench-tmp-ID-RANDOM-BASE".
func TempName(random, base string) string {
	return TempPrefix + Self().String() + "-" + random + "-" + base
}

// StaleTemp reports whether name is a temporary file (TempName) of an owner that is no
// longer alive.
func StaleTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, TempPrefix)
	if !ok {
		return false
	}
	idText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	id, ok := ParseID(idText)
	return ok && !id.Alive()
}

// RemoveStaleTemps removes the temporary files (TempName) in dir whose owner is no longer
// alive, and returns their names. A missing dir holds none.
func RemoveStaleTemps(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !StaleTemp(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}
