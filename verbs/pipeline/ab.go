package pipeline

import (
	"context"
	"fmt"

	"github.com/flipbench/flipbench/model/spec"
)

// AbRequest is one flipbench ab: a new run of an experiment page, or the finish of an
// interrupted one (Resume).
type AbRequest struct {
	// Resume is the receipt data folder of an interrupted run to finish: its plan fixes the
	// protocol, lanes and arms, so only Spec and Root (the page the plan was made from,
	// nil when it is not found: the run then goes without its incidence suite) are used.
	Resume string
	// Spec is the experiment; Root its ledger root; Page the page relative to Root.
	Spec *spec.Experiment
	Root string
	Page string
	// Resolved is the run's protocol and lanes (the page resolved with the flags).
	Resolved spec.Resolved
	// Label names the receipt; "" means full.
	Label string
	// Results is the receipts folder; Command the command line recorded in the plan.
	Results string
	Command []string
	// Shard, when set, measures one shard of the run (docs/shards.md).
	Shard *ShardRequest
	// ArmsFile, when set, is a flipbench build --json file whose binaries the run must
	// measure (Job.ExpectArms).
	ArmsFile string
	// ProfileLanes and ProfileSamples say which lanes are profiled after the measured runs
	// (Job.ProfileLanes).
	ProfileLanes   string
	ProfileSamples int
	// MeasureIdentical measures the arms even when their built binaries are identical.
	// Otherwise such a run stops before it plans anything (Result.Identical), unless the
	// page itself asks for identical arms (spec.Experiment.SameArms: an A/A).
	MeasureIdentical bool
}

// Ab runs one flipbench ab: it builds the arms, plans, measures (a fixed protocol, or
// rounds until decided), profiles the reproduced lanes, measures the incidence suite, and
// writes the receipt; or it finishes the interrupted run req.Resume. Arms that build
// identical binaries are not measured unless asked (AbRequest.MeasureIdentical). The result carries
// the receipt as its page shows it, analysed once.
func Ab(ctx context.Context, req AbRequest, opts Options) (*Result, error) {
	if req.Resume != "" {
		job := Job{Spec: req.Spec, Root: req.Root, Command: req.Command, Incidence: true}
		return Resume(ctx, req.Resume, job, opts)
	}
	label := req.Label
	if label == "" {
		label = spec.FullProfile
	}
	job := Job{Spec: req.Spec, Root: req.Root, Page: req.Page, Resolved: req.Resolved, Label: label, Results: req.Results,
		Command: req.Command, Incidence: true, Shard: req.Shard, ProfileLanes: req.ProfileLanes, ProfileSamples: req.ProfileSamples,
		SkipIdentical: !req.MeasureIdentical && !req.Spec.SameArms()}
	if req.ArmsFile != "" {
		arms, err := ReadArms(req.ArmsFile)
		if err != nil {
			return nil, fmt.Errorf("--arms: %w", err)
		}
		job.ExpectArms, job.ExpectArmsFrom = arms, req.ArmsFile
	}
	return Run(ctx, job, opts)
}
