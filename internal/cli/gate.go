package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/compare"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/gate"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/pipeline"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

type gateOptions struct {
	base, candidate string
	specPath        string
	bench           string
	json            bool
	results         string
	threshold       float64
	overrides       spec.Overrides
	args            []string
	wait            waitFlag
	format          string
	// measureIdentical measures base and candidate even when their binaries are identical.
	measureIdentical bool
	// strict refuses to measure when a lane's threshold is out of reach within the budget.
	strict bool
	// cont is the receipt folder of an earlier gate run whose pairs this one continues.
	cont string
}

// worktreeRef is the candidate ref that means "the uncommitted working tree".
const worktreeRef = "WORKTREE"

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
page whose guard lanes are used). A gotest gate spec may leave its lanes out: the gate
then gates on every benchmark of its package, listed from the built arms; --bench REGEX
selects some as go test -bench does, and --lanes REGEX filters the lanes either way. A
markdown summary goes to stdout and, when set, to $GITHUB_STEP_SUMMARY; on a terminal (or
with --format text) stdout gets the same as a table that wraps to the terminal's width, as
flipbench compare's does; --json prints the decision as JSON instead.`,
		Example: `  flipbench gate --base origin/main
  flipbench gate --base main --candidate WORKTREE --spec experiments/275-admission-priority.md`,
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
			if opts.format != "" && opts.format != formatText && opts.format != formatMarkdown {
				return usageError("--format %q: want text or markdown", opts.format)
			}
			pf.apply(cmd.Flags(), &opts.overrides)
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runGate(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.base, "base", "", "the branch the change goes into (its merge base with the candidate is measured)")
	f.StringVar(&opts.candidate, "candidate", "HEAD", "the change: a ref, or WORKTREE for the uncommitted tree")
	f.StringVar(&opts.specPath, "spec", "", "gate spec (default experiments/gate.yaml), or an experiment page")
	f.StringVar(&opts.bench, "bench", "", "gate on the harness's benchmarks that this go test -bench expression selects, listed from the built arms (gotest; the default when the spec lists no lanes)")
	f.StringVar(&opts.overrides.Lanes, "lanes", "", "run only the lanes (or listed benchmarks) matching this regular expression")
	f.BoolVar(&opts.json, "json", false, "print the decision as JSON")
	f.StringVar(&opts.cont, "continue", "", "add this run's pairs to an earlier gate receipt of the same base and candidate binaries (a receipt folder), judged by confidence sequences, instead of starting over")
	f.BoolVar(&opts.strict, "strict", false, "refuse to run on (exit 2) when a lane's threshold is out of reach within the budget at its noise: before round 1 from the host calibration (flipbench calibrate), else after round 1")
	f.BoolVar(&opts.measureIdentical, "measure-identical", false, "measure even when base and candidate binaries are identical (the gate passes them at once otherwise)")
	f.StringVar(&opts.format, "format", "", "stdout's summary: markdown (the default off a terminal) or text (the default on one: wrapped to its width)")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ beside experiments/)")
	f.Float64Var(&opts.threshold, "threshold", 0, "smallest slowdown in percent that fails the build (default: the spec's, or 5)")
	f.IntVar(&pf.samples, "samples", 0, "samples per run")
	f.IntVar(&pf.passes, "passes", 0, "passes per collection (even)")
	f.IntVar(&pf.collections, "collections", 0, "collections")
	f.IntVar(&pf.maxPairs, "max-pairs", 0, "the most rounds of pass pairs (the gate runs rounds until every lane passes or fails)")
	f.DurationVar(&pf.budget, "budget", 0, "the measured wall time after which no round starts (default: the gate spec's, or 10m)")
	cpusFlag(f, &pf.cpus)
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

