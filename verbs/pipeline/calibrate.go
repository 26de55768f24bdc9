package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// AAArm is the name of the base arm's twin in a calibration run.
const AAArm = "aa"

// CalibrateRequest is one flipbench calibrate: an A/A run of an experiment's (or a gate
// spec's) base arm against itself, whose noise per lane is kept for this host.
type CalibrateRequest struct {
	// Spec is the experiment; Root its ledger root; Page the page relative to Root ("" for
	// a gate spec).
	Spec *spec.Experiment
	Root string
	Page string
	// Resolved is the protocol and lanes to run, a fixed protocol (ResolveFixed).
	Resolved spec.Resolved
	// Results is the receipts folder; Command the command line recorded in the plan.
	Results string
	Command []string
}

// CalibrateOutcome is a calibration: the A/A run and the noise it measured.
type CalibrateOutcome struct {
	// Result is the A/A run, with its analysed receipt.
	*Result
	// Lanes are the calibrated lanes, merged into the host's calibration file Path.
	Lanes []calibrate.Lane
	Host  calibrate.Host
	Path  string
	// Reproduced counts the lane verdicts that reproduced an effect between the two
	// identical arms: an order effect, or a host that changed during the run.
	Reproduced int
}

// Calibrate runs one flipbench calibrate: the base arm, built once, against its twin
// (the same binary as arm AAArm), every lane and no incidence suite; then it records each
// lane's noise in the host's calibration file (experiments/calibration/<host>.json).
func Calibrate(ctx context.Context, req CalibrateRequest, opts Options) (*CalibrateOutcome, error) {
	aa := *req.Spec
	aa.Arms = []spec.Arm{req.Spec.Base()}
	aa.Incidence, aa.Shape = nil, nil
	job := Job{Spec: &aa, Root: req.Root, Page: req.Page, Resolved: req.Resolved, Label: "calibrate",
		Results: req.Results, Command: req.Command, Build: buildAA}
	res, err := Run(ctx, job, opts)
	out := &CalibrateOutcome{Result: res}
	if err != nil {
		return out, err
	}
	d := res.Receipt
	if len(d.Env.Snapshots) == 0 {
		return out, fmt.Errorf("%s: no host snapshot in env.json to key the calibration by", res.Dir)
	}
	rel, _ := filepath.Rel(req.Root, res.Page)
	if out.Lanes, err = calibrate.FromReceipt(d.Plan, d.Records, d.Analysis, filepath.ToSlash(rel), d.Env.Snapshots[0].Time); err != nil {
		return out, fmt.Errorf("%s: %w", res.Dir, err)
	}
	out.Host = calibrate.HostOf(d.Env.Snapshots[0])
	f, err := calibrate.Read(req.Root, out.Host)
	if errors.Is(err, os.ErrNotExist) {
		f, err = &calibrate.File{Host: out.Host}, nil
	}
	if err != nil {
		return out, err
	}
	f.Merge(out.Lanes)
	if out.Path, err = calibrate.Write(req.Root, f); err != nil {
		return out, err
	}
	for _, l := range d.Analysis.Lanes {
		if l.Verdict == driftcheck.LaneReproducedFaster || l.Verdict == driftcheck.LaneReproducedSlower {
			out.Reproduced++
		}
	}
	return out, nil
}

// buildAA builds the base arm and adds its twin: the same binary as arm AAArm.
func buildAA(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error) {
	arms, err := armbuild.Build(ctx, e, o)
	if err != nil {
		return nil, err
	}
	twin := arms[0]
	twin.Name = AAArm
	return append(arms, twin), nil
}

// ResolveFixed resolves an experiment's protocol with the overrides o as a fixed protocol
// of pairs pass pairs per collection (0: the spec's; a sequential spec's max-pairs), with
// samples overridden when set: a calibration's protocol.
func ResolveFixed(e *spec.Experiment, o spec.Overrides, pairs, samples int) (spec.Resolved, error) {
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
