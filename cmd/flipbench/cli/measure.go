package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/relpath"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// pipelineOptions returns what the pipeline takes from this process: real processes,
// progress on stderr, the machine lock ($FLIPBENCH_LOCK, waiting up to wait), the clock,
// and the busy-host meter ($FLIPBENCH_OTHERS_PCT, when set, is the share of the CPUs
// other processes are taken to use over every pass instead of measuring it).
func pipelineOptions(s Streams, args []string, wait waitFlag, events pipeline.Events) pipeline.Options {
	m := s.method()
	opts := pipeline.Options{
		Events: events,
		Log:    s.Err,
		Clock:  s.Clock,
		Method: &m,
		Lock: func(ctx context.Context, dir string) (*harness.Lock, error) {
			return acquireLockWait(ctx, s, args, dir, wait.d)
		},
	}
	if v := s.getenv("FLIPBENCH_OTHERS_PCT"); v != "" {
		pct, err := strconv.ParseFloat(v, 64)
		if err != nil || !(pct >= 0 && pct <= 100) {
			fmt.Fprintf(s.Err, "flipbench: warning: FLIPBENCH_OTHERS_PCT=%q: want a percentage from 0 to 100; measuring what other processes use instead\n", v)
		} else {
			opts.Others = harness.FixedOthers(pct)
		}
	}
	return opts
}

// measuring is one measuring verb's session: progress on stderr and the machine lock
// ($FLIPBENCH_LOCK, waiting up to --wait) in the pipeline's options.
type measuring struct {
	s      Streams
	events *progress
	opts   pipeline.Options
}

// startMeasuring returns the session of a verb whose command line is args.
func startMeasuring(s Streams, args []string, wait waitFlag) *measuring {
	events := newProgress(s)
	return &measuring{s: s, events: events, opts: pipelineOptions(s, args, wait, events)}
}

// done stops the progress and, when the verb's run res succeeded, says on stderr what
// became of its runs and its incidence suite. It returns err.
func (m *measuring) done(res *pipeline.Result, err error) error {
	m.events.Finish()
	if err != nil || res == nil || res.Identical {
		return err
	}
	s := m.s
	out := res.Outcome
	fmt.Fprintf(s.Err, "flipbench: %d runs (%d now, %d resumed), %d failed\n", out.Ran+out.Resumed, out.Ran, out.Resumed, out.Failed)
	if n := len(res.Looks); n > 0 {
		last := res.Looks[n-1]
		fmt.Fprintf(s.Err, "flipbench: %s\n", stopLine(last))
	}
	if res.IncidenceErr != nil && res.Receipt != nil {
		fmt.Fprintf(s.Err, "flipbench: warning: incidence not measured: %v; the A/B receipt is complete: measure it with flipbench incidence %d --receipt %s\n",
			res.IncidenceErr, res.Receipt.Plan.Experiment, relPath(res.Dir))
	}
	return nil
}

// stopLine says how a sequential run's last look l ended it: "sequential: stopped after 8
// rounds (budget), 4m10s measured: the budget is spent; ...; 3 of 16 lanes undecided".
func stopLine(l receipt.Look) string {
	return fmt.Sprintf("sequential: stopped after %s (%s), %s measured: %s%s",
		human.Count(l.Round, "round", "rounds"), l.Stop, l.Elapsed.Round(time.Second), stopText(l.Stop), undecidedText(l))
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

// undecidedText says how many lanes a run's last look left undecided: "; 3 of 16 lanes
// undecided"; "" when it left none or every lane the rule needs is decided.
func undecidedText(l receipt.Look) string {
	if l.Stop == receipt.StopDecided {
		// The lanes left without a verdict are guards cleared of a regression beyond
		// their floor, which is all the rule asks of them.
		return ""
	}
	n := 0
	for _, ll := range l.Lanes {
		if !ll.Verdict.Decided() {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of %s undecided", n, human.Count(len(l.Lanes), "lane", "lanes"))
}

// resultsDir is where a job's receipts go: --results, or results/ beside experiments/.
func resultsDir(root, flag string) string {
	if flag != "" {
		return flag
	}
	return filepath.Join(root, ledger.ResultsDir)
}

// resumeRequest is the request that finishes the interrupted run in receipt folder dir:
// it refuses a finished receipt a page lists, and finds the page the plan was made from,
// for its incidence suite and decision rule; a page that cannot be found leaves the
// request without a spec, and the resumed run measures without them, with a warning.
func resumeRequest(s Streams, dir string) (pipeline.AbRequest, error) {
	req := pipeline.AbRequest{Resume: dir}
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return req, err
	}
	if _, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); err == nil {
		// A finished receipt a page lists is immutable: rendering it again would change
		// what the page vouches for.
		if err := finishedAndListed(dir, plan, "there is nothing to resume"); err != nil {
			return req, err
		}
	}
	req.Command = plan.Command
	page, root, err := pageOfPlan(dir, plan)
	if err == nil {
		var e *spec.Experiment
		if e, err = spec.ParseFile(relPath(page)); err == nil {
			req.Spec, req.Root = e, root
			return req, nil
		}
	}
	fmt.Fprintf(s.Err, "flipbench: warning: the page of %s is not found (%v): resuming without its incidence suite and stopping rule's lanes\n", relPath(dir), err)
	return req, nil
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

// finishedAndListed refuses to change a finished receipt that its experiment's page lists
// (resume it, add an incidence report to it): a finished receipt is immutable, and
// rendering it again would change what the page vouches for. The error says whether it
// changed since it was listed, or else what to do instead (instead).
func finishedAndListed(dir string, plan *receipt.Plan, instead string) error {
	root, err := ledger.FindRoot(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil // not in a ledger: no page can list it
	}
	page, e, err := ledger.ListingPage(root, dir, plan)
	if err != nil || page == "" {
		return err
	}
	if err := ledger.ListedChanges(relPath(page), e, dir); err != nil {
		return err
	}
	return fmt.Errorf("the receipt is finished and %s lists it; a finished receipt is immutable, so %s", relPath(page), instead)
}

// relPath shortens an absolute path to one relative to the working directory, for
// messages.
func relPath(p string) string { return relpath.Short(p) }
