package receipt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/internal/owner"
)

// A dot-file is data like any other: hashed, and an added or changed one is caught. A
// symbolic link is refused, so a receipt cannot vouch for a file elsewhere.
func TestManifestHashesDotFilesAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.bench"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("y"), 0o644)
	m, err := Folder(dir).SealData()
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
	if _, err := Folder(dir).SealData(); err == nil || !strings.Contains(err.Error(), "link.json: not a regular file (a symbolic link)") {
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
	log, _, err := Folder(dir).OpenLog()
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

	n, err := Folder(dir).Supersede(dropA)
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
