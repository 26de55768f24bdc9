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
	stamp := time.Now().UTC().Format("2006-01-02T15-04-05Z")
	dir := filepath.Join(resultsDir, fmt.Sprintf("%s-exp%03d-%s", stamp, p.exp.ID, p.label))
	lock, err := acquireLock(s, p.args, dir)
	if err != nil {
		return nil, err
	}
	arms, err := armbuild.Build(ctx, p.exp, armbuild.Options{Root: p.root, Log: s.Err})
	if err != nil {
		lock.Release()
		return nil, err
	}
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
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = receipt.WriteJSON(filepath.Join(dir, receipt.PlanFile), plan)
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &prepared{dir: dir, plan: plan, lock: lock}, nil
}

// acquireLock takes the machine-wide measurement lock ($FLIPBENCH_LOCK, or the default).
func acquireLock(s Streams, args []string, dir string) (*harness.Lock, error) {
	path := s.getenv("FLIPBENCH_LOCK")
	if path == "" {
		path = harness.DefaultLockPath()
	}
	return harness.AcquireLock(path, harness.Holder{PID: os.Getpid(), Command: strings.Join(args, " "), Since: time.Now().UTC(), Dir: dir})
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
	runner := &harness.Runner{Dir: dir, Plan: plan, Starter: harness.ExecStarter{}, Events: events}
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
