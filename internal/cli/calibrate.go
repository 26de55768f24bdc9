package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/calibrate"
	"github.com/flipbench/flipbench/doctor"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/pipeline"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/receipt/loaded"
	"github.com/flipbench/flipbench/spec"
)

// aaArm is the name of the base arm's twin in a calibration run.
const aaArm = "aa"

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

// resolveFixed resolves the target's protocol with the overrides o as a fixed protocol of
// pairs pass pairs per collection (0: the spec's; a sequential spec's max-pairs), with
// samples overridden when set.
func resolveFixed(e *spec.Experiment, o spec.Overrides, pairs, samples int) (spec.Resolved, error) {
	if samples > 0 {
		o.Samples = &samples
	}
	res, err := e.Resolve(o)
	if err != nil {
		return res, err
	}
	if pairs == 0 {
		if s := res.Protocol.Sequential; s != nil {
			pairs = s.MaxPairs
		} else {
			pairs = res.Protocol.Passes / 2
		}
	}
	res.Protocol.Sequential = nil
	res.Protocol.Passes = 2 * pairs
	res.Drift.MinPairs, res.Drift.MaxPairs = 0, 0
	return res, nil
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
	res, err := resolveFixed(t.exp, o, opts.pairs, opts.samples)
	if err != nil {
		return flagProblem(err)
	}
	// The A/A experiment: the base arm, built once, and its twin (the same binary), every
	// lane, no incidence.
	aa := *t.exp
	aa.Arms = []spec.Arm{t.exp.Base()}
	aa.Incidence, aa.Shape = nil, nil
	job := pipeline.Job{Spec: &aa, Root: t.root, Page: t.page, Resolved: res, Label: "calibrate",
		Results: resultsDir(t.root, opts.results), Command: opts.args,
		Build: func(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error) {
			arms, err := armbuild.Build(ctx, e, o)
			if err != nil {
				return nil, err
			}
			twin := arms[0]
			twin.Name = aaArm
			return append(arms, twin), nil
		}}
	out, err := runPipeline(ctx, s, job, "", opts.wait)
	if err != nil {
		return err
	}
	d, err := loaded.Load(out.Dir)
	if err != nil {
		return err
	}
	if len(d.Env.Snapshots) == 0 {
		return fmt.Errorf("%s: no host snapshot in env.json to key the calibration by", out.Dir)
	}
	rel, _ := filepath.Rel(t.root, out.Page)
	lanes, err := calibrate.FromReceipt(d.Plan, d.Records, d.Analysis, filepath.ToSlash(rel), d.Env.Snapshots[0].Time)
	if err != nil {
		return fmt.Errorf("%s: %w", out.Dir, err)
	}
	host := calibrate.HostOf(d.Env.Snapshots[0])
	f, err := calibrate.Read(t.root, host)
	if errors.Is(err, os.ErrNotExist) {
		f, err = &calibrate.File{Host: host}, nil
	}
	if err != nil {
		return err
	}
	f.Merge(lanes)
	path, err := calibrate.Write(t.root, f)
	if err != nil {
		return err
	}
	if err := noiseTable(s.Out, t, res, lanes); err != nil {
		return err
	}
	reproduced := 0
	for _, l := range d.Analysis.Lanes {
		if l.Verdict == driftcheck.LaneReproducedFaster || l.Verdict == driftcheck.LaneReproducedSlower {
			reproduced++
		}
	}
	if reproduced > 0 {
		fmt.Fprintf(s.Err, "flipbench: warning: %d lane verdicts of this A/A reproduced an effect between two identical arms: an order effect, or a host that changed during the run; look at the receipt\n", reproduced)
	}
	fmt.Fprintf(s.Err, "flipbench: calibration of %s written to %s\n", host, relPath(path))
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

// hostNow snapshots this host for plan and doctor: its fingerprint, memory, disk, and the
// CPU other processes use over a short window.
func hostNow(dir string) doctor.Host {
	stop := harness.MeasureOthers()
	time.Sleep(500 * time.Millisecond)
	others := stop()
	return doctor.Host{Snapshot: harness.CaptureEnv("doctor", 0, 0, time.Now(), dir), OthersPct: others}
}

type planOptions struct {
	target  string
	profile string
	from    string
}

func newPlanCmd(s Streams) *cobra.Command {
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan PAGE|NNN|GATE.yaml",
		Short: "Say per lane how many pass pairs resolve its floor, and how long that takes",
		Long: `plan reads each lane's noise from this host's calibration (flipbench calibrate), or from a
pilot receipt (--from), and says per lane what the run's protocol (--profile) can resolve:
the MDE, the pass pairs per collection for an MDE at the floor, whether more samples per run
or more processes would help more, and the wall time of those pairs.`,
		Example: `  flipbench plan 266 --profile quick
  flipbench plan 275 --from results/2026-12-01T10-00-00Z-exp275-quick`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("plan: want one experiment page, number or gate spec, got %d arguments", len(args))
			}
			opts.target = args[0]
			return runPlan(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.profile, "profile", "", "protocol profile from the spec")
	cmd.Flags().StringVar(&opts.from, "from", "", "take the noise from this receipt (a pilot run) instead of the calibration")
	return cmd
}

