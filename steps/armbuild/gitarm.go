package armbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// gitBuild builds the git arms of one experiment: one worktree per arm, the arm's patch
// applied, the harness source copied over, then the build, with binaries cached under
// .flipbench/cache.
type gitBuild struct {
	exp       *spec.Experiment
	opts      Options
	repo      *repo
	src       *harnessSource
	kind      lanekind.Kind
	build     lanekind.Build // how the harness's kind builds an arm
	toolchain map[string]string
	worktrees []string // to remove when done
}

// gitArm is one git arm on its way to a binary.
type gitArm struct {
	arm      spec.Arm
	commit   string
	diff     []byte // uncommitted changes of a WORKTREE arm
	diffSHA  string
	patch    string // as written in the spec
	patchAbs string
	patchSHA string
	key      Key
	wt       string
	entry    *cacheEntry
	// layouts are the arm's layout variants (Options.Layouts), each the arm with its own
	// -randlayout seed; seed is a variant's seed (0 for the arm itself).
	layouts []*gitArm
	seed    int64
}

// toolchainVars are the go env values that change what the go command builds.
func toolchainVars() []string {
	return []string{"GOVERSION", "GOOS", "GOARCH", "GO386", "GOAMD64", "GOARM", "GOARM64",
		"GOEXPERIMENT", "GOFLAGS", "CGO_ENABLED", "CC", "CXX", "CGO_CFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS"}
}

// newGitBuild opens the repository of the ledger root and reads what every git arm
// shares: the harness source and the toolchain.
func newGitBuild(ctx context.Context, exp *spec.Experiment, kind lanekind.Kind, opts Options) (*gitBuild, error) {
	r, err := openRepo(ctx, opts.Root)
	if err != nil {
		return nil, err
	}
	if err := r.ensureDot(); err != nil {
		return nil, fmt.Errorf("preparing %s: %w", r.dot, err)
	}
	// A killed flipbench's build (a go test -c and its compilers) may still run, writing
	// into the worktree about to be removed: end it first.
	if ended, err := owner.EndOrphans(); err != nil {
		opts.warn(fmt.Sprintf("ending what a killed run left running: %v", err))
	} else if len(ended) > 0 {
		opts.warn(fmt.Sprintf("ended %d processes that a killed flipbench left running", len(ended)))
	}
	if err := r.removeStale(ctx); err != nil {
		opts.warn(err.Error())
	}
	g := &gitBuild{exp: exp, opts: opts, repo: r, kind: kind}
	b, problem := kind.Build(exp.Harness.ForKind())
	if problem != nil {
		return nil, specError(exp, "harness."+problem.Field, problem.Msg)
	}
	g.build = b
	g.toolchain, err = goEnv(ctx, opts.Root)
	if err != nil && b.NeedsGo {
		return nil, err
	}
	if g.src, err = loadHarnessSource(ctx, r, exp); err != nil {
		return nil, err
	}
	return g, nil
}

// goEnv reads the go env values that go into the cache key.
func goEnv(ctx context.Context, dir string) (map[string]string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return nil, errors.New("go: not found on PATH (a gotest harness is built with go test -c)")
	}
	out, err := run(ctx, command{Dir: dir, Args: append([]string{"go", "env", "-json"}, toolchainVars()...)})
	if err != nil {
		return nil, fmt.Errorf("reading the go toolchain: %w", err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("reading go env -json: %v", err)
	}
	return env, nil
}

