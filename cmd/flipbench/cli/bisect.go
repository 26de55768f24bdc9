package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/bisect"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

type bisectOptions struct {
	good, bad        string
	packages         []string
	bench, benchtime string
	lane, page       string
	results, resume  string
	faster           bool
	overrides        spec.Overrides
	wait             waitFlag
	recalibrate      bool
	json             bool
	args             []string
}

func newBisectCmd(s Streams) *cobra.Command {
	opts := &bisectOptions{}
	var pf protocolFlags
	cmd := &cobra.Command{
		Use:   "bisect GOOD BAD [PACKAGE] --bench REGEX | bisect GOOD BAD --page NNN --lane LANE",
		Short: "Find the first commit between GOOD and BAD that made a benchmark slower",
		Long: `bisect measures BAD against GOOD as flipbench compare does (arms built from git and cached
by tree, order-flipped pass pairs until decided, a receipt), and refuses with the numbers
unless BAD is reproduced slower (--faster: faster). It then bisects the first-parent
history GOOD..BAD: each midpoint is measured against GOOD until its interval lies wholly
beyond or short of the halfway mark (half of GOOD->BAD on the log scale), which puts it on
BAD's or GOOD's side; a commit that does not build is skipped. Last, the first slower
commit is measured against its parent, for the step's effect with its interval. A
midpoint measured between GOOD and BAD, or a step smaller than GOOD->BAD, is reported as
two or more step changes. The benchmark functions come from BAD in every step.

--page NNN --lane LANE bisects one lane of an experiment page instead: the page's harness
(its lanes from its harness.ref, as flipbench ab builds them) and protocol, run
sequentially, with its arms replaced by GOOD, BAD and the commits between them.

Every step writes a receipt (results/ at the repository root, or --results), and the
bisection's log goes to results/<stamp>-bisect/bisect.json after every step. A step that
cannot be decided within its budget stops the search (exit 4) saying how many pairs it
needs: run again with more (--max-pairs, --budget) and --resume DIR, which reuses the
decided steps. --json prints that log on stdout instead of the text (docs/bisect.md). See
docs/bisect.md.

Exit status: 0 when the commit is named; 1 on an error or a refused baseline; 2 on a
usage error; 4 when a step is undecided.`,
		Example: `  flipbench bisect v1.2.0 v1.3.0 ./btree --bench 'Insert$'
  flipbench bisect main~20 main --bench Parse --benchtime 20ms --max-pairs 6
  flipbench bisect v1 v2 ./btree --bench Get --faster      # the first commit that made Get faster
  flipbench bisect v1 v2 --bench Get --max-pairs 12 --resume results/2026-12-02T20-00-00Z-bisect`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeWaitArg(&opts.wait, s.argv, args)
			if err != nil {
				return err
			}
			if len(args) < 2 {
				return usageError("bisect: want GOOD and BAD (two commits), got %d arguments", len(args))
			}
			opts.good, opts.bad, opts.packages = args[0], args[1], args[2:]
			for _, a := range opts.packages {
				if !compare.IsPackageArg(a) {
					return usageError("bisect: %q: want GOOD BAD and then packages (./pkg); a package path starts with ./", a)
				}
			}
			if opts.benchtime != "" && !lanekind.ValidBenchtime(opts.benchtime) {
				return usageError("--benchtime %q: want a duration like 100ms or a count like 1000x", opts.benchtime)
			}
			if _, err := compare.Matcher(opts.bench); err != nil {
				return usageError("%v", err)
			}
			if opts.page != "" && (opts.lane == "" || len(opts.packages) > 0 || opts.bench != "" || opts.benchtime != "") {
				return usageError("--page: give the page's lane with --lane, and no PACKAGE, --bench or --benchtime (the page's harness says them)")
			}
			pf.apply(cmd.Flags(), &opts.overrides)
			opts.recalibrate = pf.recalibrate
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runBisect(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.bench, "bench", "", "the benchmarks to measure, as go test -bench selects them; the bisection follows the one that changed most")
	f.StringVar(&opts.lane, "lane", "", "follow this lane (a benchmark name without Benchmark, as the baseline lists it) instead of the one that changed most")
	f.StringVar(&opts.page, "page", "", "bisect a lane (--lane) of this experiment page (a number or a path) with the page's harness and protocol")
	f.StringVar(&opts.benchtime, "benchtime", "", "each sample's -test.benchtime (default "+compare.DefaultBenchtime+")")
	f.BoolVar(&opts.faster, "faster", false, "hunt the first faster commit (an improvement) instead of the first slower one")
	f.IntVar(&pf.samples, "samples", 0, "samples per process (default 6)")
	f.IntVar(&pf.maxPairs, "max-pairs", 0, "the most rounds of pass pairs per step (default 20)")
	placementFlags(f, &pf)
	f.DurationVar(&pf.budget, "budget", 0, "each step's measured wall time after which no round starts (default 10m)")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ at the repository root)")
	f.BoolVar(&opts.json, "json", false, "print the bisection's log (bisect.json: its steps and answer) on stdout instead of the text")
	f.StringVar(&opts.resume, "resume", "", "go on with the bisection logged in DIR (results/<stamp>-bisect), reusing its decided steps")
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

func runBisect(ctx context.Context, s Streams, opts *bisectOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := compare.Experiment(compare.Options{}).Resolve(opts.overrides); err != nil {
		return flagProblem(err)
	}
	m, log, err := bisectMeasurer(ctx, s, opts)
	if err != nil {
		return err
	}
	r, err := bisect.ResolveRange(ctx, m.Root, opts.good, opts.bad)
	if err != nil {
		return err
	}
	dir, known, err := bisectLogDir(s.Clock, m.Results, opts.resume, log)
	if err != nil {
		return err
	}
	var measurer bisect.Measurer = &bisect.PageMeasurer{Steps: m, Spec: log.spec, Lane: opts.lane}
	if log.spec == nil {
		measurer = &bisect.PipelineMeasurer{Steps: m, Package: log.Package, HarnessRef: r.Bad.Hash, Bench: opts.bench, Benchtime: opts.benchtime}
	}
	req := bisect.Request{Range: r, Direction: bisect.Slower, Lane: opts.lane, Known: known,
		Save: func(o *bisect.Outcome) error {
			log.Outcome = o
			return bisect.WriteLog(dir, log.Log)
		}}
	if opts.faster {
		req.Direction = bisect.Faster
	}
	fmt.Fprintf(s.Err, "flipbench: bisect: %d first-parent commits from %s to %s; log in %s\n", len(r.Commits), r.Good.Short(), r.Bad.Short(), relPath(dir))
	out, err := bisect.Run(ctx, measurer, req)
	if err != nil {
		return fmt.Errorf("%w (the decided steps are in %s: --resume %s goes on from them)", err, relPath(dir), relPath(dir))
	}
	if err := writeBisect(s, opts, log, out, dir); err != nil {
		return err
	}
	switch {
	case out.Status == bisect.StatusRefused:
		return silentExit(ExitError)
	case out.Status == bisect.StatusUndecided:
		return silentExit(ExitInconclusive)
	}
	return nil
}

// bisectLog is the log of a bisection and, for the --page form, the page.
type bisectLog struct {
	bisect.Log
	spec *spec.Experiment
}

// bisectMeasurer returns what every step needs (the repository or ledger root, the
// receipts folder, the pipeline with this process's progress and lock) and the
// bisection's log header: PACKAGE's, or the page's.
func bisectMeasurer(ctx context.Context, s Streams, opts *bisectOptions) (bisect.Steps, bisectLog, error) {
	log := bisectLog{Log: bisect.Log{Good: opts.good, Bad: opts.bad, Bench: opts.bench, Benchtime: opts.benchtime, Command: opts.args}}
	var root string
	var err error
	if opts.page != "" {
		var page string
		if log.spec, page, root, err = findExperiment(opts.page); err != nil {
			return bisect.Steps{}, log, err
		}
		if !slices.ContainsFunc(log.spec.Lanes, func(l spec.Lane) bool { return l.Name == opts.lane }) {
			return bisect.Steps{}, log, usageError("--lane %s: not a lane of %s (it has %s)", opts.lane, relPath(page), laneNames(log.spec.Lanes))
		}
		log.Package = relPath(page) + " lane " + opts.lane
	} else {
		if root, err = armbuild.TopLevel(ctx, "."); err != nil {
			return bisect.Steps{}, log, fmt.Errorf("bisect needs a git repository: %w", err)
		}
		if log.Package, err = onePackage(ctx, root, opts.packages, "bisect: PACKAGE"); err != nil {
			return bisect.Steps{}, log, err
		}
	}
	return bisect.Steps{Root: root, Results: resultsDir(root, opts.results), Overrides: opts.overrides, Command: opts.args, Clock: s.Clock,
		Run: func(ctx context.Context, job pipeline.Job) (*pipeline.Result, error) {
			m := startMeasuring(s, job.Command, opts.wait)
			m.opts.Recalibrate = opts.recalibrate
			m.events.setProtocol(job.Resolved.Protocol)
			res, err := pipeline.Run(ctx, job, m.opts)
			return res, m.done(res, err)
		},
		Note: func(n string) { fmt.Fprintf(s.Err, "flipbench: note: %s\n", n) }}, log, nil
}
