package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/calibrate"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// target is what calibrate, plan and doctor work on: an experiment page, or a gate spec
// (experiment 0, its arms from HEAD).
type target struct {
	exp  *spec.Experiment
	root string
	page string // relative to root; "" for a gate spec
}

// findTarget resolves a page, an experiment number or a gate spec file (.yaml).
func findTarget(arg string) (target, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		root, err := ledger.FindRoot(".")
		if err != nil {
			return target{}, err
		}
		g, err := spec.ParseGateFile(arg)
		if err != nil {
			return target{}, err
		}
		return target{exp: g.Experiment("HEAD", "HEAD"), root: root}, nil
	}
	exp, page, root, err := findExperiment(arg)
	if err != nil {
		return target{}, err
	}
	rel, _ := filepath.Rel(root, page)
	return target{exp: exp, root: root, page: filepath.ToSlash(rel)}, nil
}

type calibrateOptions struct {
	target  string
	profile string
	pairs   int
	samples int
	results string
	cpus    string
	cpusSet bool
	wait    waitFlag
	args    []string
}

func newCalibrateCmd(s Streams) *cobra.Command {
	opts := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate PAGE|NNN|GATE.yaml",
		Short: "Measure each lane's noise on this host with an A/A run, for plan and doctor",
		Long: `calibrate builds the base arm of an experiment (or of the gate spec, at HEAD) and runs it
against itself (the same binary as a second arm, "aa") in order-flipped pass pairs, with the
spec's protocol or profile as a fixed protocol of --pairs pairs per collection. From the
receipt it records, per lane, the noise of one pass delta, its between-process and within-run
parts and the time of one run, in experiments/calibration/<host>.json, keyed by this host's
CPU model, cores, kernel and Go version. stdout gets a table of the lanes' noise and what the
protocol can resolve; the receipt's path is its last line.`,
		Example: `  flipbench calibrate 266 --profile quick
  flipbench calibrate experiments/gate.yaml --pairs 6`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeWaitArg(&opts.wait, s.argv, args)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usageError("calibrate: want one experiment page, number or gate spec, got %d arguments", len(args))
			}
			if opts.pairs < 0 || opts.pairs > spec.MaxPasses/2 || opts.pairs == 1 {
				return usageError("--pairs %d: want 2 to %d (one pair gives no noise estimate)", opts.pairs, spec.MaxPasses/2)
			}
			opts.target = args[0]
			opts.cpusSet = cmd.Flags().Changed("cpus")
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runCalibrate(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.profile, "profile", "", "protocol profile from the spec (samples, warmup, collections)")
	f.IntVar(&opts.pairs, "pairs", 0, "pass pairs per collection (default: the protocol's)")
	f.IntVar(&opts.samples, "samples", 0, "samples per run (default: the protocol's)")
	f.StringVar(&opts.results, "results", "", "receipts folder (default: results/ beside experiments/)")
	cpusFlag(f, &opts.cpus)
	addWaitFlag(cmd, &opts.wait)
	return cmd
}

// resolveTarget finds plan's and doctor's target (a page, number or gate spec) and
// resolves it at the protocol profile; a profile the spec lacks is a usage error.
func resolveTarget(arg, profile string) (target, spec.Resolved, error) {
	t, err := findTarget(arg)
	if err != nil {
		return target{}, spec.Resolved{}, err
	}
	res, err := t.exp.Resolve(spec.Overrides{Profile: profile})
	if err != nil {
		return target{}, spec.Resolved{}, flagProblem(err)
	}
	return t, res, nil
}

func runCalibrate(ctx context.Context, s Streams, opts *calibrateOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := findTarget(opts.target)
	if err != nil {
		return err
	}
	o := spec.Overrides{Profile: opts.profile}
	if opts.cpusSet {
		o.CPUs = &opts.cpus
	}
	res, err := pipeline.ResolveFixed(t.exp, o, opts.pairs, opts.samples)
	if err != nil {
		return flagProblem(err)
	}
	req := pipeline.CalibrateRequest{Spec: t.exp, Root: t.root, Page: t.page, Resolved: res, Results: resultsDir(t.root, opts.results), Command: opts.args}
	m := startMeasuring(s, opts.args, opts.wait)
	m.events.setProtocol(res.Protocol)
	out, err := pipeline.Calibrate(ctx, req, m.opts)
	if err := m.done(out.Result, err); err != nil {
		return err
	}
	if err := noiseTable(s.Out, t, res, out.Lanes); err != nil {
		return err
	}
	if out.Reproduced > 0 {
		fmt.Fprintf(s.Err, "flipbench: warning: %d lane verdicts of this A/A reproduced an effect between two identical arms: an order effect, or a host that changed during the run; look at the receipt\n", out.Reproduced)
	}
	fmt.Fprintf(s.Err, "flipbench: calibration of %s written to %s\n", out.Host, relPath(out.Path))
	fmt.Fprintln(s.Out, relPath(out.Page))
	return nil
}

// noiseTable writes the calibrated lanes and what the run's protocol resolves with them.
func noiseTable(w io.Writer, t target, res spec.Resolved, lanes []calibrate.Lane) error {
	p := res.Protocol
	proto, _ := calibrate.ProtocolOf(res, len(t.exp.Arms))
	var rows [][]string
	for _, l := range lanes {
		sl, _ := t.exp.Lane(l.Lane)
		floor := calibrate.FloorOf(sl, res)
		lp := calibrate.Plan(l, floor, proto, res.Drift)
		rows = append(rows, []string{l.Lane, fmt.Sprintf("%.1f%%", l.NoisePct), fmt.Sprintf("%.1f%% / %.1f%%", l.BetweenPct, l.WithinCVPct),
			l.RunTime.Round(time.Millisecond).String(), fmt.Sprintf("%g%%", floor), fmt.Sprintf("%.1f%%", lp.MDEPct), pairsText(lp.PairsNeeded)})
	}
	fmt.Fprintf(w, "Noise per lane at %d samples per run, %d pass pairs per collection, %d collections:\n\n", p.Samples, p.Passes/2, p.Collections)
	return mdtable.Write(w, []string{"lane", "noise", "between / within", "run", "floor", "MDE here", "pairs for the floor"}, rows)
}

// pairsText formats a pairs-needed count.
func pairsText(n int) string {
	if n >= 100_000 {
		return "out of reach"
	}
	return fmt.Sprint(n)
}
