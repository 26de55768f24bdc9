// Package armbuild turns the arms of an experiment spec into runnable binaries, and keeps
// prototypes as archived patches.
//
// An arm is either prebuilt (`bin:` a path, relative to the ledger root, or a bare name
// looked up on PATH) or built from git (`ref:` with optional patch, tags, ldflags). Either
// way the result is a receipt.Arm: the binary, its SHA-256, where it came from, and the lane
// command template, so the run loop never needs to know how an arm was made.
//
// A git arm is built in its own worktree (git worktree add --detach, under .flipbench/ at
// the repository root): the ref checked out, the arm's patch applied with git apply, the
// harness source taken from harness.ref copied over (so every arm runs the same lanes), then
// go test -c for a gotest harness or the exec harness's build command. `ref: WORKTREE`
// builds the working tree as it is, uncommitted changes included, recorded as dirty with
// the hash of the diff. Binaries are cached under .flipbench/cache/, keyed by everything
// they depend on (see Key), so a second run of an experiment builds nothing. Worktrees are
// removed on success, failure and cancellation; the user's working tree, index, stash and
// branches are never touched.
//
// Before anything is measured, Build lists the benchmarks of every gotest arm and checks
// that each lane of the spec is in each arm, and, when a lane counts instructions, that
// Valgrind is installed.
//
// Archive writes a candidate branch as a patch against its merge base with the base arm's
// ref, with a README; Restore turns such a patch back into a branch.
package armbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// Options configures Build.
type Options struct {
	// Root is the ledger root: the directory holding experiments/. Relative arm paths
	// (bin, patch) and the harness package and paths are resolved against it.
	Root string
	// Log receives build progress (a line per arm: building, built, or cached); nil
	// discards it.
	Log io.Writer
	// Rebuild ignores cached binaries; the new builds replace them.
	Rebuild bool
	// Warn receives the build's warnings (what a killed run left, worktrees that could not
	// be removed); nil prints them to Log.
	Warn func(receipt.Warning)
	// Clock stamps each build and times it; nil is the machine's clock.
	Clock clock.Clock
	// Starter starts the programs Build runs on the built binaries (listing their lanes,
	// checking Valgrind); nil means harness.ExecStarter with Clock. The builds themselves
	// (git, go) run here, in armbuild's own runner.
	Starter harness.Starter
	// Layouts, above 1, links every git arm of a gotest harness that many more times, each
	// with its own function layout (-ldflags=-randlayout=SEED; receipt.Arm.Layouts), so
	// that a build's layout is one draw of many rather than a bias of the arm.
	Layouts int
}

// starter returns o.Starter, or the real one.
func (o Options) starter() harness.Starter {
	if o.Starter == nil {
		return harness.ExecStarter{Clock: o.Clock}
	}
	return o.Starter
}

// warn reports a build warning through Warn, or on Log.
func (o Options) warn(msg string) {
	if o.Warn != nil {
		o.Warn(receipt.Warning{Stage: receipt.StageBuild, Text: msg})
		return
	}
	fmt.Fprintf(o.Log, "warning: %s\n", msg)
}