func runGate(ctx context.Context, s Streams, opts *gateOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := ledger.FindRoot(".")
	if err != nil {
		return err
	}
	gs, err := loadGateSpec(root, opts.specPath)
	if err != nil {
		return err
	}
	threshold := gs.Threshold()
	if opts.threshold > 0 {
		threshold = opts.threshold
	}
	// Without lanes in the spec, or with --bench, the lanes are the harness's benchmarks,
	// listed once the arms are built; --lanes then filters those.
	discover := opts.bench != "" || len(gs.Lanes) == 0
	if kind, err := gs.Harness.LaneKind(); discover && (err != nil || kind.ListArgs("bin") == nil) {
		return usageError("--bench: the gate spec's %s harness cannot list its lanes; name them in the spec's lanes", gs.Harness.Kind)
	}
	pre := opts.overrides
	if discover {
		pre.Lanes = ""
	}
	// Flag values are checked before git is asked anything.
	res, err := gateExperiment(gs, "", opts).Resolve(pre)
	if err != nil {
		return flagProblem(err)
	}
	mergeRef := opts.candidate
	if mergeRef == worktreeRef {
		mergeRef = "HEAD"
	}
	base, err := armbuild.MergeBase(ctx, root, opts.base, mergeRef)
	if err != nil {
		return err
	}
	exp := gateExperiment(gs, base, opts)
	rule := gate.Rule{ThresholdPct: threshold, LanePct: gs.LaneThresholds()}
	var prior *pipeline.Prior
	if opts.cont != "" {
		if prior, err = pipeline.LoadPrior(opts.cont); err != nil {
			return usageError("--continue %s: %v", opts.cont, err)
		}
		rule.Anytime = &gate.Anytime{PriorRounds: prior.Rounds, TunedRounds: prior.Rounds + max(res.Protocol.Passes/2, 1)}
		fmt.Fprintf(s.Err, "flipbench: continuing %s from %s (%d rounds): its pairs and this run's are judged together by confidence sequences\n",
			report.Count(len(prior.Dirs), "receipt", "receipts"), relPath(opts.cont), prior.Rounds)
	}
	job := pipeline.Job{Spec: exp, Root: root, Resolved: res, Label: "gate", Results: resultsDir(root, opts.results), Command: opts.args,
		Pending:       func(rep driftcheck.Report) []string { return gate.Pending(rep, rule) },
		SkipIdentical: !opts.measureIdentical, Continue: prior, FitBudget: true}
	job.Reach = gateReach(s, opts.strict, threshold, gs.LaneThresholds(), prior)
	if discover {
		job.Select = func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
			e, res, notes, err := compare.Select(ctx, st, exp, arms, opts.bench, spec.RoleGuard, opts.overrides)
			for _, n := range notes {
				fmt.Fprintf(s.Err, "flipbench: note: %s\n", n)
			}
			if err == nil {
				fmt.Fprintf(s.Err, "flipbench: gating on %s: %s\n", report.Count(len(res.Lanes), "benchmark", "benchmarks"), laneNames(res.Lanes))
			}
			return e, res, err
		}
	}
	out, err := runPipeline(ctx, s, job, "", opts.wait)
	if err != nil {
		return err
	}
	if out.Identical {
		return gateIdentical(s, opts, base, out.Arms)
	}
	rep, runs, err := gateData(out.Dir, prior)
	if err != nil {
		return err
	}
	decision := gate.Evaluate(rep, runs, rule)
	m := struct{ md string }{out.Page}

	var summary bytes.Buffer
	if err := gate.Markdown(&summary, decision, receipt.ShortHash(base)+" (merge base of "+opts.base+")", opts.candidate, relPath(m.md), gateLevel(rep, prior != nil)); err != nil {
		return err
	}
	if path := s.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, summary.Bytes()); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	if opts.json {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			SchemaVersion int `json:"schema_version"`
			gate.Result
			Base      string `json:"base"`
			Candidate string `json:"candidate"`
			Receipt   string `json:"receipt"`
		}{gate.SchemaVersion, decision, base, opts.candidate, relPath(m.md)}); err != nil {
			return err
		}
	} else if gateFormat(s, opts) == formatText {
		if err := gate.Text(s.Out, decision, receipt.ShortHash(base)+" (merge base of "+opts.base+")", opts.candidate, relPath(m.md), gateLevel(rep, prior != nil), terminalWidth(s)); err != nil {
			return err
		}
	} else if _, err := s.Out.Write(summary.Bytes()); err != nil {
		return err
	}
	switch decision.Outcome {
	case gate.Broken:
		var failed []string
		for _, f := range decision.Failures {
			failed = append(failed, f.String())
		}
		fmt.Fprintf(s.Err, "flipbench: gate failed: runs failed, so the build is broken (a crash is a real failure, not noise; a rerun will not fix it): %s\n",
			strings.Join(failed, "; "))
		return silentExit(ExitError)
	case gate.Regression:
		var lanes []string
		for _, f := range decision.Findings {
			if f.Outcome == gate.Regression {
				lanes = append(lanes, f.Lane)
			}
		}
		fmt.Fprintf(s.Err, "flipbench: gate failed: reproduced regression in %s\n", strings.Join(lanes, ", "))
		return silentExit(ExitRegression)
	case gate.Rerun:
		why := "drift or too little data"
		if n := len(out.Looks); n > 0 && out.Looks[n-1].Stop == receipt.StopBudget && out.Looks[n-1].Round < 2 {
			why = fmt.Sprintf("the budget was spent after round 1 (%s), and the rule decides from round 2: raise --budget to at least %s or gate fewer lanes (--lanes, --bench)",
				out.Looks[n-1].Elapsed.Round(time.Second), (3 * out.Looks[n-1].Elapsed).Round(time.Second))
		}
		fmt.Fprintf(s.Err, "flipbench: gate inconclusive: rerun advised (%s); the build is not failed; a rerun can add its pairs to these: --continue %s\n", why, relPath(out.Dir))
		return silentExit(ExitInconclusive)
	}
	return nil
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

