package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/internal/shquote"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

type compareOptions struct {
	refs, packages   []string
	bench, benchtime string
	results, save    string
	title            string
	overrides        spec.Overrides
	args             []string
	wait             waitFlag
	recalibrate      bool
	roles            compare.Roles
	quiet            bool
	format           string
	json             bool
	failOn           string
	// doc collects the packages' comparisons of a --json run.
	doc              compareJSON
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
spread, the change with its 90% interval valid at every look (as a factor beyond 2x), the
verdict and its reason. For every lane that reproduced, one more process per arm then runs with
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
roles, --expect the primaries' direction; with any of them the rest are secondary, and
without them every lane is a guard. --format markdown writes
the table for a pull-request comment, --json (--format json) the comparison as one JSON
document on stdout (docs/json.md); --quiet prints only the table and the receipt.

Exit status: 0 when every run finished, whatever the verdicts; 3 with --fail-on slower
when a lane reproduced slower (after the table and the receipt); 1 on an error, or when
runs failed (after the table and the receipt); 2 on a usage error.`,
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
			opts.recalibrate = pf.recalibrate
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
	placementFlags(f, &pf)
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
	t, err := compareTargets(ctx, opts)
	if err != nil {
		return err
	}
	opts.doc = compareJSON{SchemaVersion: compare.SchemaVersion, Base: t.names.Base, Candidate: t.names.Cand, Packages: []compare.Result{}}
	var failed int
	var slower []string
	for _, pkg := range t.pkgs {
		n, slow, err := comparePackage(ctx, s, opts, t, pkg)
		if err != nil {
			return err
		}
		failed += n
		slower = append(slower, slow...)
	}
	if opts.format == formatJSON {
		if err := opts.doc.write(loud.Out); err != nil {
			return err
		}
	}
	if failed > 0 {
		fmt.Fprintf(loud.Err, "flipbench: %d runs failed; their errors are in the receipt\n", failed)
		return silentExit(ExitError)
	}
	if opts.failOn == failOnSlower && len(slower) > 0 {
		fmt.Fprintf(loud.Err, "flipbench: compare failed (--fail-on slower): reproduced slower: %s\n", strings.Join(slower, ", "))
		return silentExit(ExitRegression)
	}
	return nil
}

// comparePackage runs the comparison of one package and prints its table and receipt. It
// returns the number of failed runs and the lanes that reproduced slower.
func comparePackage(ctx context.Context, s Streams, opts *compareOptions, t compareTarget, pkg string) (int, []string, error) {
	root, names, saveID := t.root, t.names, t.saveID
	req := pipeline.CompareRequest{Root: root, Package: pkg, Base: t.base, Candidate: t.cand, Names: names, Bench: opts.bench,
		Benchtime: opts.benchtime, Roles: opts.roles, Overrides: opts.overrides, ProfileLanes: opts.profile.v,
		ProfileSamples: opts.profile.samples.n, MeasureIdentical: opts.measureIdentical, Results: resultsDir(root, opts.results), Command: opts.args}
	if saveID > 0 {
		title := opts.title
		if title == "" {
			title = pipeline.CompareTitle(pkg, names)
		}
		if err := pageFree(root, saveID); err != nil {
			return 0, nil, err
		}
		req.Save = &pipeline.SavePage{ID: saveID, Title: opts.title, Path: ledger.ExperimentsDir + "/" + pageName(saveID, title), Command: shquote.Join(opts.args)}
	}
	m := startMeasuring(s, opts.args, opts.wait)
	m.opts.Recalibrate = opts.recalibrate
	out, err := pipeline.Compare(ctx, req, m.opts)
	if err := m.done(out, err); err != nil {
		return 0, nil, err
	}
	if out.Identical {
		if opts.format == formatJSON {
			fmt.Fprintln(s.Err, "flipbench: "+identicalArms(out.Arms))
			opts.doc.Packages = append(opts.doc.Packages, compare.Result{Package: pkg, Identical: true, Slower: []string{}, Lanes: []compare.LaneResult{}})
			return 0, nil, nil
		}
		fmt.Fprintln(s.Out, identicalArms(out.Arms))
		return 0, nil, nil
	}
	if err := writeCompareResult(ctx, s, opts, root, out.Receipt, names, out.Page); err != nil {
		return 0, nil, err
	}
	if opts.format == formatJSON {
		opts.doc.Packages = append(opts.doc.Packages, compare.JSON(out.Receipt, pkg, relPath(out.Page), out.Outcome.Failed))
	}
	return out.Outcome.Failed, compare.Slower(out.Receipt), nil
}

// identical says why arms whose binaries are identical (pipeline.Identical) were not
// measured; the gate passes with it.
func identical(arms []receipt.Arm) string {
	return fmt.Sprintf("base and candidate binaries are identical (sha256 %s, same arguments and environment): nothing can have changed, so nothing was measured",
		receipt.ShortHash(arms[0].SHA256))
}

// identicalArms is what ab and compare print instead of measuring identical arms.
func identicalArms(arms []receipt.Arm) string {
	return identical(arms) + " (--measure-identical measures them anyway)"
}

// laneNames lists the lanes of a run: "Get, Put/size=10".
func laneNames(lanes []spec.Lane) string {
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}