// resolve finds what an arm is made of (commit, uncommitted changes, patch) and its cache
// entry, if it was built before.
func (g *gitBuild) resolve(ctx context.Context, a spec.Arm) (*gitArm, error) {
	ga := &gitArm{arm: a}
	var err error
	if a.Ref == WorktreeRef {
		ga.commit, ga.diff, err = g.repo.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if len(ga.diff) > 0 {
			ga.diffSHA = sha256Hex(ga.diff)
		}
	} else if ga.commit, err = g.repo.commit(ctx, a.Ref); err != nil {
		return nil, err
	}
	if a.Patch != "" {
		ga.patch = a.Patch
		ga.patchAbs = a.Patch
		if !filepath.IsAbs(a.Patch) {
			ga.patchAbs = filepath.Join(g.opts.Root, a.Patch)
		}
		data, err := os.ReadFile(ga.patchAbs)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", a.Patch, unwrapPathError(err))
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			return nil, fmt.Errorf("patch %s: is empty", a.Patch)
		}
		ga.patchSHA = sha256Hex(data)
	}
	ga.key = Key{
		Format:        KeyFormat,
		Kind:          g.exp.Harness.Kind,
		Commit:        ga.commit,
		DiffSHA256:    ga.diffSHA,
		PatchSHA256:   ga.patchSHA,
		HarnessSHA256: g.src.SHA256,
		Dir:           g.repo.rel,
		Package:       g.exp.Harness.Package,
		Tags:          a.Tags,
		Ldflags:       a.Ldflags,
		Build:         g.build.Template,
		Toolchain:     g.toolchain,
	}
	if !g.opts.Rebuild {
		ga.entry = lookup(g.cacheDir(), ga.key, g.build.Testdata)
	}
	return ga, nil
}

func (g *gitBuild) cacheDir() string { return filepath.Join(g.repo.dot, "cache") }

// describe says what an arm is built from, for the log and the receipt.
func (ga *gitArm) describe() string {
	s := fmt.Sprintf("%s (%s)", ga.arm.Ref, receipt.ShortHash(ga.commit))
	if ga.arm.Ref == WorktreeRef {
		s = fmt.Sprintf("%s at HEAD %s", WorktreeRef, receipt.ShortHash(ga.commit))
		if ga.diffSHA != "" {
			s += fmt.Sprintf(" + uncommitted changes (diff sha256 %s)", receipt.ShortHash(ga.diffSHA))
		} else {
			s += " (clean)"
		}
	}
	if ga.patch != "" {
		s += " + " + ga.patch
	}
	if len(ga.arm.Tags) > 0 {
		s += " with tags " + strings.Join(ga.arm.Tags, ",")
	}
	if ga.arm.Ldflags != "" {
		s += fmt.Sprintf(" with ldflags %q", ga.arm.Ldflags)
	}
	return s
}

// prepare makes the arm's worktree: the commit checked out, uncommitted changes and the
// patch applied, the harness source copied over.
func (g *gitBuild) prepare(ctx context.Context, ga *gitArm) error {
	fmt.Fprintf(g.opts.Log, "arm %s: building %s\n", ga.arm.Name, ga.describe())
	wt, err := g.repo.addWorktree(ctx, ga.arm.Name, ga.commit)
	if err != nil {
		return err
	}
	g.worktrees = append(g.worktrees, wt)
	ga.wt = wt
	if len(ga.diff) > 0 {
		f := filepath.Join(g.repo.dot, "tmp", filepath.Base(wt)+".diff")
		if err := os.WriteFile(f, ga.diff, 0o644); err != nil {
			return err
		}
		err := g.repo.apply(ctx, wt, f, false)
		os.Remove(f)
		if err != nil {
			if interrupted(err) {
				return err
			}
			return fmt.Errorf("the uncommitted changes do not apply to HEAD %s: %v", receipt.ShortHash(ga.commit), err)
		}
	}
	if ga.patch != "" {
		if err := g.repo.apply(ctx, wt, ga.patchAbs, false); err != nil {
			if interrupted(err) {
				return err
			}
			data, _ := os.ReadFile(ga.patchAbs)
			return fmt.Errorf("patch %s does not apply to %s; %s: %v",
				ga.patch, ga.describeRef(), patchOrigin(ga.patchAbs, data), err)
		}
	}
	if err := g.src.install(ctx, g.repo, wt); err != nil {
		return fmt.Errorf("copying the harness source from %s: %w", g.src.Ref, err)
	}
	return nil
}