// gateData reads the analysis and the runs a gate decides from: the receipt's in dir,
// or, for a run that continues earlier receipts (prior), theirs and its own analysed
// together.
func gateData(dir string, prior *pipeline.Prior) (driftcheck.Report, []receipt.Record, error) {
	runs, err := receipt.ReadRecords(dir)
	if err != nil {
		return driftcheck.Report{}, nil, err
	}
	if prior != nil {
		plan, err := receipt.ReadPlan(dir)
		if err != nil {
			return driftcheck.Report{}, nil, err
		}
		return prior.Analyze(plan, runs)
	}
	var rep driftcheck.Report
	err = receipt.ReadJSON(filepath.Join(dir, receipt.AnalysisFile), &rep)
	return rep, runs, err
}

// maxReachNotes is how many lanes out of reach the gate names one line each; the rest
// are counted in one line.
const maxReachNotes = 5

// gateReach checks, with each forecast that knows the lanes' noise (pipeline.Job.Reach),
// that every lane's threshold is within reach of the rounds the budget buys, with those of
// the receipts a continued run continues (prior): a lane out of reach gets a note, or with
// strict the run stops with a usage error that says what would reach it.
func gateReach(s Streams, strict bool, threshold float64, lanePct map[string]float64, prior *pipeline.Prior) func(pipeline.Forecast) error {
	return func(f pipeline.Forecast) error {
		if prior != nil {
			f.Rounds += prior.Rounds // the earlier receipts' rounds count too
		}
		if f.PerRound > 0 && f.Rounds < 2 {
			msg := fmt.Sprintf("the %s budget buys %d round at about %s a round (%s), and the rule decides from round 2: unless the rounds run faster, the gate ends undecided (exit 4); raise --budget to at least %s or gate fewer lanes (--lanes, --bench)",
				f.Budget, f.Rounds, f.PerRound.Round(time.Second), f.From, (5 * f.PerRound / 2).Round(time.Second))
			if strict {
				return usageError("--strict: %s", msg)
			}
			fmt.Fprintf(s.Err, "flipbench: note: %s\n", msg)
			return nil
		}
		var out []string
		reachable := 0.0 // the smallest threshold every lane out of reach reaches
		for _, l := range f.Lanes {
			if l.NoisePct <= 0 {
				continue // known after round 1
			}
			thr := threshold
			if t := lanePct[l.Lane]; t > 0 {
				thr = t
			}
			if r := gate.LaneReach(l.Lane, l.NoisePct, l.NoiseFrom, thr, f.Rounds, max(f.Collections, 1), f.Drift); r.Out() {
				out = append(out, r.Advice(f.PerRound))
				reachable = max(reachable, r.ReachablePct)
			}
		}
		if len(out) == 0 {
			return nil
		}
		if strict {
			when := "before round 1"
			if f.After > 0 {
				when = fmt.Sprintf("after round %d (its runs are kept in the receipt folder)", f.After)
			}
			return usageError("--strict: the threshold of %s is out of reach within the budget, so the gate stopped %s: %s",
				report.Count(len(out), "lane", "lanes"), when, strings.Join(out, "; "))
		}
		for _, a := range out[:min(len(out), maxReachNotes)] {
			fmt.Fprintf(s.Err, "flipbench: note: threshold out of reach: %s; the gate still ends pass or fail at its last look, but may miss a regression at the threshold (--strict refuses to run)\n", a)
		}
		if n := len(out) - maxReachNotes; n > 0 {
			fmt.Fprintf(s.Err, "flipbench: note: threshold out of reach for %s (%d of %d in all): a threshold of %s%% is within reach of every lane at these rounds\n",
				report.Count(n, "more lane", "more lanes"), len(out), len(f.Lanes), human.Num(reachable))
		}
		return nil
	}
}

