// Package installcheck tests the install paths docs/adopt.md gives a new user: go install,
// go run and go get -tool of flipbench at a version tag, through a module proxy, and make
// install from a clone with the proxy off. The proxy is a folder (GOPROXY=file://DIR)
// written from a tag of a clone of this repository, the files the public module proxy
// serves once the tag is pushed; the dependencies come from the usual proxy (or the module
// cache), so nothing is published and nothing but the test's temporary folders changes.
package installcheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

var short = flag.Bool("install-short", false, "only go install (not go run, go get -tool and make install)")

// testVersion is the tag the test makes in its clone: a version no real tag of this
// repository will take, so the clone's describe names it whatever tags the repository has.
const testVersion = "v0.0.0-installcheck"

// TestInstallPaths installs flipbench the ways docs/adopt.md says and checks that each
// binary reports the tagged version.
func TestInstallPaths(t *testing.T) {
	for _, prog := range []string{"go", "git", "make"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("%s is needed to check the install paths: %v", prog, err)
		}
	}
	root := repoRoot(t)
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	run(t, "", nil, "git", "clone", "-q", root, clone)
	// Uncommitted changes of the checkout under test, new files included, are part of
	// what is installed.
	diff := run(t, root, nil, "git", "diff", "HEAD", "--binary")
	if untracked := run(t, root, nil, "git", "ls-files", "--others", "--exclude-standard", "-z"); diff != "" || untracked != "" {
		if diff != "" {
			patch := filepath.Join(tmp, "worktree.patch")
			if err := os.WriteFile(patch, []byte(diff), 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, clone, nil, "git", "apply", patch)
		}
		for _, f := range strings.Split(strings.Trim(untracked, "\x00"), "\x00") {
			if f == "" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(t, clone, nil, "git", "add", "-A")
		run(t, clone, nil, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "uncommitted changes")
	}
	run(t, clone, nil, "git", "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", testVersion, "-m", testVersion)
	proxy := filepath.Join(tmp, "proxy")
	path := writeProxy(t, clone, testVersion, proxy)
	if path != "github.com/flipbench/flipbench" {
		t.Fatalf("module path %q, docs/adopt.md installs github.com/flipbench/flipbench", path)
	}
	upstream := strings.TrimSpace(run(t, "", nil, "go", "env", "GOPROXY"))
	gobin := filepath.Join(tmp, "bin")
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + "," + upstream,
		"GONOSUMDB=" + path, "GOFLAGS=-modcacherw", "GOBIN=" + gobin, "GOWORK=off",
	}
	pkg := path + "/cmd/flipbench@" + testVersion
	want := regexp.MustCompile(`^flipbench ` + regexp.QuoteMeta(testVersion) + ` go1\.\d+`)

	run(t, tmp, env, "go", "install", pkg)
	check(t, "go install", run(t, tmp, env, filepath.Join(gobin, "flipbench"), "--version"), want)
	if *short {
		return
	}
	check(t, "go run", run(t, tmp, env, "go", "run", pkg, "--version"), want)

	app := filepath.Join(tmp, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, app, env, "go", "mod", "init", "example.com/app")
	run(t, app, env, "go", "get", "-tool", pkg)
	check(t, "go tool", run(t, app, env, "go", "tool", "flipbench", "--version"), want)

	// From the clone, offline: its modules are in the cache the runs above filled.
	offline := append(env[1:len(env):len(env)], "GOPROXY=off", "GOBIN="+filepath.Join(tmp, "offline"))
	run(t, clone, offline, "git", "checkout", "-q", testVersion)
	out := run(t, clone, offline, "make", "install")
	check(t, "make install", out[strings.LastIndex(out, "flipbench "):], want)

	firstCompare(t, filepath.Join(tmp, "offline", "flipbench"), filepath.Join(tmp, "yours"))
}