func runPlan(s Streams, opts *planOptions) error {
	t, err := findTarget(opts.target)
	if err != nil {
		return err
	}
	res, err := t.exp.Resolve(spec.Overrides{Profile: opts.profile})
	if err != nil {
		return flagProblem(err)
	}
	var lanes []calibrate.Lane
	source := ""
	if opts.from != "" {
		d, err := loaded.Load(ledger.ReceiptDir(opts.from))
		if err != nil {
			return fmt.Errorf("--from %s: %w", opts.from, err)
		}
		if lanes, err = calibrate.FromReceipt(d.Plan, d.Records, d.Analysis, opts.from, time.Now()); err != nil {
			return fmt.Errorf("--from %s: %w", opts.from, err)
		}
		source = "the pilot receipt " + opts.from
	} else {
		host := calibrate.HostOf(hostNow(t.root).Snapshot)
		f, err := calibrate.Read(t.root, host)
		if err != nil {
			return fmt.Errorf("no calibration of this host (%s): %w; run flipbench calibrate %s, or give --from RECEIPT", host, err, opts.target)
		}
		for _, l := range res.Lanes {
			if cal, ok := f.Lane(t.exp.ID, l.Name); ok {
				lanes = append(lanes, cal)
				if change := cal.PlacementChange(res.Protocol.CPUList()); change != "" {
					fmt.Fprintf(s.Err, "flipbench: warning: %s: %s; run flipbench calibrate %s again\n", l.Name, change, opts.target)
				}
			}
		}
		source = relPath(calibrate.Path(t.root, host))
	}
	p := res.Protocol
	proto, _ := calibrate.ProtocolOf(res, len(t.exp.Arms))
	var rows [][]string
	var total time.Duration
	for _, l := range res.Lanes {
		if l.Role == spec.RoleSecondary {
			continue
		}
		i := indexLane(lanes, l.Name)
		if i < 0 {
			rows = append(rows, []string{l.Name, l.Role, "-", "-", "-", "-", "-", "not calibrated"})
			continue
		}
		lp := calibrate.Plan(lanes[i], calibrate.FloorOf(l, res), proto, res.Drift)
		total += lp.Time
		rows = append(rows, []string{l.Name, l.Role, fmt.Sprintf("%.1f%%", lp.NoisePct), fmt.Sprintf("%.1f%%", lp.MDEPct),
			pairsText(lp.PairsNeeded), pairsText(lp.PairsNeeded2x) + " / " + pairsText(lp.PairsNeeded4x), lp.Time.Round(time.Second).String(), lp.Advice})
	}
	fmt.Fprintf(s.Out, "Plan for experiment %d at %d samples per run, %d pass pairs per collection, %d collections (noise from %s):\n\n",
		t.exp.ID, p.Samples, proto.Pairs, p.Collections, source)
	if err := mdtable.Write(s.Out, []string{"lane", "role", "noise", "MDE here", "pairs for the floor", "with 2x / 4x samples", "time for them", "advice"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "\nAbout %s of runs for every lane to resolve its floor (the slowest lane's pairs, run for all lanes, take longer; a sequential run stops each lane when it is decided).\n",
		total.Round(time.Second))
	return nil
}

// indexLane returns the index of the calibration of lane name, or -1.
func indexLane(lanes []calibrate.Lane, name string) int {
	for i, l := range lanes {
		if l.Lane == name {
			return i
		}
	}
	return -1
}

type doctorOptions struct {
	target  string
	profile string
}

func newDoctorCmd(s Streams) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor PAGE|NNN|GATE.yaml",
		Short: "Check the host and the contract before a run: noise against floors, busy CPU, swap, disk",
		Long: `doctor checks, before anything is built, what would make a run noisy or unable to decide: the
CPU other processes use now, the cores, swap in use, free memory and disk; and, with this host's
calibration, each lane's floor against its noise at the run's protocol ("floor 3% but MDE 14%
at 4 pairs per collection: it needs about 48 pairs per collection"). One line per check. The
exit status is 0 when every check passes and 4 when any warns (the run would likely be noisy
or inconclusive; it is not an error).`,
		Example: `  flipbench doctor 266 --profile quick
  flipbench doctor experiments/gate.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("doctor: want one experiment page, number or gate spec, got %d arguments", len(args))
			}
			opts.target = args[0]
			return runDoctor(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.profile, "profile", "", "protocol profile from the spec")
	return cmd
}

func runDoctor(s Streams, opts *doctorOptions) error {
	t, err := findTarget(opts.target)
	if err != nil {
		return err
	}
	res, err := t.exp.Resolve(spec.Overrides{Profile: opts.profile})
	if err != nil {
		return flagProblem(err)
	}
	in := doctor.Input{Spec: t.exp, Resolved: res, Host: hostNow(t.root)}
	in.Calibration, in.CalibrationErr = calibrate.Read(t.root, calibrate.HostOf(in.Host.Snapshot))
	findings := doctor.Check(in)
	for _, f := range findings {
		level := "ok  "
		if f.Level == doctor.Warn {
			level = "WARN"
		}
		fmt.Fprintf(s.Out, "%s %s: %s\n", level, f.Check, f.Text)
	}
	if n := doctor.Warnings(findings); n > 0 {
		fmt.Fprintf(s.Err, "flipbench: doctor: %d warnings\n", n)
		return silentExit(ExitInconclusive)
	}
	return nil
}