// gateExperiment is the experiment the gate runs: the gate spec's, with a fixed protocol
// when --passes asks for one and the spec has no stopping rule of its own.
func gateExperiment(gs *spec.Gate, base string, opts *gateOptions) *spec.Experiment {
	e := gs.Experiment(base, opts.candidate)
	if opts.overrides.Passes != nil && gs.Protocol.Sequential == nil && opts.overrides.MaxPairs == nil && opts.overrides.Budget == nil {
		e.Protocol.Sequential = nil
	}
	return e
}

// gateFormat is the format of the gate's summary on stdout: --format, else text on a
// terminal and markdown elsewhere (a CI log, a file for a pull-request comment).
func gateFormat(s Streams, opts *gateOptions) string {
	switch {
	case opts.format != "":
		return opts.format
	case s.OutIsTerminal:
		return formatText
	}
	return formatMarkdown
}

// gateLevel is the level of the pooled intervals ("95%"), stated once in the table: the
// look's, or for a continued run (continued) the confidence sequences' 1 - alpha.
func gateLevel(rep driftcheck.Report, continued bool) string {
	if continued {
		alpha := rep.Config.Alpha
		if !(alpha > 0) {
			alpha = driftcheck.DefaultConfig().Alpha
		}
		return human.Num(math.Round((1-alpha)*1000)/10) + "%"
	}
	for _, p := range rep.Pooled {
		if p.Confidence > 0 {
			return human.Num(math.Round(p.Confidence*1000)/10) + "%"
		}
	}
	return "95%"
}

// gateIdentical reports a gate whose base and candidate binaries are identical: it passes
// at once, with nothing measured (exit 0), in the formats the gate writes.
func gateIdentical(s Streams, opts *gateOptions, base string, arms []receipt.Arm) error {
	why := fmt.Sprintf("base and candidate binaries are identical (sha256 %s, same arguments and environment): nothing can have changed, so nothing was measured",
		receipt.ShortHash(arms[0].SHA256))
	md := fmt.Sprintf("## flipbench gate: pass: %s\n\nBase `%s (merge base of %s)`, candidate `%s`.\n", why, receipt.ShortHash(base), opts.base, opts.candidate)
	if path := s.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, []byte(md)); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	fmt.Fprintf(s.Err, "flipbench: %s\n", why)
	if opts.json {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			SchemaVersion int `json:"schema_version"`
			gate.Result
			Identical bool   `json:"identical"`
			Base      string `json:"base"`
			Candidate string `json:"candidate"`
		}{gate.SchemaVersion, gate.Result{Outcome: gate.Pass, Findings: []gate.Finding{}, Failures: []gate.Failure{}}, true, base, opts.candidate})
	}
	if gateFormat(s, opts) == formatText {
		_, err := fmt.Fprintf(s.Out, "flipbench gate: pass: %s\nBase %s (merge base of %s), candidate %s.\n", why, receipt.ShortHash(base), opts.base, opts.candidate)
		return err
	}
	_, err := fmt.Fprint(s.Out, md)
	return err
}
