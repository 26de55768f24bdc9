package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/report"
)

type driftOptions struct {
	dir              string
	input            string
	json             bool
	failOnReproduced bool
	markdown         bool
	floor, cv, asym  float64
}

func newDriftCmd(s Streams) *cobra.Command {
	opts := &driftOptions{}
	cmd := &cobra.Command{
		Use:   "drift [DIR]",
		Short: "Label every pass-pair of a results folder REPRODUCED, drift-suspected, one-sided or neutral",
		Long: `drift re-analyses a receipt data folder from disk alone: per pass and lane the candidate's
delta against base, each pass-pair's verdict with its reason, and per lane the pooled
summary. --input takes hand-collected data instead:
{"scenarios":[{"label":"x","pass1":{"baseline":[...],"candidate":[...]},"pass2":{...}}]}.

It prints tables for a terminal, 100 columns wide ($COLUMNS when set), with each reason
under its row; --markdown prints the markdown a receipt holds, pass statistics included;
--json the analysis as one document (docs/json.md).

Exit status: 0, or 3 with --fail-on-reproduced when any pass-pair is REPRODUCED (use it to
prove an A/A run clean).`,
		Example: `  flipbench drift results/2026-08-19T07-40-00Z-exp275-full
  flipbench drift results/2026-08-19T07-40-00Z-exp275-full --json | jq '.pairs[] | select(.verdict=="REPRODUCED")'
  flipbench drift --input passes.json --floor 5`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usageError("drift: want one results folder, got %d arguments", len(args))
			case len(args) == 1 && opts.input != "":
				return usageError("drift: give a results folder or --input FILE, not both")
			case len(args) == 0 && opts.input == "":
				return usageError("drift: give a results folder or --input FILE")
			case len(args) == 1:
				opts.dir = args[0]
			}
			if cmd.Flags().Changed("json") && cmd.Flags().Changed("markdown") {
				return usageError("drift: --json and --markdown: choose one")
			}
			for _, f := range []struct {
				name string
				v    float64
			}{{"floor", opts.floor}, {"clean-cv", opts.cv}, {"asymmetry", opts.asym}} {
				if cmd.Flags().Changed(f.name) && !(f.v > 0 && !math.IsInf(f.v, 0)) {
					return usageError("--%s %g: must be a finite number above 0", f.name, f.v)
				}
			}
			return runDrift(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.input, "input", "", "hand-collected scenarios (JSON) instead of a results folder")
	f.BoolVar(&opts.json, "json", false, "print the analysis as one JSON document")
	f.BoolVar(&opts.markdown, "markdown", false, "print markdown tables (with the pass statistics) instead of the terminal's")
	f.BoolVar(&opts.failOnReproduced, "fail-on-reproduced", false, "exit 3 when any pass-pair is REPRODUCED")
	f.Float64Var(&opts.floor, "floor", 0, "effect floor in percent (default: the run's, or 3)")
	f.Float64Var(&opts.cv, "clean-cv", 0, "clean-CV threshold in percent (default: the run's, or 8)")
	f.Float64Var(&opts.asym, "asymmetry", 0, "CV asymmetry ratio (default: the run's, or 4)")
	return cmd
}

func runDrift(s Streams, opts *driftOptions) error {
	var (
		in    driftcheck.Input
		cfg   = driftcheck.DefaultConfig()
		roles report.Roles
		vals  *report.Values
		// method is the receipt's analysis method (hand-collected scenarios: today's).
		method = s.method()
	)
	if opts.input != "" {
		data, err := os.ReadFile(opts.input)
		if err != nil {
			return err
		}
		if in, err = driftcheck.ParseScenarios(data); err != nil {
			return fmt.Errorf("%s: %w", opts.input, err)
		}
	} else {
		d, err := loaded.Load(opts.dir)
		if err != nil {
			return err
		}
		in, cfg, roles, vals = loaded.DriftInput(d.Method, d.Plan, d.Records), d.Plan.Drift, report.PlanRoles(d.Plan), report.DataValues(d)
		method = d.Method
	}
	if opts.floor > 0 {
		cfg.EffectFloorPct = opts.floor
	}
	if opts.cv > 0 {
		cfg.CleanCVPct = opts.cv
	}
	if opts.asym > 0 {
		cfg.CVAsymmetry = opts.asym
	}
	rep, err := driftcheck.AnalyzeBy(method, in, cfg)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if opts.json {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if opts.markdown {
		fmt.Fprintf(&buf, "%s Negative effects mean the candidate is better.\n\n", report.ConfigText(rep))
		if err := report.DriftMarkdown(&buf, rep, roles, vals); err != nil {
			return err
		}
		fmt.Fprintf(&buf, "### Warnings\n\n")
		if len(rep.Warnings) == 0 {
			fmt.Fprintf(&buf, "None.\n")
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(&buf, "- %s\n", w)
		}
	} else if err := report.DriftText(&buf, rep, roles, vals, terminalWidth(s)); err != nil {
		return err
	}
	if _, err := s.Out.Write(buf.Bytes()); err != nil {
		return err
	}
	if opts.failOnReproduced {
		for _, p := range rep.Pairs {
			if p.Verdict == driftcheck.Reproduced {
				fmt.Fprintf(s.Err, "flipbench: lane %s, arm %s, collection %d pair %d: REPRODUCED (%s)\n", p.Lane, p.Arm, p.Collection, p.Pair, p.Reason)
				return silentExit(ExitRegression)
			}
		}
	}
	return nil
}
