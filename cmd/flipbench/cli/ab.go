package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// labelPattern is what a receipt label may look like: it becomes part of a file name.
var labelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

type abOptions struct {
	page        string
	resume      string
	results     string
	label       string
	overrides   spec.Overrides
	args        []string // the command line, recorded in the plan
	wait        waitFlag
	recalibrate bool
	shard       string // --shard i/n
	cont        string // --continue DIR
	arms        string // --arms FILE
	profile     profileLanesFlag
	// measureIdentical measures arms whose binaries are identical (--measure-identical).
	measureIdentical bool
}

func newAbCmd(s Streams) *cobra.Command {
	opts := &abOptions{}
	var pf protocolFlags
	cmd := &cobra.Command{
		Use:   "ab PAGE|NNN",
		Short: "Build the arms, run the order-flipped A/B, drift-check it and write a receipt",
		Long: `ab runs an experiment: every lane of every arm in its own process, in order-flipped
pass pairs across collections. Every finished run is on disk at once; --resume DIR finishes
an interrupted run. After the measured runs, one more process per arm of every lane that
reproduced runs with CPU (and allocation) profiling, never part of the measured data, and
the receipt shows where the time went (--profile-lanes, --profile-samples; docs/profiles.md).
The receipt's path is the last line of stdout.`,
		Example: `  flipbench ab 275 --profile quick
  flipbench ab experiments/275-admission-priority.md --lanes 'Point|Bulk'
  flipbench ab --resume results/2026-08-19T07-40-00Z-exp275-quick`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeWaitArg(&opts.wait, s.argv, args)
			if err != nil {
				return err
			}
			switch {
			case opts.resume != "" && len(args) > 0:
				return usageError("ab: give a page or --resume DIR, not both")
			case opts.resume == "" && len(args) != 1:
				return usageError("ab: want one experiment page or number, got %d arguments", len(args))
			case len(args) == 1:
				opts.page = args[0]
			}
			if opts.label != "" && !labelPattern.MatchString(opts.label) {
				return usageError("--label %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", opts.label)
			}
			f := cmd.Flags()
			o := &opts.overrides
			pf.apply(f, o)
			opts.recalibrate = pf.recalibrate
			if opts.resume != "" && (o.Profile != "" || o.Lanes != "" || f.NFlag() > 1 && !(f.NFlag() == 2 && f.Changed("wait"))) {
				return usageError("--resume: the plan is fixed by the interrupted run; drop the other flags")
			}
			if opts.cont != "" && opts.shard == "" {
				return usageError("--continue: give the shard to run, --shard i/n")
			}
			if opts.shard != "" {
				if _, err := parseShard(opts.shard); err != nil {
					return err
				}
			}
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runAb(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.overrides.Profile, "profile", "", "protocol profile from the spec (e.g. quick); full means the spec's own protocol")
	f.IntVar(&pf.samples, "samples", 0, "samples per run (overrides spec and profile)")
	f.IntVar(&pf.warmup, "warmup", 0, "unrecorded warmup operations per run")
	f.IntVar(&pf.passes, "passes", 0, "passes per collection (even)")
	f.IntVar(&pf.collections, "collections", 0, "collections")
	f.Int64Var(&pf.seed, "seed", 0, "seed of the lane-order shuffle")
	f.DurationVar(&pf.timeout, "timeout", 0, "timeout of one run (one process)")
	placementFlags(f, &pf)
	f.StringVar(&opts.overrides.Lanes, "lanes", "", "run only lanes matching this regular expression")
	f.BoolVar(&opts.overrides.UntilDecided, "until-decided", false, "run pass pairs in rounds until every lane the decision needs is decided (docs/sequential.md)")
	f.IntVar(&pf.maxPairs, "max-pairs", 0, "sequential: the most rounds (pass pairs per collection); implies --until-decided")
	f.DurationVar(&pf.budget, "budget", 0, "sequential: the measured wall time after which no round starts; implies --until-decided")
	f.StringVar(&opts.resume, "resume", "", "finish the interrupted run in this receipt data folder")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ beside experiments/)")
	f.StringVar(&opts.label, "label", "", "receipt label (default: the profile name, or full)")
	f.StringVar(&opts.shard, "shard", "", "measure shard i of n: the pass pairs the seed deals to this machine (docs/shards.md); merge the shards with flipbench merge")
	f.StringVar(&opts.cont, "continue", "", "with --shard: run this shard's part of the next round of the sequential run merged in DIR")
	f.BoolVar(&opts.measureIdentical, "measure-identical", false, "measure even when the arms' binaries are identical (ab says so and measures nothing otherwise, unless the page names the same build for every arm, an A/A)")
	f.StringVar(&opts.arms, "arms", "", "refuse to measure unless each arm's binary has the sha256 this file (flipbench build --json) gives it")
	addProfileLanesFlag(cmd, &opts.profile)
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

// parseShard parses --shard i/n.
func parseShard(v string) (pipeline.ShardRequest, error) {
	m := regexp.MustCompile(`^(\d+)/(\d+)$`).FindStringSubmatch(v)
	if m == nil {
		return pipeline.ShardRequest{}, usageError("--shard %q: want i/n, e.g. 1/4", v)
	}
	i, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	if n < 1 || i < 1 || i > n {
		return pipeline.ShardRequest{}, usageError("--shard %s: want i/n with 1 <= i <= n", v)
	}
	return pipeline.ShardRequest{Index: i, Count: n}, nil
}

func runAb(ctx context.Context, s Streams, opts *abOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	req, err := abRequest(s, opts)
	if err != nil {
		return err
	}
	m := startMeasuring(s, req.Command, opts.wait)
	m.opts.Recalibrate = opts.recalibrate
	m.events.setProtocol(req.Resolved.Protocol)
	res, err := pipeline.Ab(ctx, req, m.opts)
	err = m.done(res, err)
	switch {
	case errors.Is(err, pipeline.ErrNothingToRun):
		fmt.Fprintf(s.Err, "flipbench: %v; no receipt written\n", err)
		return nil
	case err != nil && opts.resume != "" && !interrupted(err):
		return fmt.Errorf("--resume %s: %w", opts.resume, err)
	}
	return finishAb(s, res, err)
}

// abRequest is the request of ab's flags: a page resolved with the overrides, or the
// receipt to resume with the page its plan was made from.
func abRequest(s Streams, opts *abOptions) (pipeline.AbRequest, error) {
	if opts.resume != "" {
		req, err := resumeRequest(s, opts.resume)
		if err != nil {
			return req, fmt.Errorf("--resume %s: %w", opts.resume, err)
		}
		return req, nil
	}
	exp, page, root, err := findExperiment(opts.page)
	if err != nil {
		return pipeline.AbRequest{}, err
	}
	res, err := exp.Resolve(opts.overrides)
	if err != nil {
		return pipeline.AbRequest{}, flagProblem(err)
	}
	label := opts.label
	if label == "" {
		label = opts.overrides.Profile
	}
	rel, _ := filepath.Rel(root, page)
	req := pipeline.AbRequest{Spec: exp, Root: root, Page: filepath.ToSlash(rel), Resolved: res, Label: label,
		Results: resultsDir(root, opts.results), Command: opts.args, ArmsFile: opts.arms, ProfileLanes: opts.profile.v, ProfileSamples: opts.profile.samples.n,
		MeasureIdentical: opts.measureIdentical}
	if opts.shard != "" {
		sh, err := parseShard(opts.shard)
		if err != nil {
			return req, err
		}
		sh.Continue = opts.cont
		req.Shard = &sh
	}
	return req, nil
}

// finishAb prints the outcome of ab's measurement: the receipt's path as the last line of
// stdout, and exit 1 after the receipt is written when any run failed.
func finishAb(s Streams, res *pipeline.Result, err error) error {
	if err != nil {
		return err
	}
	if res.Identical {
		fmt.Fprintln(s.Out, identicalArms(res.Arms))
		return nil
	}
	if sh := res.Shard; sh != nil {
		var pairs []string
		for _, p := range sh.Pairs {
			pairs = append(pairs, p.String())
		}
		fmt.Fprintf(s.Err, "flipbench: %s: %s (%s) of lanes %s; merge it with the other shards' receipts: flipbench merge DIR...\n",
			sh.Name(), human.Count(len(sh.Pairs), "pass pair", "pass pairs"), strings.Join(pairs, ", "), strings.Join(sh.Lanes, ","))
	}
	summarize(s, res.Receipt)
	fmt.Fprintln(s.Out, relPath(res.Page))
	if res.Outcome.Failed > 0 {
		fmt.Fprintf(s.Err, "flipbench: %d runs failed; their errors are in the receipt\n", res.Outcome.Failed)
		return silentExit(ExitError)
	}
	return nil
}

// summarize says on stderr what a finished receipt found: one line per candidate and
// primary or guard lane with its pooled verdict and effect, then the benchmark warnings.
func summarize(s Streams, d *loaded.Receipt) {
	if lines := report.VerdictLines(d); len(lines) > 0 {
		fmt.Fprintln(s.Err, "flipbench: verdicts, pooled over collections (the receipt has the reasons):")
		for _, l := range lines {
			fmt.Fprintf(s.Err, "flipbench:   %s\n", l)
		}
	}
	for _, w := range report.BenchtimeWarnings(d) {
		fmt.Fprintf(s.Err, "flipbench: warning: %s\n", w)
	}
}