// firstCompare runs docs/adopt.md's second step with the binary it installed: in a
// repository of the user's (a package with one benchmark, committed on main, Sum made
// eight times slower in the working tree), flipbench init, then flipbench compare as the
// doc writes it, with every default: it exits 0 and its table states the one level and
// Sum reproduced slower.
func firstCompare(t *testing.T, flipbench, repo string) {
	t.Helper()
	files := map[string]string{
		"go.mod":      "module example.com/yours\n\ngo 1.22\n",
		"sum.go":      "package yours\n\n// N is the steps of Sum.\nconst N = 20_000\n\n" + sumFunc,
		"sum_test.go": "package yours\n\nimport \"testing\"\n\nvar sink uint64\n\nfunc BenchmarkSum(b *testing.B) {\n\tfor range b.N {\n\t\tsink = Sum()\n\t}\n}\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := []string{"-c", "user.name=t", "-c", "user.email=t@t"}
	run(t, repo, nil, "git", "init", "-q", "-b", "main")
	run(t, repo, nil, "git", "add", "-A")
	run(t, repo, nil, "git", append(git, "commit", "-q", "-m", "base")...)
	run(t, repo, nil, flipbench, "init")
	run(t, repo, nil, "git", "add", ".gitignore")
	run(t, repo, nil, "git", append(git, "commit", "-q", "-m", "ignore flipbench outputs")...)
	slower := "package yours\n\n// N is the steps of Sum.\nconst N = 160_000\n\n" + sumFunc
	if err := os.WriteFile(filepath.Join(repo, "sum.go"), []byte(slower), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, repo, []string{"FLIPBENCH_LOCK=" + filepath.Join(repo, "..", "flipbench.lock")}, flipbench, "compare")
	for _, want := range []string{`(?m)^lane +base +cand +change \[90% CI\] +verdict$`, `(?m)^Sum +.* reproduced-slower$`, `(?m)^receipt: `} {
		check(t, "flipbench compare", out, regexp.MustCompile(want))
	}
	if status := run(t, repo, nil, "git", "status", "--porcelain"); !strings.Contains(status, " M sum.go") || strings.Contains(status, "results/") {
		t.Errorf("git status after compare:\n%s\nwant only sum.go changed (init ignores results/)", status)
	}
}

// sumFunc is the code of the package firstCompare measures.
const sumFunc = `// Sum adds N pseudo-random numbers.
func Sum() uint64 {
	x, s := uint64(1), uint64(0)
	for i := 0; i < N; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		s += x >> 33
	}
	return s
}
`

// writeProxy adds the module at version (a tag of the git repository repo) to the proxy
// folder out, as out/<module path>/@v/{list,VERSION.info,VERSION.mod,VERSION.zip}, and
// returns the module path.
func writeProxy(t *testing.T, repo, version, out string) string {
	t.Helper()
	mod := []byte(run(t, repo, nil, "git", "show", version+":go.mod"))
	path := modfile.ModulePath(mod)
	if err := module.Check(path, version); err != nil {
		t.Fatal(err)
	}
	when, err := time.Parse(time.RFC3339, strings.TrimSpace(run(t, repo, nil, "git", "log", "-1", "--format=%cI", version)))
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": mod} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := zip.CreateFromVCS(f, module.Version{Path: path, Version: version}, repo, version, ""); err != nil {
		t.Fatalf("module zip of %s: %v", version, err)
	}
	return path
}

// check fails the test unless the version line matches want.
func check(t *testing.T, how, out string, want *regexp.Regexp) {
	t.Helper()
	if !want.MatchString(strings.TrimSpace(out)) {
		t.Errorf("%s: flipbench --version printed %q, want %s", how, strings.TrimSpace(out), want)
	}
}

// run runs a program in dir with env added to the test's environment and returns its
// standard output, failing the test with its standard error when it fails.
func run(t *testing.T, dir string, env []string, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// repoRoot is the repository holding this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, ".", nil, "git", "rev-parse", "--show-toplevel"))
}
