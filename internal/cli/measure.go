package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/pipeline"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// pipelineOptions returns what the pipeline takes from this process: real processes,
// progress on stderr, the machine lock ($FLIPBENCH_LOCK, waiting up to wait), the clock.
func pipelineOptions(s Streams, args []string, wait waitFlag, events pipeline.Events) pipeline.Options {
	return pipeline.Options{
		Events: events,
		Log:    s.Err,
		Clock:  s.Clock,
		Lock: func(ctx context.Context, dir string) (*harness.Lock, error) {
			return acquireLockWait(ctx, s, args, dir, wait.d)
		},
	}
}

// runPipeline runs job (or resumes the receipt folder resume, when set) with progress on
// stderr, and says on stderr what became of the runs and the incidence suite.
func runPipeline(ctx context.Context, s Streams, job pipeline.Job, resume string, wait waitFlag) (*pipeline.Result, error) {
	events := newProgress(s)
	events.setProtocol(job.Resolved.Protocol)
	if sel := job.Select; sel != nil {
		// compare resolves its protocol once the arms are built: progress counts against it.
		job.Select = func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
			e, res, err := sel(ctx, st, arms)
			if err == nil {
				events.setProtocol(res.Protocol)
			}
			return e, res, err
		}
	}
	opts := pipelineOptions(s, job.Command, wait, events)
	var res *pipeline.Result
	var err error
	if resume != "" {
		res, err = pipeline.Resume(ctx, resume, job, opts)
	} else {
		res, err = pipeline.Run(ctx, job, opts)
	}
	events.Finish()
	if err != nil {
		return res, err
	}
	out := res.Outcome
	fmt.Fprintf(s.Err, "flipbench: %d runs (%d now, %d resumed), %d failed\n", out.Ran+out.Resumed, out.Ran, out.Resumed, out.Failed)
	if n := len(res.Looks); n > 0 {
		last := res.Looks[n-1]
		fmt.Fprintf(s.Err, "flipbench: sequential: stopped after %d rounds (%s), %s measured: %s\n",
			last.Round, last.Stop, last.Elapsed.Round(1e9), stopText(last.Stop))
	}
	if res.IncidenceErr != nil && job.Spec != nil {
		fmt.Fprintf(s.Err, "flipbench: warning: incidence not measured: %v; the A/B receipt is complete: measure it with flipbench incidence %d --receipt %s\n",
			res.IncidenceErr, job.Spec.ID, relPath(res.Dir))
	}
	return res, nil
}

// stopText says why a sequential run stopped.
func stopText(stop string) string {
	switch stop {
	case receipt.StopDecided:
		return "every lane the decision needs is decided"
	case receipt.StopMaxPairs:
		return "the stopping rule's max-pairs rounds ran; the undecided lanes say their MDE"
	case receipt.StopBudget:
		return "the budget is spent; the undecided lanes say their MDE"
	case receipt.StopUndecidable:
		return "the lanes left cannot be decided within the budget at their noise; they say their MDE"
	}
	return stop
}

// resultsDir is where a job's receipts go: --results, or results/ beside experiments/.
func resultsDir(root, flag string) string {
	if flag != "" {
		return flag
	}
	return filepath.Join(root, ledger.ResultsDir)
}

// resumeJob finds the page a receipt's plan was made from, for its incidence suite and
// decision rule; a page that cannot be found leaves the job without a spec, and the
// resumed run measures without them, with a warning.
func resumeJob(s Streams, dir string) (pipeline.Job, error) {
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return pipeline.Job{}, err
	}
	job := pipeline.Job{Command: plan.Command, Incidence: true}
	page, root, err := pageOfPlan(dir, plan)
	if err == nil {
		var e *spec.Experiment
		if e, err = spec.ParseFile(relPath(page)); err == nil {
			job.Spec, job.Root = e, root
			return job, nil
		}
	}
	fmt.Fprintf(s.Err, "flipbench: warning: the page of %s is not found (%v): resuming without its incidence suite and stopping rule's lanes\n", relPath(dir), err)
	return job, nil
}

// pageOfPlan finds the experiment page a receipt was made from: plan.Page under the ledger
// root that holds the receipt folder (results/ beside experiments/), else the page with the
// plan's number found from the working directory.
func pageOfPlan(dir string, plan *receipt.Plan) (page, root string, err error) {
	if r, err := ledger.FindRoot(dir); err == nil && plan.Page != "" {
		p := filepath.Join(r, filepath.FromSlash(plan.Page))
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, r, nil
		}
	}
	return ledger.FindPage(".", fmt.Sprint(plan.Experiment))
}

// findExperiment resolves a page argument (a path or an experiment number) and parses the
// page: the experiment, its page path and the ledger root.
func findExperiment(arg string) (*spec.Experiment, string, string, error) {
	page, root, err := ledger.FindPage(".", arg)
	if err != nil {
		return nil, "", "", err
	}
	exp, err := loadPage(page)
	return exp, page, root, err
}

// loadPage parses an experiment page and checks that its id matches the number in its file
// name, so receipts are never filed under the wrong experiment.
func loadPage(page string) (*spec.Experiment, error) {
	exp, err := spec.ParseFile(relPath(page))
	if err != nil {
		return nil, err
	}
	if n, ok := ledger.PageID(page); ok && n != exp.ID {
		return nil, fmt.Errorf("%s:%d: id: %d, but the file name says experiment %d", relPath(page), max(exp.Lines["id"], 1), exp.ID, n)
	}
	return exp, nil
}

// flagProblem turns the spec's complaints about command-line values ("--passes 3: must
// be even") into usage errors (exit 2); other errors pass through.
func flagProblem(err error) error {
	for _, e := range spec.Errors(err) {
		if !strings.HasPrefix(e.Field, "--") {
			return err
		}
	}
	if len(spec.Errors(err)) == 0 {
		return err
	}
	return &exitError{code: ExitUsage, err: err}
}

// interrupted reports whether err is the pipeline's "interrupted, resume it" error.
func interrupted(err error) bool { return errors.Is(err, pipeline.ErrInterrupted) }
