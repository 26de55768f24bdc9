package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/steps/calibrate"
	"github.com/flipbench/flipbench/steps/doctor"
)

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
	t, res, err := resolveTarget(opts.target, opts.profile)
	if err != nil {
		return err
	}
	in := doctor.Input{Spec: t.exp, Resolved: res, Host: hostNow(s.Clock, t.root)}
	in.Host.Placement, in.Host.SchedstatErr = harness.PlacementOf(res.Protocol.CPUList()), harness.SchedstatErr()
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
