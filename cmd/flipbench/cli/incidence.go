package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// ProbeTag is the build tag that compiles the incidence probes in (package probe).
const ProbeTag = pipeline.ProbeTag

type incidenceOptions struct {
	page    string
	receipt string // an ab receipt folder to add the report to
	results string // where a new results folder goes (default: results/ beside experiments/)
	ref     string // the ref the suite is built from
	json    bool
	args    []string
}

func newIncidenceCmd(s Streams) *cobra.Command {
	opts := &incidenceOptions{}
	cmd := &cobra.Command{
		Use:   "incidence PAGE|NNN",
		Short: "Measure how often an experiment's situation occurs: the release suite with probe counters",
		Long: `incidence runs the release suite named by the spec's incidence section with the probe
counters compiled in (-tags ` + ProbeTag + `), each suite lane once in its own process, and
reports what they counted: totals per counter, the eligible share (incidence.eligible /
incidence.total), a per-lane breakdown, the positive-control check and the value estimate
(frequency x eligible share x incidence.saving-ns). See docs/incidence.md.

The suite is built from --ref, else incidence.suite.ref, else harness.ref, else HEAD, with
its lanes taken from the same ref. The report is written as incidence.json and incidence.md,
with the suite's runs in ` + receipt.IncidenceRunsFile + `, into a new folder
results/<stamp>-expNNN-incidence/ (with a manifest), or into an ab receipt folder given
with --receipt, whose receipt is then rendered again. stdout gets the report (markdown, or
--json). The exit status is 1 when the measurement proves nothing: a lane failed, or the
positive control did not fire.

flipbench ab runs this itself, into its receipt, when the spec has an incidence section.`,
		Example: `  flipbench incidence 275
  flipbench incidence 275 --json
  flipbench incidence 275 --receipt results/2026-11-30T10-00-00Z-exp275-quick`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("incidence: want one experiment page or number, got %d arguments", len(args))
			}
			if opts.receipt != "" && opts.results != "" {
				return usageError("incidence: give --receipt or --results, not both")
			}
			opts.page = args[0]
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runIncidenceCmd(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.receipt, "receipt", "", "add the report to this ab receipt data folder and render its receipt again")
	f.StringVar(&opts.results, "results", "", "folder for the new results folder (default: results/ beside experiments/)")
	f.StringVar(&opts.ref, "ref", "", "git ref to build the suite from (default: incidence.suite.ref, harness.ref, or HEAD)")
	f.BoolVar(&opts.json, "json", false, "print the report as JSON instead of markdown")
	return cmd
}

// runIncidenceCmd is the incidence verb: measure, write, print.
func runIncidenceCmd(ctx context.Context, s Streams, opts *incidenceOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	exp, page, root, err := findExperiment(opts.page)
	if err != nil {
		return err
	}
	if exp.Incidence == nil {
		return fmt.Errorf("%s: the spec has no incidence section (incidence: {suite: ..., total: ..., eligible: ...}); see docs/incidence.md", relPath(page))
	}
	job := pipeline.IncidenceJob{Spec: exp, Root: root, Ref: opts.ref, Command: opts.args}
	if opts.receipt != "" {
		job.Receipt = ledger.ReceiptDir(opts.receipt)
		// A folder without a plan is refused by the pipeline, which says what it is not.
		if plan, err := receipt.ReadPlan(job.Receipt); err == nil {
			if err := finishedAndListed(job.Receipt, plan, "measure into a folder of its own (drop --receipt), or run ab again"); err != nil {
				return fmt.Errorf("--receipt %s: %w", opts.receipt, err)
			}
		}
	} else {
		job.Results = resultsDir(root, opts.results)
	}
	rep, dir, err := pipeline.Incidence(ctx, job, pipelineOptions(s, opts.args, waitFlag{}, nil))
	if err != nil {
		return err
	}
	if opts.json {
		b, err := incidence.JSON(rep)
		if err != nil {
			return err
		}
		if _, err := s.Out.Write(b); err != nil {
			return err
		}
	} else if err := incidence.Markdown(s.Out, rep); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "flipbench: wrote %s\n", relPath(filepath.Join(dir, receipt.IncidenceFile)))
	if rep.Broken() {
		for _, f := range rep.Findings {
			if f.Level == incidence.LevelError {
				fmt.Fprintf(s.Err, "flipbench: %s\n", report.OneLine(f.Message))
			}
		}
		return silentExit(ExitError)
	}
	return nil
}
