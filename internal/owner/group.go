package owner

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Group is what one program this process starts becomes: the program and every process
// it starts in turn, however they leave its session or process group or clear their
// environment. After the program has exited, End ends and reaps whatever of it is still
// running.
//
// Three ways find its members, each a line of defence behind the one before:
//   - this process is the child subreaper (Subreaper), so a member whose parent exits is
//     reparented to it: every member is then below one of its children that os/exec does
//     not wait for (Waited);
//   - where a cgroup v2 hierarchy is writable, the program starts in a cgroup of its own
//     (CLONE_INTO_CGROUP), which every member inherits and none can leave without
//     privileges, and which outlives a kill -9 of this process (EndStaleCgroups);
//   - every member that keeps its environment carries the mark (Mark) with the group's
//     tag, which finds one that something outside this process's tree started.
type Group struct {
	self   ID
	tag    string
	reap   bool   // this process is the subreaper and may reap what it adopted
	cgroup string // the cgroup folder, "" for none
	cgfd   int    // the cgroup open for CLONE_INTO_CGROUP, -1 for none
}

// NoCgroupEnv is the environment variable that, set to "off", keeps NewGroup from making
// cgroups: the subreaper alone then finds what a program left.
const NoCgroupEnv = "FLIPBENCH_CGROUP"

// NewGroup prepares a group for one program whose processes carry the mark of tag
// (Mark(tag)). It makes this process the subreaper and a cgroup for the program where it
// can (unless $FLIPBENCH_CGROUP is "off"); Mechanism says which. It never fails: without
// either, the mark remains.
func NewGroup(tag string) *Group {
	g := &Group{self: Self(), tag: tag, cgfd: -1}
	g.reap = Subreaper() == nil
	if os.Getenv(NoCgroupEnv) == "off" {
		return g
	}
	if dir, fd, err := makeCgroup(g.self, tag); err == nil {
		g.cgroup, g.cgfd = dir, fd
	}
	return g
}

// Attr sets attr so that the program starts in the group's cgroup, if it has one.
func (g *Group) Attr(attr *syscall.SysProcAttr) {
	if g.cgfd >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, g.cgfd
	}
}

// DropCgroup gives up the group's cgroup (the program could not start in it: a kernel
// before 5.7 has no CLONE_INTO_CGROUP) and removes it. It reports whether the group had
// one, so that starting again without it may succeed.
func (g *Group) DropCgroup() bool {
	if g.cgroup == "" {
		return false
	}
	syscall.Close(g.cgfd)
	removeCgroup(g.cgroup) // empty: nothing started in it
	g.cgroup, g.cgfd = "", -1
	return true
}

// Started tells the group the program's pid. The group reaps what it adopted only if
// os/exec waits for the program through a pidfd (Waited): otherwise the children os/exec
// waits for could not be told from the adopted ones, and reaping one would steal its
// exit status.
func (g *Group) Started(pid int) {
	if !g.reap {
		return
	}
	waited, err := Waited()
	g.reap = err == nil && waited[pid]
}

// Mechanism names what finds the group's members beyond the mark: MechCgroup,
// MechSubreaper, "cgroup" (a cgroup without reaping) or MechMark.
func (g *Group) Mechanism() string {
	switch {
	case g.reap && g.cgroup != "":
		return MechCgroup
	case g.reap:
		return MechSubreaper
	case g.cgroup != "":
		return "cgroup"
	}
	return MechMark
}

// End ends what of the group is still running after its program exited (and was
// reaped): SIGTERM, then SIGKILL after grace, waiting up to wait more for SIGKILL to end
// them, and reaps those this process adopted. It returns them as they were when first
// seen running, and an error naming any still running after that.
//
// It must be called only when no other program of this process is running that may
// leave something running legitimately: whatever this process adopted, from any program,
// is ended.
func (g *Group) End(grace, wait time.Duration) ([]Proc, error) {
	return sweep(sweepOptions{
		reap:   g.reap,
		cgroup: g.cgroup,
		marked: func(id ID, tag string) bool { return id == g.self && tag == g.tag },
		grace:  grace,
		wait:   wait,
		sleep:  time.Sleep,
		now:    time.Now, // timeouts: see sweepOptions.now
		signal: syscall.Kill,
	})
}

// Close removes the group's cgroup. Call it after End.
func (g *Group) Close() error {
	if g.cgroup == "" {
		return nil
	}
	return errors.Join(syscall.Close(g.cgfd), removeCgroup(g.cgroup))
}