// Build resolves or builds every arm of exp, base first, and returns them ready to run.
// Nothing is measured here, so every error (a bad ref, a patch that does not apply, a build
// failure, a lane missing in an arm) is reported before any measurement starts. Cancelling
// ctx stops the build in flight; the worktrees are removed all the same.
func Build(ctx context.Context, exp *spec.Experiment, opts Options) ([]receipt.Arm, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	kind, err := exp.Harness.LaneKind()
	if err != nil {
		return nil, specError(exp, "harness.kind", err.Error())
	}
	if counted := countedLanes(exp); len(counted) > 0 {
		if _, err := harness.Valgrind(ctx, opts.starter()); err != nil {
			return nil, fmt.Errorf("%w (lanes %s)", err, strings.Join(counted, ", "))
		}
	}
	all := append([]spec.Arm{exp.Base()}, exp.Candidates()...)
	var (
		g       *gitBuild
		gitArms = make([]*gitArm, len(all))
		out     = make([]receipt.Arm, len(all))
	)
	// Resolve every arm first: a bad ref or a missing patch fails before any build.
	for i, a := range all {
		if a.Bin != "" {
			if out[i], err = prebuilt(exp, kind, a, opts); err != nil {
				return nil, fmt.Errorf("arm %s: %w", a.Name, err)
			}
			continue
		}
		if g == nil {
			if g, err = newGitBuild(ctx, exp, kind, opts); err != nil {
				return nil, err
			}
			defer func() {
				if cerr := g.cleanup(ctx); cerr != nil {
					opts.warn(fmt.Sprintf("%v (remove them by hand, then run git worktree prune)", cerr))
				}
			}()
		}
		if gitArms[i], err = g.resolve(ctx, a); err != nil {
			return nil, fmt.Errorf("arm %s: %w", a.Name, err)
		}
	}
	if g != nil {
		if opts.Layouts > 1 && exp.Harness.Kind == lanekind.Gotest {
			for i, ga := range gitArms {
				if ga != nil {
					ga.layouts = g.layoutVariants(ga, LayoutSeeds(i, opts.Layouts))
				}
			}
		}
		if err := g.buildAll(ctx, gitArms); err != nil {
			return nil, err
		}
		for i, ga := range gitArms {
			if ga != nil {
				out[i] = g.receiptArm(ga)
			}
		}
	}
	if err := checkLanes(ctx, opts.starter(), exp, out); err != nil {
		return nil, err
	}
	if b, _ := kind.Build(exp.Harness.ForKind()); b.Testdata {
		// Like go test, run gotest lanes where their testdata/ is, so a lane that opens
		// testdata/ by a relative path finds it. A git arm runs in its cache entry, which
		// holds the testdata it was built with (set by receiptArm); a prebuilt test binary
		// has no other source than the package's folder.
		if dir := filepath.Join(opts.Root, exp.Harness.Package); isDir(dir) {
			for i := range out {
				if out[i].Dir == "" {
					out[i].Dir = dir
				}
			}
		}
	}
	return out, nil
}

// countedLanes returns the lanes of exp that count instructions.
func countedLanes(exp *spec.Experiment) []string {
	var names []string
	for _, l := range exp.Lanes {
		if exp.Harness.CountsInstructions(l) {
			names = append(names, l.Name)
		}
	}
	return names
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// buildAll builds the git arms that are not cached: every worktree is prepared first (so a
// patch that does not apply fails before any compiler runs), then each is built. Arms with
// the same key share one build.
func (g *gitBuild) buildAll(ctx context.Context, arms []*gitArm) error {
	first := map[string]*gitArm{} // key sum -> the arm that builds it
	var todo []*gitArm
	for _, ga := range arms {
		if ga == nil {
			continue
		}
		if ga.entry != nil {
			fmt.Fprintf(g.opts.Log, "arm %s: cached %s (sha256 %s)\n", ga.arm.Name, ga.entry.path, receipt.ShortHash(ga.entry.SHA256))
			continue
		}
		if _, ok := first[ga.key.Sum()]; ok {
			continue
		}
		first[ga.key.Sum()] = ga
		todo = append(todo, ga)
	}
	for _, ga := range todo {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("arm %s: interrupted before building: %w", ga.arm.Name, err)
		}
		if err := g.prepare(ctx, ga); err != nil {
			return fmt.Errorf("arm %s: %w", ga.arm.Name, err)
		}
	}
	for _, ga := range todo {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("arm %s: interrupted before building: %w", ga.arm.Name, err)
		}
		if err := g.compile(ctx, ga); err != nil {
			return fmt.Errorf("arm %s: %w", ga.arm.Name, err)
		}
	}
	for _, ga := range arms {
		if ga != nil && ga.entry == nil {
			b := first[ga.key.Sum()]
			ga.entry = b.entry
			fmt.Fprintf(g.opts.Log, "arm %s: same build as arm %s: %s\n", ga.arm.Name, b.arm.Name, ga.entry.path)
		}
	}
	return g.linkLayouts(ctx, arms)
}

