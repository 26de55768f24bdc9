package armbuild

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flipbench/flipbench/model/lanekind"
)

// gotestTemplate is the build command of a gotest harness.
func gotestTemplate(t *testing.T) []string {
	t.Helper()
	k, err := lanekind.Lookup(lanekind.Gotest)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Build(lanekind.Harness{Package: "./work"})
	return b.Template
}

func TestExpandBuild(t *testing.T) {
	for _, tc := range []struct {
		name     string
		template []string
		vars     buildVars
		want     []string
	}{
		{
			name:     "gotest, no tags or ldflags",
			template: gotestTemplate(t),
			vars:     buildVars{Out: "/c/w.test", Pkg: "./work"},
			want:     []string{"go", "test", "-c", "-trimpath", "-o", "/c/w.test", "./work"},
		},
		{
			name:     "gotest with tags and ldflags",
			template: gotestTemplate(t),
			vars:     buildVars{Out: "/c/w.test", Pkg: "./work", Tags: "a,b", Ldflags: "-s -w"},
			want:     []string{"go", "test", "-c", "-trimpath", "-o", "/c/w.test", "-tags", "a,b", "-ldflags", "-s -w", "./work"},
		},
		{
			name:     "exec build command",
			template: []string{"cc", "-O2", "-o", "{out}", "{src}/lane.c"},
			vars:     buildVars{Out: "/c/lane", Src: "/wt/lanes"},
			want:     []string{"cc", "-O2", "-o", "/c/lane", "/wt/lanes/lane.c"},
		},
		{
			name:     "placeholder inside an argument is kept even when empty",
			template: []string{"sh", "build.sh", "{out}", "--tags={tags}"},
			vars:     buildVars{Out: "/c/x"},
			want:     []string{"sh", "build.sh", "/c/x", "--tags="},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := expandBuild(tc.template, tc.vars); !slices.Equal(got, tc.want) {
				t.Errorf("expandBuild = %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestGoPackageArg(t *testing.T) {
	for in, want := range map[string]string{
		"./work":    "./work",
		"work":      "./work",
		"lanes/x/":  "./lanes/x",
		".":         ".",
		"./":        ".",
		"../shared": "../shared",
	} {
		if got := goPackageArg(in); got != want {
			t.Errorf("goPackageArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGoWork(t *testing.T) {
	root := t.TempDir()
	wt := filepath.Join(root, "wt")
	dir := filepath.Join(wt, "perf", "lanes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A go.work above the worktree (the user's) is never used.
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := goWork(dir, wt); got != "off" {
		t.Errorf("goWork without one in the worktree = %q, want off", got)
	}
	inWT := filepath.Join(wt, "go.work")
	if err := os.WriteFile(inWT, []byte("go 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := goWork(dir, wt); got != inWT {
		t.Errorf("goWork = %q, want %q", got, inWT)
	}
}

func TestOwnerPID(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"cand-4242-123456", 4242, true},
		{"restore-candA-17-99", 17, true},
		{"my-arm-name-5-1", 5, true},
		{"cand-x-1", 0, false},
		{"tmp-99-123", 99, true},
		{"README", 0, false},
	} {
		pid, ok := ownerPID(tc.name)
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("ownerPID(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}
