package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

type gateOptions struct {
	base, candidate string
	specPath        string
	pkg             string
	bench           string
	json            bool
	results         string
	threshold       float64
	overrides       spec.Overrides
	args            []string
	wait            waitFlag
	recalibrate     bool
	format          string
	// measureIdentical measures base and candidate even when their binaries are identical.
	measureIdentical bool
	// strict refuses to measure when a lane's threshold is out of reach within the budget.
	strict bool
	// cont is the receipt folder of an earlier gate run whose pairs this one continues.
	cont string
}

func newGateCmd(s Streams) *cobra.Command {
	opts := &gateOptions{}
	var pf protocolFlags
	cmd := &cobra.Command{
		Use:   "gate --base REF",
		Short: "CI gate: fail only on a regression that reproduces across order-flipped pass pairs",
		Long: `gate builds the merge base of --base and the candidate, runs the gate spec's guard
lanes in rounds of order-flipped pass pairs until every lane passes or fails, and decides
within the budget (10 minutes unless the gate spec or --budget says otherwise): after round
1 the rule's last look, where every lane is passed or failed, moves to the rounds the budget
buys. Identical base and candidate binaries pass at once, measuring nothing.

  exit 0  no reproduced regression
  exit 3  a regression beyond the threshold reproduced in every collection (lanes named)
  exit 4  not decided: the budget was spent in round 1, before the rule could decide (it
          says what budget would): rerun, do not fail; --continue RECEIPT adds the rerun's
          pairs to these, judged by confidence sequences
  exit 1  error: a build failure (with the compiler output), or failed runs (a lane that
          crashes, hangs or prints bad output: the build is broken; lanes and arms named,
          after the receipt is written); exit 2 usage

Once the lanes' noise is known (the host calibration, else round 1) the gate notes each
lane whose threshold is out of reach of the rounds the budget buys, with the threshold or
budget that would reach it; --strict refuses to run on instead (exit 2).

The lanes come from experiments/gate.yaml, or --spec FILE (a gate.yaml, or an experiment
page whose guard lanes are used), or --package ./pkg: that package's benchmarks, built
and timed as flipbench compare does (its benchtime and 6 samples per process), with no
gate spec. A gotest gate spec may leave its lanes out: the gate then gates on every
benchmark of its package, listed from the built arms; --bench REGEX selects some as go
test -bench does, and --lanes REGEX filters the lanes either way. A
markdown summary goes to stdout and, when set, to $GITHUB_STEP_SUMMARY; on a terminal (or
with --format text) stdout gets the same as a table that wraps to the terminal's width, as
flipbench compare's does; --json prints the decision as JSON instead.`,
		Example: `  flipbench gate --base origin/main
  flipbench gate --base main --candidate WORKTREE --spec experiments/275-admission-priority.md
  flipbench gate --base origin/main --package ./btree --bench 'Insert|Get'`,
		Args: func(cmd *cobra.Command, args []string) error {
			args, err := takeWaitArg(&opts.wait, s.argv, args)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usageError("gate: takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.base == "" {
				return usageError("gate: --base REF is required")
			}
			if opts.threshold < 0 || opts.threshold > spec.MaxDriftThreshold {
				return usageError("--threshold %g: must be between 0 and %d", opts.threshold, spec.MaxDriftThreshold)
			}
			if opts.pkg != "" && opts.specPath != "" {
				return usageError("gate: --package and --spec: give one (--package gates a package's benchmarks without a gate spec)")
			}
			if opts.pkg != "" && !compare.IsPackageArg(opts.pkg) {
				return usageError("--package %q: want a package path starting with ./", opts.pkg)
			}
			if opts.format != "" && opts.format != formatText && opts.format != formatMarkdown {
				return usageError("--format %q: want text or markdown", opts.format)
			}
			pf.apply(cmd.Flags(), &opts.overrides)
			opts.recalibrate = pf.recalibrate
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runGate(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.base, "base", "", "the branch the change goes into (its merge base with the candidate is measured)")
	f.StringVar(&opts.candidate, "candidate", "HEAD", "the change: a ref, or WORKTREE for the uncommitted tree")
	f.StringVar(&opts.specPath, "spec", "", "gate spec (default experiments/gate.yaml), or an experiment page")
	f.StringVar(&opts.pkg, "package", "", "gate on this package's benchmarks (./pkg) with flipbench compare's defaults, without a gate spec")
	f.StringVar(&opts.bench, "bench", "", "gate on the harness's benchmarks that this go test -bench expression selects, listed from the built arms (gotest; the default when the spec lists no lanes)")
	f.StringVar(&opts.overrides.Lanes, "lanes", "", "run only the lanes (or listed benchmarks) matching this regular expression")
	f.BoolVar(&opts.json, "json", false, "print the decision as JSON")
	f.StringVar(&opts.cont, "continue", "", "add this run's pairs to an earlier gate receipt of the same base and candidate binaries (a receipt folder), judged by confidence sequences, instead of starting over")
	f.BoolVar(&opts.strict, "strict", false, "refuse to run on (exit 2) when a lane's threshold is out of reach within the budget at its noise: before round 1 from the host calibration (flipbench calibrate), else at the first look that knows each lane's own noise (round 2)")
	f.BoolVar(&opts.measureIdentical, "measure-identical", false, "measure even when base and candidate binaries are identical (the gate passes them at once otherwise)")
	f.StringVar(&opts.format, "format", "", "stdout's summary: markdown (the default off a terminal) or text (the default on one: wrapped to its width)")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ beside experiments/)")
	f.Float64Var(&opts.threshold, "threshold", 0, "smallest slowdown in percent that fails the build (default: the spec's, or 5)")
	f.IntVar(&pf.samples, "samples", 0, "samples per run")
	f.IntVar(&pf.passes, "passes", 0, "passes per collection (even)")
	f.IntVar(&pf.collections, "collections", 0, "collections")
	f.IntVar(&pf.maxPairs, "max-pairs", 0, "the most rounds of pass pairs (the gate runs rounds until every lane passes or fails)")
	f.DurationVar(&pf.budget, "budget", 0, "the measured wall time after which no round starts (default: the gate spec's, or 10m)")
	placementFlags(f, &pf)
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

func runGate(ctx context.Context, s Streams, opts *gateOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, gs, overrides, err := gateSpec(ctx, opts)
	if err != nil {
		return err
	}
	req := pipeline.GateRequest{Gate: gs, Root: root, Base: opts.base, Candidate: opts.candidate, Bench: opts.bench,
		Overrides: overrides, ThresholdPct: opts.threshold, Continue: opts.cont, Strict: opts.strict,
		MeasureIdentical: opts.measureIdentical, Results: resultsDir(root, opts.results), Command: opts.args}
	m := startMeasuring(s, opts.args, opts.wait)
	m.opts.Recalibrate = opts.recalibrate
	out, err := pipeline.Gate(ctx, req, m.opts)
	var res *pipeline.Result
	if out != nil {
		res = out.Result
	}
	if err := m.done(res, err); err != nil {
		return err
	}
	if out.Identical {
		return gateIdentical(s, opts, out.BaseCommit, out.Arms)
	}
	return printGate(s, opts, out)
}

// loadGateSpec reads the gate spec: path, or experiments/gate.yaml under root. A page
// (.md) gives its guard lanes.
func loadGateSpec(root, path string) (*spec.Gate, error) {
	if path == "" {
		path = relPath(filepath.Join(root, ledger.ExperimentsDir, "gate.yaml"))
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no gate spec: %s does not exist; write one or pass --spec FILE", path)
		}
	}
	if strings.HasSuffix(path, ".md") {
		exp, err := spec.ParseFile(path)
		if err != nil {
			return nil, err
		}
		return spec.GateFromPage(exp)
	}
	return spec.ParseGateFile(path)
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
