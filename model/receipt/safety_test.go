package receipt

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flipbench/flipbench/internal/owner"
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
	if err := WriteFile(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Fatalf("replaced file mode %v, want its own 0640 kept", st.Mode().Perm())
	}
	syscall.Umask(0o002)
	if err := WriteFile(filepath.Join(dir, "env.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "env.json")); st.Mode().Perm() != 0o664 {
		t.Fatalf("new file mode %v, want 0664 under umask 002", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("folder holds %d entries, want the two files and no temporary one", len(entries))
	}
}

// A temporary file that a killed writer left is recognised by its dead owner and removed;
// one of a live writer (this test) is kept.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := owner.TempPrefix + (owner.ID{PID: os.Getpid(), Start: owner.Self().Start + 1}).String() + "-123-plan.json"
	live := owner.TempName("456", "env.json")
	for _, n := range []string{dead, live, ".other", "plan.json"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	removed, err := RemoveStaleTemps(dir)
	if err != nil || len(removed) != 1 || removed[0] != dead {
		t.Fatalf("removed %v, %v; want only %s", removed, err, dead)
	}
	for _, n := range []string{live, ".other", "plan.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v, want it kept", n, err)
		}
	}
}

// A dot-file is data like any other: hashed, and an added or changed one is caught. A
// symbolic link is refused, so a receipt cannot vouch for a file elsewhere.
func TestManifestHashesDotFilesAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.bench"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("y"), 0o644)
	m, err := WriteManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Files[".hidden"]; !ok {
		t.Fatalf("manifest %v does not list .hidden", m.Files)
	}
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(dir, ".added"), []byte("z"), 0o644)
	err = VerifyManifest(dir)
	for _, want := range []string{".hidden: changed since the run", ".added: not in manifest.json"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
	os.Remove(filepath.Join(dir, ".added"))
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("y"), 0o644)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("key"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "link.json"))
	if _, err := WriteManifest(dir); err == nil || !strings.Contains(err.Error(), "link.json: not a regular file (a symbolic link)") {
		t.Fatalf("WriteManifest over a link: %v", err)
	}
	if err := VerifyManifest(dir); err == nil || !strings.Contains(err.Error(), "link.json: not a regular file (a symbolic link)") {
		t.Fatalf("VerifyManifest over a link: %v", err)
	}
}

// A kill between the append to superseded.jsonl and the rewrite of raw.jsonl leaves the
// moved records in both; the next Supersede moves them without a second copy.
func TestSupersedeAfterAKillAddsNoDuplicate(t *testing.T) {
	dir := t.TempDir()
	a := Record{Collection: 1, Pass: 1, Arm: "base", Lane: "x", Samples: []float64{1}, PID: 10}
	b := Record{Collection: 1, Pass: 2, Arm: "base", Lane: "x", Samples: []float64{2}, PID: 11}
	log, _, err := OpenLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	log.Append(a)
	log.Append(b)
	log.Close()
	dropA := func(r Record) bool { return r.Pass == 1 }
	// What the killed Supersede managed: the append, and a torn start of a second one.
	line, _ := os.ReadFile(filepath.Join(dir, RawFile))
	first, _, _ := strings.Cut(string(line), "\n")
	os.WriteFile(filepath.Join(dir, SupersededFile), []byte(first+"\n"+`{"collection":1,"pa`), 0o644)

	n, err := Supersede(dir, dropA)
	if err != nil || n != 1 {
		t.Fatalf("Supersede = %d, %v; want 1 moved", n, err)
	}
	sup, err := os.ReadFile(filepath.Join(dir, SupersededFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(sup), "\n"); got != 1 || !strings.HasSuffix(string(sup), "\n") {
		t.Fatalf("superseded.jsonl holds %d lines:\n%s\nwant the moved record once", got, sup)
	}
	recs, _ := ReadRecords(dir)
	if len(recs) != 1 || recs[0].Pass != 2 {
		t.Fatalf("raw.jsonl holds %+v, want only the pass-2 record", recs)
	}
}

// A receipt folder that holds only a dead writer's temporary file (a run killed while it
// wrote its plan) is removed; one with data, or a live writer's file, or nothing, is kept.
func TestRemoveAbandoned(t *testing.T) {
	results := t.TempDir()
	dead := owner.TempPrefix + (owner.ID{PID: os.Getpid(), Start: owner.Self().Start + 1}).String() + "-1-plan.json"
	for name, files := range map[string][]string{
		"abandoned": {dead},
		"measured":  {dead, "plan.json"},
		"writing":   {owner.TempName("2", "plan.json")},
		"empty":     nil,
	} {
		os.Mkdir(filepath.Join(results, name), 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(results, name, f), []byte("{"), 0o644)
		}
	}
	removed, err := RemoveAbandoned(results)
	if err != nil || len(removed) != 1 || removed[0] != "abandoned" {
		t.Fatalf("removed %v, %v; want only the abandoned folder", removed, err)
	}
	for _, keep := range []string{"measured", "writing", "empty"} {
		if _, err := os.Stat(filepath.Join(results, keep)); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
}