// describeRef names the arm's ref and commit.
func (ga *gitArm) describeRef() string {
	return fmt.Sprintf("%s (%s)", ga.arm.Ref, receipt.ShortHash(ga.commit))
}

// compile runs the build in the arm's worktree and stores the binary in the cache.
func (g *gitBuild) compile(ctx context.Context, ga *gitArm) error {
	tmp, err := os.MkdirTemp(g.cacheDir(), ownedPrefix("tmp"))
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	out := filepath.Join(tmp, g.build.Bin)
	buildDir := filepath.Join(ga.wt, filepath.FromSlash(g.repo.rel))
	srcDir := filepath.Join(ga.wt, filepath.FromSlash(g.src.Dir))
	argv := expandBuild(g.build.Template, buildVars{
		Out:     out,
		Src:     srcDir,
		Tags:    strings.Join(ga.arm.Tags, ","),
		Ldflags: ga.arm.Ldflags,
		Pkg:     goPackageArg(g.exp.Harness.Package),
	})
	// The go command's own temporary folder is one of ours, so what a build killed with
	// flipbench leaves there is removed by the next run (removeStale).
	gotmp, err := os.MkdirTemp(filepath.Join(g.repo.dot, "tmp"), ownedPrefix("gotmp"))
	if err != nil {
		return err
	}
	defer os.RemoveAll(gotmp)
	env := []string{"GOWORK=" + goWork(buildDir, ga.wt), "GOTMPDIR=" + gotmp}
	start := g.opts.Clock.Now()
	if _, err := run(ctx, command{Dir: buildDir, Args: argv, Env: env}); err != nil {
		if interrupted(err) {
			return fmt.Errorf("interrupted while building %s: %w", ga.describeRef(), context.Canceled)
		}
		return fmt.Errorf("build of %s failed: %w", ga.describeRef(), err)
	}
	took := g.opts.Clock.Since(start)
	if st, err := os.Stat(out); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("build of %s: %s did not write {out} (%s)", ga.describeRef(), strings.Join(quoteArgs(argv), " "), out)
	}
	sum, err := receipt.HashFile(out)
	if err != nil {
		return err
	}
	runDir := ""
	if g.build.Testdata {
		// The lanes run where their testdata/ is, as under go test: a copy of the one the
		// binary was built with (the harness ref's), not the user's working tree.
		runDir = RunDirName
		if err := copyTestdata(filepath.Join(srcDir, "testdata"), filepath.Join(tmp, runDir, "testdata")); err != nil {
			return fmt.Errorf("build of %s: keeping the harness testdata: %w", ga.describeRef(), err)
		}
	}
	entry, err := store(g.cacheDir(), tmp, cacheEntry{
		Key: ga.key, Bin: g.build.Bin, RunDir: runDir, SHA256: sum, Built: g.opts.Clock.Now().UTC(), Seconds: took.Seconds(),
	})
	if err != nil {
		return err
	}
	keep = true
	ga.entry = entry
	if ga.seed == 0 { // layouts are said once per arm (linkLayouts)
		fmt.Fprintf(g.opts.Log, "arm %s: built %s (sha256 %s) in %.1fs\n", ga.arm.Name, entry.path, receipt.ShortHash(sum), took.Seconds())
	}
	return nil
}

// cleanup removes every worktree this build made.
func (g *gitBuild) cleanup(ctx context.Context) error {
	if len(g.worktrees) == 0 {
		return nil
	}
	err := g.repo.removeWorktrees(ctx, g.worktrees)
	g.worktrees = nil
	return err
}

// LayoutSeeds returns the -randlayout seeds of the arm at index i (base 0) of a run of k
// layouts: fixed per arm and index, so reruns link nothing new, and different for every
// arm, so that no two arms share a layout by their seed.
func LayoutSeeds(i, k int) []int64 {
	seeds := make([]int64, k)
	for j := range seeds {
		seeds[j] = int64(1000*(i+1) + j + 1)
	}
	return seeds
}

