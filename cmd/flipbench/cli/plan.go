package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/calibrate"
	"github.com/flipbench/flipbench/steps/doctor"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// hostNow snapshots this host for plan and doctor: its fingerprint, memory, disk, and the
// CPU other processes use over a short window, stamped by c.
func hostNow(c clock.Clock, dir string) doctor.Host {
	stop := harness.MeasureOthers()
	time.Sleep(500 * time.Millisecond)
	others := stop()
	return doctor.Host{Snapshot: harness.CaptureEnv("doctor", 0, 0, c.Now(), dir), OthersPct: others}
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
	t, res, err := resolveTarget(opts.target, opts.profile)
	if err != nil {
		return err
	}
	var lanes []calibrate.Lane
	source := ""
	if opts.from != "" {
		d, err := loaded.Load(ledger.ReceiptDir(opts.from))
		if err != nil {
			return fmt.Errorf("--from %s: %w", opts.from, err)
		}
		if lanes, err = calibrate.FromReceipt(d.Plan, d.Records, d.Analysis, opts.from, s.Clock.Now()); err != nil {
			return fmt.Errorf("--from %s: %w", opts.from, err)
		}
		source = "the pilot receipt " + opts.from
	} else {
		host := calibrate.HostOf(hostNow(s.Clock, t.root).Snapshot)
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
			rows = append(rows, []string{l.Name, string(l.Role), "-", "-", "-", "-", "-", "not calibrated"})
			continue
		}
		lp := calibrate.Plan(lanes[i], calibrate.FloorOf(l, res), proto, res.Drift)
		total += lp.Time
		rows = append(rows, []string{l.Name, string(l.Role), fmt.Sprintf("%.1f%%", lp.NoisePct), fmt.Sprintf("%.1f%%", lp.MDEPct),
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
