package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Files flipbench writes get the mode the umask gives, as any other program's would, and
// a replaced file keeps the mode its owner gave it.
func TestWriteFileModeFollowsTheUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := WriteJSON(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v, want 0644 under umask 022", st.Mode().Perm())
	}
	os.Chmod(path, 0o640)
	if err := Write(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Fatalf("replaced file mode %v, want its own 0640 kept", st.Mode().Perm())
	}
	syscall.Umask(0o002)
	if err := Write(filepath.Join(dir, "env.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "env.json")); st.Mode().Perm() != 0o664 {
		t.Fatalf("new file mode %v, want 0664 under umask 002", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("folder holds %d entries, want the two files and no temporary one", len(entries))
	}
}
