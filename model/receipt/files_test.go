package receipt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHostWarningsOncePerKind(t *testing.T) {
	env := Env{Snapshots: []Snapshot{
		{Warnings: []string{"host busy before pass 1 of collection 1: load 2.5"}},
		{Warnings: []string{"host busy after pass 1 of collection 1: load 2.6", "low disk after pass 1: 10 MiB"}},
		{},
		{Warnings: []string{"host busy before pass 2 of collection 1: load 3.0"}},
	}}
	got := env.HostWarnings()
	want := []string{
		"host busy before pass 1 of collection 1: load 2.5 (first of 3 of the run's 4 host snapshots that show it)",
		"low disk after pass 1: 10 MiB",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLogDropsTornLastLine(t *testing.T) {
	dir := t.TempDir()
	good := `{"collection":1,"pass":1,"arm":"base","lane":"a","samples":[1]}` + "\n"
	torn := `{"collection":1,"pass":1,"arm":"cand","la`
	if err := os.WriteFile(filepath.Join(dir, RawFile), []byte(good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	log, recs, err := Folder(dir).OpenLog()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Arm != "base" {
		t.Fatalf("records %+v, want the one complete line", recs)
	}
	if err := log.Append(Record{Collection: 1, Pass: 1, Arm: "cand", Lane: "a", Samples: []float64{2}}); err != nil {
		t.Fatal(err)
	}
	log.Close()
	recs, err = ReadRecords(dir)
	if err != nil || len(recs) != 2 || recs[1].Arm != "cand" {
		t.Fatalf("after append: %+v, %v", recs, err)
	}
}

func TestLogRejectsABadMiddleLine(t *testing.T) {
	dir := t.TempDir()
	data := "{\"collection\":1}\nnot json\n{\"collection\":2}\n"
	os.WriteFile(filepath.Join(dir, RawFile), []byte(data), 0o644)
	_, err := ReadRecords(dir)
	if err == nil || !strings.Contains(err.Error(), "raw.jsonl:2: ") {
		t.Fatalf("err = %v, want one naming raw.jsonl line 2", err)
	}
}

func TestManifestCatchesEveryChange(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.bench"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte("y"), 0o644)
	if _, err := Folder(dir).SealData(); err != nil {
		t.Fatal(err)
	}
	if err := VerifyManifest(dir); err != nil {
		t.Fatalf("fresh manifest: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "a.bench"), []byte("z"), 0o644)
	os.Remove(filepath.Join(dir, "b.json"))
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("new"), 0o644)
	err := VerifyManifest(dir)
	for _, want := range []string{"a.bench: changed since the run", "b.json: listed in manifest.json but missing", "c.txt: not in manifest.json"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}
