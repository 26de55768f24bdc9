package armbuild

import (
	"os"
	"path/filepath"
	"testing"
)

func baseKey(t *testing.T) Key {
	return Key{
		Format:        KeyFormat,
		Kind:          "gotest",
		Commit:        "1111111111111111111111111111111111111111",
		HarnessSHA256: "aaaa",
		Dir:           ".",
		Package:       "./work",
		Tags:          []string{"a", "b"},
		Ldflags:       "-s -w",
		Build:         gotestTemplate(t),
		Toolchain:     map[string]string{"GOVERSION": "go1.26.0", "GOOS": "linux", "GOARCH": "amd64", "CGO_ENABLED": "0"},
	}
}

func TestKeySumChangesWithEveryInput(t *testing.T) {
	base := baseKey(t).Sum()
	for _, tc := range []struct {
		name   string
		change func(*Key)
	}{
		{"format", func(k *Key) { k.Format++ }},
		{"kind", func(k *Key) { k.Kind = "exec" }},
		{"commit", func(k *Key) { k.Commit = "2222222222222222222222222222222222222222" }},
		{"diff", func(k *Key) { k.DiffSHA256 = "d1" }},
		{"patch", func(k *Key) { k.PatchSHA256 = "p1" }},
		{"harness source", func(k *Key) { k.HarnessSHA256 = "bbbb" }},
		{"build dir", func(k *Key) { k.Dir = "perf" }},
		{"package", func(k *Key) { k.Package = "./other" }},
		{"tags", func(k *Key) { k.Tags = []string{"a"} }},
		{"ldflags", func(k *Key) { k.Ldflags = "-s" }},
		{"build command", func(k *Key) { k.Build = []string{"cc", "-o", "{out}", "lane.c"} }},
		{"go version", func(k *Key) { k.Toolchain["GOVERSION"] = "go1.26.1" }},
		{"cgo", func(k *Key) { k.Toolchain["CGO_ENABLED"] = "1" }},
		{"goflags", func(k *Key) { k.Toolchain["GOFLAGS"] = "-race" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := baseKey(t)
			tc.change(&k)
			if k.Sum() == base {
				t.Errorf("changing the %s does not change the key", tc.name)
			}
		})
	}
}

func TestKeySumIgnoresWhatDoesNotChangeABuild(t *testing.T) {
	base := baseKey(t).Sum()
	for _, tc := range []struct {
		name   string
		change func(*Key)
	}{
		{"tag order", func(k *Key) { k.Tags = []string{"b", "a"} }},
		{"empty toolchain value", func(k *Key) { k.Toolchain["GOEXPERIMENT"] = "" }},
		{"nothing", func(k *Key) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := baseKey(t)
			tc.change(&k)
			if got := k.Sum(); got != base {
				t.Errorf("Sum = %s, want %s", got, base)
			}
		})
	}
	k := baseKey(t)
	_ = k.Sum()
	if k.Tags[0] != "a" || k.Tags[1] != "b" {
		t.Errorf("Sum reordered the caller's tags: %v", k.Tags)
	}
}

func TestCacheStoreLookup(t *testing.T) {
	cache := t.TempDir()
	k := baseKey(t)
	if e := lookup(cache, k, true); e != nil {
		t.Fatalf("lookup in an empty cache = %+v, want nil", e)
	}
	tmp, err := os.MkdirTemp(cache, "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "work.test")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTestdata(filepath.Join(cache, "no-testdata"), filepath.Join(tmp, RunDirName, "testdata")); err != nil {
		t.Fatal(err)
	}
	sum := sha256Hex([]byte("binary"))
	e, err := store(cache, tmp, cacheEntry{Key: k, Bin: "work.test", RunDir: RunDirName, SHA256: sum})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, k.Sum()[:cacheDirLen], "work.test"); e.path != want {
		t.Errorf("stored at %s, want %s", e.path, want)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary folder is still there: %v", err)
	}

	got := lookup(cache, k, true)
	if got == nil || got.path != e.path || got.SHA256 != sum {
		t.Fatalf("lookup = %+v, want the stored entry", got)
	}
	if want := filepath.Join(cache, k.Sum()[:cacheDirLen], RunDirName); got.runDir() != want {
		t.Errorf("run dir %s, want %s", got.runDir(), want)
	}
	other := baseKey(t)
	other.Ldflags = ""
	if e := lookup(cache, other, true); e != nil {
		t.Errorf("lookup of another key = %+v, want nil", e)
	}

	// A gotest entry without its run folder (its testdata) is not used.
	if err := os.Rename(got.runDir(), got.runDir()+".moved"); err != nil {
		t.Fatal(err)
	}
	if e := lookup(cache, k, true); e != nil {
		t.Errorf("lookup without the run folder = %+v, want nil", e)
	}
	if err := os.Rename(got.runDir()+".moved", got.runDir()); err != nil {
		t.Fatal(err)
	}

	// A binary changed after it was cached is not used.
	if err := os.WriteFile(e.path, []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	if e := lookup(cache, k, true); e != nil {
		t.Errorf("lookup after the binary changed = %+v, want nil", e)
	}
}

func TestCopyTestdata(t *testing.T) {
	src := filepath.Join(t.TempDir(), "testdata")
	for name, data := range map[string]string{"a.txt": "a", "sub/b.txt": "b"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/b.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "pkg", "testdata")
	if err := copyTestdata(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "a", "sub/b.txt": "b", "link": "b"} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dst, "a.txt")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("a.txt mode: %v, %v", st, err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "sub/b.txt" {
		t.Errorf("link: %q, %v", target, err)
	}

	// No testdata: the run folder is made, empty.
	dst = filepath.Join(t.TempDir(), "pkg", "testdata")
	if err := copyTestdata(filepath.Join(t.TempDir(), "none"), dst); err != nil {
		t.Fatal(err)
	}
	if !isDir(filepath.Dir(dst)) || isDir(dst) {
		t.Errorf("want %s made and %s not", filepath.Dir(dst), dst)
	}
}
