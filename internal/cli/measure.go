package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

// preparation is what ab and gate share before measuring: a spec with its resolved
// protocol, where receipts go, and the command line to record.
type preparation struct {
	exp        *spec.Experiment
	root       string // ledger root
	page       string // the page relative to root ("" for a gate)
	resolved   spec.Resolved
	label      string
	profile    string
	resultsDir string // "" means root/results
	args       []string
	wait       time.Duration // how long to wait for the machine lock (--wait)
}

// prepared is a run ready to measure: the machine lock held, the arms built, and plan.json
// written into a new receipt data folder. The caller releases the lock.
type prepared struct {
	dir  string
	plan *receipt.Plan
	lock *harness.Lock
}

// prepare takes the machine lock, builds the arms and writes the plan. The lock comes
// first: a build competing with another run's measurement contaminates it just as a
// second measurement would.
func prepare(ctx context.Context, s Streams, p preparation) (*prepared, error) {
	resultsDir := p.resultsDir
	if resultsDir == "" {
		resultsDir = filepath.Join(p.root, ledger.ResultsDir)
	}
	lock, err := acquireLockWait(ctx, s, p.args, resultsDir, p.wait)
	if err != nil {
		return nil, err
	}
	arms, err := armbuild.Build(ctx, p.exp, armbuild.Options{Root: p.root, Log: s.Err})
	if err != nil {
		lock.Release()
		return nil, err
	}
	stamp, dir, err := newReceiptDir(resultsDir, p.exp.ID, p.label)
	if err != nil {
		lock.Release()
		return nil, err
	}
	lock.SetDir(dir)
	plan := harness.NewPlan(harness.PlanInput{
		Experiment: p.exp,
		Page:       p.page,
		Label:      p.label,
		Profile:    p.profile,
		Stamp:      stamp,
		Command:    p.args,
		Resolved:   p.resolved,
		Arms:       arms,
	})
	if err := receipt.WriteJSON(filepath.Join(dir, receipt.PlanFile), plan); err != nil {
		lock.Release()
		return nil, err
	}
	return &prepared{dir: dir, plan: plan, lock: lock}, nil
}

// newReceiptDir creates a new, empty receipt data folder <stamp>-exp<NNN>-<label> under
// resultsDir. The stamp has one-second resolution, so when a run of the same experiment
// and label already took this second, it waits for the next one: every run gets a folder
// of its own, and stamps keep sorting by time.
func newReceiptDir(resultsDir string, id int, label string) (stamp, dir string, err error) {
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return "", "", err
	}
	for try := 0; ; try++ {
		stamp = time.Now().UTC().Format(receiptStampFormat)
		dir = filepath.Join(resultsDir, fmt.Sprintf("%s-exp%03d-%s", stamp, id, label))
		err = os.Mkdir(dir, 0o755)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 3 {
			return stamp, dir, err
		}
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	}
}

// receiptStampFormat is the UTC time stamp that starts every receipt's name.
const receiptStampFormat = "2006-01-02T15-04-05Z"

// acquireLock takes the machine-wide measurement lock ($FLIPBENCH_LOCK, or the default).
func acquireLock(s Streams, args []string, dir string) (*harness.Lock, error) {
	return acquireLockWait(context.Background(), s, args, dir, 0)
}

// measured is the result of measure.
type measured struct {
	md  string // the receipt page
	out harness.Outcome
	err error
}

// measure runs every unfinished run of the plan in dir with progress on stderr, then
// writes the receipt.
func measure(ctx context.Context, s Streams, dir string, plan *receipt.Plan) measured {
	events := newProgress(s)
	runner := &harness.Runner{Dir: dir, Plan: plan, Starter: harness.ExecStarter{}, Events: events,
		CheckArms: func() error {
			if err := checkArmsUnchanged(plan); err != nil {
				return fmt.Errorf("%w; the finished runs are kept: restore the binary, then flipbench ab --resume %s", err, dir)
			}
			return nil
		}}
	out, err := runner.Run(ctx)
	events.Finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = fmt.Errorf("interrupted after %d runs; nothing finished is lost: flipbench ab --resume %s", out.Resumed+out.Ran, dir)
		} else {
			err = fmt.Errorf("%w (finished runs are kept: flipbench ab --resume %s)", err, dir)
		}
		return measured{out: out, err: err}
	}
	md, err := report.Finish(dir)
	if err != nil {
		return measured{out: out, err: fmt.Errorf("writing the receipt for %s: %w", dir, err)}
	}
	fmt.Fprintf(s.Err, "flipbench: %d runs (%d now, %d resumed), %d failed\n", out.Ran+out.Resumed, out.Ran, out.Resumed, out.Failed)
	return measured{md: md, out: out}
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