// layoutVariants returns one variant of ga per seed: ga with -randlayout=SEED added to
// its ldflags, each with its own cache key and cache entry if it was linked before.
func (g *gitBuild) layoutVariants(ga *gitArm, seeds []int64) []*gitArm {
	var out []*gitArm
	for _, seed := range seeds {
		v := *ga
		v.layouts, v.seed, v.entry, v.wt = nil, seed, nil, ""
		v.arm.Ldflags = strings.TrimSpace(ga.arm.Ldflags + " -randlayout=" + strconv.FormatInt(seed, 10))
		v.key.Ldflags = v.arm.Ldflags
		if !g.opts.Rebuild {
			v.entry = lookup(g.cacheDir(), v.key, g.build.Testdata)
		}
		out = append(out, &v)
	}
	return out
}

// receiptArm turns a built git arm into the arm the run loop uses.
func (g *gitBuild) receiptArm(ga *gitArm) receipt.Arm {
	ra := newArm(g.exp, g.kind, ga.arm)
	ra.Bin, ra.SHA256 = ga.entry.path, ga.entry.SHA256
	ra.Dir = ga.entry.runDir()
	ra.Commit = ga.commit
	ra.Dirty = ga.diffSHA != ""
	ra.DiffSHA256 = ga.diffSHA
	ra.PatchSHA256 = ga.patchSHA
	ra.Source = fmt.Sprintf("git %s; harness from %s (%s)", ga.describe(), g.src.Ref, receipt.ShortHash(g.src.Commit))
	for _, v := range ga.layouts {
		ra.Layouts = append(ra.Layouts, receipt.ArmLayout{Seed: v.seed, Bin: v.entry.path, SHA256: v.entry.SHA256})
	}
	return ra
}

// buildVars are the values of a build template's placeholders.
type buildVars struct {
	Out, Src, Tags, Ldflags, Pkg string
}

// expandBuild fills a build command template. A flag followed by a placeholder that
// expands to nothing ("-tags", "{tags}") is left out, so go does not see an empty flag.
func expandBuild(template []string, v buildVars) []string {
	rep := strings.NewReplacer("{out}", v.Out, "{src}", v.Src, "{tags}", v.Tags, "{ldflags}", v.Ldflags, "{pkg}", v.Pkg)
	var argv []string
	for i := 0; i < len(template); i++ {
		a := template[i]
		if strings.HasPrefix(a, "-") && i+1 < len(template) {
			next := template[i+1]
			if (next == "{tags}" && v.Tags == "") || (next == "{ldflags}" && v.Ldflags == "") {
				i++
				continue
			}
		}
		argv = append(argv, rep.Replace(a))
	}
	return argv
}

// goPackageArg turns harness.package ("lanes/x", "./lanes/x") into the argument go test
// expects for a directory ("./lanes/x").
func goPackageArg(pkg string) string {
	p := path.Clean(filepath.ToSlash(pkg))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return p
	}
	return "./" + p
}

// goWork returns the go.work file of a build in dir: the first one found going up from
// dir to the worktree root, or "off". Never one outside the worktree: the user's own
// go.work would build their working tree's code instead of the arm's.
func goWork(dir, wt string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "go.work")); err == nil && st.Mode().IsRegular() {
			return filepath.Join(d, "go.work")
		}
		if d == wt || d == filepath.Dir(d) {
			return "off"
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// unwrapPathError drops the path from an *os.PathError, for messages that name it already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// GoList runs go list -f format -- patterns in dir, as builds run (the go command in
// armbuild's runner: its own process group, marked, ended with what it leaves), and
// returns its output. On failure the error is a *CmdError holding what go list said.
func GoList(ctx context.Context, dir, format string, patterns []string) ([]byte, error) {
	return run(ctx, command{Dir: dir, Args: append([]string{"go", "list", "-f", format, "--"}, patterns...)})
}