// linkLayouts builds every layout variant of the arms that is not cached, in its arm's
// worktree (prepared now when the arm itself was cached). Only the link differs from the
// arm's build, so the go command's cache makes each a link. The log gets one line per arm
// that linked any (the receipt's plan.json lists each layout's binary and hash).
func (g *gitBuild) linkLayouts(ctx context.Context, arms []*gitArm) error {
	for _, ga := range arms {
		if ga == nil {
			continue
		}
		var linked []int64
		start := g.opts.Clock.Now()
		for _, v := range ga.layouts {
			if v.entry != nil {
				continue
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("arm %s: interrupted before linking its layouts: %w", ga.arm.Name, err)
			}
			if ga.wt == "" {
				if err := g.prepare(ctx, ga); err != nil {
					return fmt.Errorf("arm %s: %w", ga.arm.Name, err)
				}
			}
			v.wt = ga.wt
			if err := g.compile(ctx, v); err != nil {
				return fmt.Errorf("arm %s: %w", ga.arm.Name, err)
			}
			linked = append(linked, v.seed)
		}
		if len(linked) > 0 {
			fmt.Fprintf(g.opts.Log, "arm %s: linked %s (-randlayout %s) in %.1fs; plan.json lists their binaries and hashes\n",
				ga.arm.Name, human.Count(len(linked), "layout", "layouts"), seedRange(linked), g.opts.Clock.Since(start).Seconds())
		}
	}
	return nil
}

// seedRange writes layout seeds: "1001-1008" when consecutive, else "1001, 1003".
func seedRange(seeds []int64) string {
	if n := len(seeds); n > 1 && seeds[n-1]-seeds[0] == int64(n-1) {
		return fmt.Sprintf("%d-%d", seeds[0], seeds[n-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ", ")
}

// prebuilt resolves a prebuilt arm's binary and hashes it.
func prebuilt(exp *spec.Experiment, kind lanekind.Kind, a spec.Arm, opts Options) (receipt.Arm, error) {
	bin, err := resolveBin(opts.Root, a.Bin)
	if err != nil {
		return receipt.Arm{}, err
	}
	sum, err := receipt.HashFile(bin)
	if err != nil {
		return receipt.Arm{}, fmt.Errorf("bin: %w", err)
	}
	ra := newArm(exp, kind, a)
	ra.Bin, ra.SHA256, ra.Source = bin, sum, "prebuilt "+a.Bin
	fmt.Fprintf(opts.Log, "arm %s: prebuilt %s (sha256 %s)\n", a.Name, bin, receipt.ShortHash(sum))
	return ra, nil
}

// newArm fills the parts of a receipt.Arm that do not depend on how it was built.
func newArm(exp *spec.Experiment, kind lanekind.Kind, a spec.Arm) receipt.Arm {
	ra := receipt.Arm{Name: a.Name, Kind: kind.Name(), Args: a.Args, Command: kind.Command(exp.Harness.ForKind())}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ra.Env = append(ra.Env, k+"="+a.Env[k])
	}
	return ra
}

// resolveBin finds a prebuilt binary: a path with a separator is relative to root; a bare
// name is looked up on PATH, as a shell would.
func resolveBin(root, bin string) (string, error) {
	if !strings.ContainsRune(bin, filepath.Separator) {
		p, err := exec.LookPath(bin)
		if err != nil {
			// Say what the name is where the user may have meant it: a folder (bin: bin)
			// or a file beside experiments/ written without ./.
			if st, serr := os.Stat(filepath.Join(root, bin)); serr == nil && st.IsDir() {
				return "", fmt.Errorf("bin %s: not found on PATH, and %s in the ledger root is a directory, not a program; give the binary's path, e.g. ./%s/NAME", bin, bin, bin)
			} else if serr == nil {
				return "", fmt.Errorf("bin %s: not found on PATH (a bare name is looked up there); write ./%s for the file in the ledger root", bin, bin)
			}
			return "", fmt.Errorf("bin %s: not found on PATH", bin)
		}
		return filepath.Abs(p)
	}
	p := bin
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("bin %s: %v (build it first, e.g. with make)", bin, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("bin %s: not an executable file", bin)
	}
	return filepath.Abs(p)
}
