package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/compare"
	"github.com/flipbench/flipbench/internal/shquote"
	"github.com/flipbench/flipbench/internal/texttable"
	"github.com/flipbench/flipbench/lanekind"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/pipeline"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/receipt/loaded"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

type compareOptions struct {
	refs, packages   []string
	bench, benchtime string
	results, save    string
	title            string
	overrides        spec.Overrides
	args             []string
	wait             waitFlag
	roles            compare.Roles
	quiet            bool
	format           string
	profile          profileLanesFlag
	measureIdentical bool
}

func newCompareCmd(s Streams) *cobra.Command {
	opts := &compareOptions{}
	var pf protocolFlags
	cmd := &cobra.Command{
		Use:   "compare [BASE [CANDIDATE]] [PACKAGES]",
		Short: "Compare the Go benchmarks of a base commit and the working tree, with nothing to write first",
		Long: `compare builds the benchmarks of PACKAGES (default: the package in the current folder;
./... for every package) at BASE and at CANDIDATE, each in a git worktree of its own, runs
every benchmark that --bench selects in its own process, in order-flipped pass pairs
(the gate's sequential protocol: rounds until every benchmark is decided, at most 20,
within 10 minutes), and prints one table: the base and candidate values with their
spread, the change with its 95% interval (as a factor beyond 2x), the verdict and its
reason. For every lane that reproduced, one more process per arm then runs with
-test.cpuprofile (and -test.memprofile where the lane reports B/op), and the table is
followed by the functions whose cost per operation changed most, as go tool pprof
-diff_base shows them (--profile-lanes all profiles every lane, none no lane; the
profiles are in the receipt). A receipt is written as for every run (results/ at the repository root, or
--results), and --save NNN writes the run as experiment page NNN, which flipbench finalize
fills in.

BASE defaults to the merge base of HEAD with the default branch (origin/HEAD, else main
or master); CANDIDATE to the working tree with its uncommitted changes (WORKTREE). An
argument that starts with ./, ../ or / or holds ... names packages; any other is a ref.
The benchmark functions (the package's _test.go files) come from HEAD in both arms, so
both run the same lanes; the code under test is the arm's.

--primary, --guard and --control (regular expressions on the lane names) give the lanes
roles, --expect the primaries' direction; the rest are secondary. --format markdown writes
the table for a pull-request comment; --quiet prints only the table and the receipt.

Exit status: 0 when every run finished, whatever the verdicts; 1 on an error, or when runs
failed (after the table and the receipt); 2 on a usage error.`,
		Example: `  flipbench compare                       # the merge base with main against the working tree
  flipbench compare main ./btree --bench 'Insert|Delete'
  flipbench compare v1.2.0 HEAD ./... --benchtime 200ms
  flipbench compare main --save 12        # and keep it as experiments/012-....md
  flipbench compare --save 1 --primary Tokenize --guard Count --title 'ASCII fast path'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeWaitArg(&opts.wait, s.argv, args)
			if err != nil {
				return err
			}
			for _, a := range args {
				if compare.IsPackageArg(a) {
					opts.packages = append(opts.packages, a)
				} else if len(opts.packages) > 0 {
					return usageError("compare: %q after the packages: give BASE and CANDIDATE first, then packages (./...)", a)
				} else {
					opts.refs = append(opts.refs, a)
				}
			}
			if len(opts.refs) > 2 {
				return usageError("compare: want at most BASE and CANDIDATE, got refs %s (a package path starts with ./)", strings.Join(opts.refs, ", "))
			}
			if opts.benchtime != "" && !lanekind.ValidBenchtime(opts.benchtime) {
				return usageError("--benchtime %q: want a duration like 100ms or a count like 1000x", opts.benchtime)
			}
			if _, err := compare.Matcher(opts.bench); err != nil {
				return usageError("%v", err)
			}
			if err := checkCompareOutput(opts); err != nil {
				return err
			}
			pf.apply(cmd.Flags(), &opts.overrides)
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runCompare(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.bench, "bench", "", "run only the benchmarks this go test -bench expression selects")
	f.StringVar(&opts.benchtime, "benchtime", "", "each sample's -test.benchtime: a duration or a count like 1000x (default "+compare.DefaultBenchtime+")")
	f.IntVar(&pf.samples, "samples", 0, "samples per process (default 6)")
	f.IntVar(&pf.warmup, "warmup", 0, "warmup samples per process, run and dropped (default 0 for a duration benchtime, whose calibrated samples go test precedes with a call at b.N = 1; 1 for a count)")
	f.IntVar(&pf.maxPairs, "max-pairs", 0, "the most rounds of pass pairs (default 20)")
	f.DurationVar(&pf.budget, "budget", 0, "the measured wall time after which no round starts (default 10m)")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ at the repository root)")
	f.StringVar(&opts.save, "save", "", "also write the run as experiment page NNN (experiments/NNN-slug.md), for flipbench finalize")
	f.StringVar(&opts.title, "title", "", "the saved page's title (with --save)")
	addRoleFlags(f, &opts.roles)
	addCompareOutputFlags(f, opts)
	addProfileLanesFlag(cmd, &opts.profile)
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

func runCompare(ctx context.Context, s Streams, opts *compareOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	loud := s
	if opts.quiet {
		var q *quietWriter
		s, q = quietStreams(s)
		defer q.Close()
	}
	// Flag values are checked before git is asked anything.
	if _, err := compare.Experiment(compare.Options{}).Resolve(opts.overrides); err != nil {
		return flagProblem(err)
	}
	top, err := armbuild.TopLevel(ctx, ".")
	if err != nil {
		return fmt.Errorf("compare needs a git repository: %w", err)
	}
	root := top
	var saveID int
	if opts.save != "" {
		if saveID, err = strconv.Atoi(strings.TrimLeft(opts.save, "0")); err != nil || saveID <= 0 {
			return usageError("--save %q: want a positive experiment number, as in --save 12", opts.save)
		}
		if r, err := ledger.FindRoot("."); err == nil {
			if rel, err := filepath.Rel(top, r); err == nil && !strings.HasPrefix(rel, "..") {
				root = r // an existing ledger in the repository
			}
		}
	} else if opts.title != "" {
		return usageError("--title: only with --save")
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	pkgs, err := compare.Packages(ctx, wd, root, opts.packages)
	if err != nil {
		return err
	}
	if opts.save != "" && len(pkgs) > 1 {
		return usageError("--save: one page is one package; %d packages match (%s)", len(pkgs), strings.Join(pkgs, ", "))
	}
	base, cand, names, err := compareRefs(ctx, root, opts.refs)
	if err != nil {
		return err
	}
	var failed int
	for _, pkg := range pkgs {
		n, err := comparePackage(ctx, s, opts, root, pkg, base, cand, names, saveID)
		if err != nil {
			return err
		}
		failed += n
	}
	if failed > 0 {
		fmt.Fprintf(loud.Err, "flipbench: %d runs failed; their errors are in the receipt\n", failed)
		return silentExit(ExitError)
	}
	return nil
}

// compareRefs resolves the base and candidate of a comparison: BASE as given, or the
// merge base of HEAD with the default branch; CANDIDATE as given, or the working tree.
func compareRefs(ctx context.Context, root string, refs []string) (base, cand string, names compare.Names, err error) {
	cand = armbuild.WorktreeRef
	if len(refs) == 2 {
		cand = refs[1]
	}
	head := cand
	if cand == armbuild.WorktreeRef {
		head = "HEAD"
	}
	candCommit, err := armbuild.Commit(ctx, root, head)
	if err != nil {
		return "", "", names, err
	}
	if len(refs) >= 1 {
		if base, err = armbuild.Commit(ctx, root, refs[0]); err != nil {
			return "", "", names, err
		}
		names.Base = fmt.Sprintf("%s (%s)", refs[0], receipt.ShortHash(base))
	} else {
		branch, err := armbuild.DefaultBranch(ctx, root)
		if err != nil {
			return "", "", names, err
		}
		if base, err = armbuild.MergeBase(ctx, root, branch, candCommit); err != nil {
			return "", "", names, err
		}
		names.Base = fmt.Sprintf("%s (merge base %s)", branch, receipt.ShortHash(base))
	}
	switch {
	case cand != armbuild.WorktreeRef:
		names.Cand = fmt.Sprintf("%s (%s)", cand, receipt.ShortHash(candCommit))
	default:
		dirty, err := armbuild.Dirty(ctx, root)
		if err != nil {
			return "", "", names, err
		}
		names.Cand = fmt.Sprintf("the working tree (HEAD %s, clean)", receipt.ShortHash(candCommit))
		if dirty {
			names.Cand = fmt.Sprintf("the working tree (HEAD %s with uncommitted changes)", receipt.ShortHash(candCommit))
		}
	}
	return base, cand, names, nil
}

// comparePackage runs the comparison of one package and prints its table and receipt. It
// returns the number of failed runs.
func comparePackage(ctx context.Context, s Streams, opts *compareOptions, root, pkg, base, cand string, names compare.Names, saveID int) (int, error) {
	co := compare.Options{ID: saveID, Package: pkg, Base: base, Candidate: cand, Benchtime: opts.benchtime,
		Title: "compare " + pkg + ": " + names.Cand + " against " + names.Base, Date: time.Now().UTC().Format(time.DateOnly)}
	role := spec.RoleGuard
	if saveID > 0 {
		role = spec.RolePrimary
		if opts.title != "" {
			co.Title = opts.title
		}
	}
	e := compare.Experiment(co)
	ov := compare.Overrides(e, opts.overrides)
	job := pipeline.Job{Spec: e, Root: root, Label: compare.Label, Results: resultsDir(root, opts.results), Command: opts.args,
		Pending: compare.Pending, ProfileLanes: opts.profile.v, ProfileSamples: opts.profile.samples.n,
		SkipIdentical: !opts.measureIdentical, StopUndecidable: true}
	job.Select = func(ctx context.Context, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
		exp, res, notes, err := compare.Select(ctx, e, arms, opts.bench, role, ov)
		for _, n := range notes {
			fmt.Fprintf(s.Err, "flipbench: note: %s\n", n)
		}
		if err != nil {
			return nil, spec.Resolved{}, err
		}
		if opts.roles.Set() {
			if exp, res, err = assignRoles(exp, opts.roles, ov); err != nil {
				return nil, spec.Resolved{}, err
			}
		}
		fmt.Fprintf(s.Err, "flipbench: %s in %s: %s\n", report.Count(len(res.Lanes), "benchmark", "benchmarks"), pkg, laneNames(res.Lanes))
		if saveID > 0 {
			if err := pageFree(root, saveID); err != nil {
				return nil, spec.Resolved{}, err
			}
			in := compare.PageInput{Command: shquote.Join(opts.args), Names: names, Bench: opts.bench}
			if in.CandRef, in.CandPatch, err = savedCandidate(ctx, root, exp, arms); err != nil {
				return nil, spec.Resolved{}, err
			}
			page, err := savePage(root, exp, res, in)
			if err != nil {
				return nil, spec.Resolved{}, err
			}
			fmt.Fprintf(s.Err, "flipbench: wrote %s; when the run is done, flipbench finalize %d fills in its results\n", relPath(page), saveID)
		}
		return exp, res, nil
	}
	if saveID > 0 {
		job.Page = ledger.ExperimentsDir + "/" + pageName(saveID, co.Title)
	}
	out, err := runPipeline(ctx, s, job, "", opts.wait)
	if err != nil {
		return 0, err
	}
	if out.Identical {
		fmt.Fprintf(s.Out, "base and candidate binaries are identical (sha256 %s, same arguments and environment): nothing can have changed, so nothing was measured (--measure-identical measures them anyway)\n",
			receipt.ShortHash(out.Arms[0].SHA256))
		return 0, nil
	}
	d, err := loaded.Load(out.Dir)
	if err != nil {
		return 0, err
	}
	if err := writeCompareResult(ctx, s, opts, root, d, names, out.Page); err != nil {
		return 0, err
	}
	return out.Outcome.Failed, nil
}

// laneNames lists the lanes of a run: "Get, Put/size=10".
func laneNames(lanes []spec.Lane) string {
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// pageName is the file name of page id: NNN-slug.md.
func pageName(id int, title string) string { return fmt.Sprintf("%03d-%s.md", id, ledger.Slug(title)) }

// savePage writes the page of a comparison saved with --save into root/experiments. A
// number another page has is refused, as flipbench new refuses it.
func savePage(root string, e *spec.Experiment, res spec.Resolved, in compare.PageInput) (string, error) {
	if err := pageFree(root, e.ID); err != nil {
		return "", err
	}
	dir := filepath.Join(root, ledger.ExperimentsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, pageName(e.ID, e.Title))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(compare.Page(e, res, in)); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// pageFree refuses an experiment number another page of the ledger at root has.
func pageFree(root string, id int) error {
	pages, err := ledger.Pages(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, p := range pages {
		if n, _ := ledger.PageID(p); n == id {
			return fmt.Errorf("--save %d: experiment %d is taken by %s", id, id, relPath(p))
		}
	}
	return nil
}

// terminalWidth is the width tables fit: $COLUMNS when it is a number, else
// texttable.DefaultWidth.
func terminalWidth(s Streams) int {
	if n, err := strconv.Atoi(s.getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return texttable.DefaultWidth
}
