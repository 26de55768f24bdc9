package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flipbench/flipbench/model/receipt"
)

// NoSpace reports whether a failed run failed for want of disk space: its error or the
// last lines of its stderr say "no space left on device" (ENOSPC) or "disk quota
// exceeded" (EDQUOT). Such a run says nothing about the code it measured: the run loop
// stops instead of recording it, and a resume measures it again.
func NoSpace(rec receipt.Record) bool {
	if rec.OK() {
		return false
	}
	for _, s := range []string{rec.Error, rec.StderrTail} {
		s = strings.ToLower(s)
		if strings.Contains(s, strings.ToLower(syscall.ENOSPC.Error())) || strings.Contains(s, strings.ToLower(syscall.EDQUOT.Error())) {
			return true
		}
	}
	return false
}

// IsNoSpace reports whether err is a write that failed for want of disk space.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// DiskSpace describes the file systems holding each of paths, for a message about a full
// disk: "PATH: N MiB free of M MiB on SOURCE (FSTYPE, mounted at MOUNT)", one per distinct
// file system, joined by "; ". Paths that do not exist are left out.
func DiskSpace(paths ...string) string {
	mounts := readMounts()
	seen := map[string]bool{}
	var parts []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		var st syscall.Statfs_t
		if syscall.Statfs(abs, &st) != nil {
			continue
		}
		m := mounts.of(abs)
		key := m.point + "\x00" + m.source
		if seen[key] {
			continue
		}
		seen[key] = true
		free := uint64(st.Bavail) * uint64(st.Bsize)
		total := uint64(st.Blocks) * uint64(st.Bsize)
		where := ""
		if m.point != "" {
			where = fmt.Sprintf(" on %s (%s, mounted at %s)", m.source, m.fstype, m.point)
		}
		parts = append(parts, fmt.Sprintf("%s: %s free of %s%s", p, mebibytes(free), mebibytes(total), where))
	}
	return strings.Join(parts, "; ")
}

// FullBytes is the free space below which a file system counts as full: a lane that
// fails while one it writes to has less has most likely failed for want of space.
const FullBytes = 1 << 20

// FullDisks describes the file systems holding paths that have less than FullBytes free,
// as DiskSpace does, or returns "" when none is that full.
func FullDisks(paths ...string) string {
	var full []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		var st syscall.Statfs_t
		if syscall.Statfs(p, &st) == nil && uint64(st.Bavail)*uint64(st.Bsize) < FullBytes {
			full = append(full, p)
		}
	}
	if len(full) == 0 {
		return ""
	}
	return DiskSpace(full...)
}

func mebibytes(b uint64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// mount is one line of /proc/self/mountinfo.
type mount struct{ point, fstype, source string }

type mountTable []mount

// readMounts reads /proc/self/mountinfo; it is empty where there is none.
func readMounts() mountTable {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var t mountTable
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 2 {
			continue
		}
		t = append(t, mount{point: unescapeMount(a[4]), fstype: b[0], source: unescapeMount(b[1])})
	}
	return t
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// of returns the mount holding path: the last listed one with the longest mount point
// that is path or one of its parents.
func (t mountTable) of(path string) mount {
	var best mount
	for _, m := range t {
		if (path == m.point || m.point == "/" || strings.HasPrefix(path, m.point+"/")) && len(m.point) >= len(best.point) {
			best = m
		}
	}
	return best
}
