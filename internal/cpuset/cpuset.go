// Package cpuset reads and applies CPU lists: the CPUs a lane process may run on
// (protocol.cpus, --cpus). A list is written as taskset -c and /proc's Cpus_allowed_list
// write it: CPU numbers and ranges separated by commas ("0", "0,2", "0-3,6").
//
// Pinning a lane to one CPU takes the operating system's placement of its threads out of
// what is measured; on a small virtual machine that placement is most of the noise between
// processes (docs/methodology.md, "Pinning lanes to CPUs").
package cpuset

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxCPU bounds the CPU numbers a list may name.
const MaxCPU = 4095

// Parse reads a CPU list ("0", "0,2", "0-3,6") into its CPUs, sorted and without
// repeats. An empty list is an error: no pinning is written as no list.
func Parse(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty CPU list (write CPU numbers or ranges, as taskset -c does: 0, 0-1, 0,2)")
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo, part)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi, part); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("CPU range %q runs backwards", part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// cpuNumber reads one CPU number of the list part it belongs to.
func cpuNumber(s, part string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a CPU number or range (write CPU numbers or ranges, as taskset -c does: 0, 0-1, 0,2)", part)
	}
	if n > MaxCPU {
		return 0, fmt.Errorf("CPU %d is above %d", n, MaxCPU)
	}
	return n, nil
}

// Format writes cpus as a CPU list, ranges folded: [0 1 2 5] is "0-2,5".
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Placement says where lanes run: "pinned to CPU 0", "pinned to CPUs 0-1", or
// "unpinned" for an empty list (the operating system places them).
func Placement(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "unpinned"
	case 1:
		return "pinned to CPU " + Format(cpus)
	}
	return "pinned to CPUs " + Format(cpus)
}

// Allowed returns the CPUs this process may run on, sorted.
func Allowed() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading this process's CPUs: %w", err)
	}
	var cpus []int
	for c := 0; c <= MaxCPU && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Check reports an error naming the CPUs of want this process may not run on, and those it
// may: "CPU 3, which is not available here: this machine runs flipbench on CPUs 0-1".
func Check(want []int) error {
	have, err := Allowed()
	if err != nil {
		return err
	}
	var missing []int
	for _, c := range want {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("CPU %s, which is not available here: this machine runs flipbench on CPUs %s", Format(missing), Format(have))
	case len(missing) > 1:
		return fmt.Errorf("CPUs %s, which are not available here: this machine runs flipbench on CPUs %s", Format(missing), Format(have))
	}
	return nil
}

// PinThread restricts the calling OS thread to cpus and returns a function that restores
// its previous CPUs. A process the thread starts inherits them: the caller must hold the
// thread (runtime.LockOSThread) from PinThread until the restore, and start the process
// in between.
func PinThread(cpus []int) (restore func() error, err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("reading the thread's CPUs: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("pinning to CPUs %s: %w", Format(cpus), err)
	}
	return func() error { return unix.SchedSetaffinity(0, &old) }, nil
}

// PinProcess restricts every thread of this process to cpus, and the threads it starts
// later with them (a new thread inherits its creator's CPUs), and returns a function that
// gives each thread pinned here its previous CPUs back. A thread that exits meanwhile is
// passed over.
func PinProcess(cpus []int) (restore func() error, err error) {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("listing this process's threads: %w", err)
	}
	type pinned struct {
		tid int
		old unix.CPUSet
	}
	var done []pinned
	undo := func() error {
		var errs []error
		for _, p := range done {
			if err := unix.SchedSetaffinity(p.tid, &p.old); err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &old); err != nil {
			continue // exited
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			undo()
			return nil, fmt.Errorf("pinning this process to CPUs %s: %w", Format(cpus), err)
		}
		done = append(done, pinned{tid, old})
	}
	return undo, nil
}

// Without returns the CPUs of all that are not in some.
func Without(all, some []int) []int {
	var out []int
	for _, c := range all {
		if !slices.Contains(some, c) {
			out = append(out, c)
		}
	}
	return out
}
