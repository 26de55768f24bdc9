package owner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CgroupPrefix starts the name of every cgroup flipbench makes; the owner's ID follows,
// then "-", so a later run can tell a dead owner's cgroups from a live one's.
const CgroupPrefix = "flipbench-"

// CgroupHome returns the folder of this process's cgroup in the cgroup v2 hierarchy: the
// hierarchy's mount point (/proc/self/mountinfo) joined with the path of the "0::" line
// of /proc/self/cgroup.
func CgroupHome() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, found := "", false
	for l := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path, found = p, true
		}
	}
	if !found {
		return "", errors.New("this process is in no cgroup v2")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(mi))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "cgroup2" {
			continue
		}
		// f[3] is the mount's root within the hierarchy, f[4] its mount point.
		rel, ok := strings.CutPrefix(path, f[3])
		if !ok {
			continue
		}
		dir := filepath.Join(f[4], rel)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy holds this process's cgroup")
}

// makeCgroup makes a cgroup for one program below this process's, named
// CgroupPrefix+ID-tag-random, and opens it for CLONE_INTO_CGROUP. It fails where the
// hierarchy is not mounted or not writable by this user (no delegation).
func makeCgroup(self ID, tag string) (string, int, error) {
	home, err := CgroupHome()
	if err != nil {
		return "", -1, err
	}
	dir := filepath.Join(home, CgroupPrefix+self.String()+"-"+tag+"-"+strconv.FormatUint(rand.Uint64(), 36))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", -1, err
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return "", -1, fmt.Errorf("opening %s: %w", dir, err)
	}
	return dir, fd, nil
}

// CgroupWritable makes and removes a cgroup as NewGroup would, and returns why it cannot
// where it cannot (or $FLIPBENCH_CGROUP is "off"): then no cgroup backs the subreaper, and what a kill -9 of flipbench
// leaves running is found by its mark alone.
func CgroupWritable() error {
	if os.Getenv(NoCgroupEnv) == "off" {
		return fmt.Errorf("turned off by %s=off", NoCgroupEnv)
	}
	dir, fd, err := makeCgroup(Self(), "probe")
	if err != nil {
		return err
	}
	syscall.Close(fd)
	return removeCgroup(dir)
}

// cgroupProcs returns the processes in a cgroup (cgroup.procs); a cgroup removed holds
// none.
func cgroupProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// removeCgroup removes an empty cgroup, trying for up to a second while the kernel still
// counts a process that just exited in it.
func removeCgroup(dir string) error {
	// A timeout, on the machine's monotonic clock (package clock says why).
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// EndStaleCgroups ends the processes in the cgroups (CgroupPrefix) that flipbench
// processes no longer alive made below this process's cgroup, and removes those cgroups:
// what a flipbench killed with SIGKILL left running, whatever it did to its environment.
// It returns the processes it ended. Without a cgroup v2 hierarchy there are none.
func EndStaleCgroups() ([]Proc, error) {
	home, err := CgroupHome()
	if err != nil {
		return nil, nil
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil, nil
	}
	var ended []Proc
	var errs []error
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), CgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		idText, _, _ := strings.Cut(rest, "-")
		id, ok := ParseID(idText)
		if !ok || id.Alive() {
			continue
		}
		dir := filepath.Join(home, e.Name())
		procs, err := sweep(sweepOptions{cgroup: dir, grace: 0, wait: 5 * time.Second,
			sleep: time.Sleep, now: time.Now, signal: syscall.Kill}) // timeouts: see sweepOptions.now
		ended = append(ended, procs...)
		errs = append(errs, err, removeCgroup(dir))
	}
	return ended, errors.Join(errs...)
}
