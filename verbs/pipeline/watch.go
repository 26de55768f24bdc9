package pipeline

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// watch shows what a sequential run's looks imply, for Events that implement
// PlanEvents: the forecast after round 1 when the one before it lacked the time per
// round or a lane's noise, and a note when a look finds lanes that cannot be decided
// within the budget (receipt.Look.Undecidable; not for a gate, whose reach speaks of its
// thresholds). It also hands that forecast to the job's reach, whose error stops the run;
// when round 1 gave the lanes too few pairs of their own to know their noise
// (Forecast.OwnAfter), reach gets the forecast of the first look that does, for the lanes
// still measured, and nothing more is shown. The sequence controller
// calls it with each look and the analysis the look was made from, so nothing is analysed
// twice.
type watch struct {
	show  PlanEvents // nil: the events show no plans
	goal  goal
	plan  *receipt.Plan
	known bool // the forecast before round 1 had everything
	// ownAt is the round whose look first knows the lanes' own noise, when round 1's did
	// not (0: none pending).
	ownAt int
}

// newWatch returns a watch for opts.Events when they show plans or for reach when it is
// set, else nil.
func newWatch(opts Options, plan *receipt.Plan, known bool, g goal) *watch {
	show, _ := opts.Events.(PlanEvents)
	if show == nil && g.reach == nil {
		return nil
	}
	return &watch{show: show, goal: g, plan: plan, known: known}
}

// look shows what look l, made from rep, implies; an error is Reach's refusal, and stops
// the run.
func (w *watch) look(l receipt.Look, rep driftcheck.Report) error {
	// A gate holds its lanes to thresholds, not floors: its reach says which it cannot
	// reach, where this note would speak of floors it does not judge by.
	if note := UndecidableNote(l.Undecidable); note != "" && w.show != nil && w.goal.threshold == nil {
		w.show.Note(note)
	}
	switch {
	case l.Stop != "" || w.known:
		return nil // nothing more will be measured, or the plan said it all
	case l.Round == 1:
		f := w.goal.apply(forecast(w.plan, nil, 0, nil, &rep, 1, l.Elapsed))
		if w.show != nil {
			w.show.Forecast(f)
		}
		w.ownAt = f.OwnAfter
		return checkReach(w.goal.reach, f)
	case w.ownAt > 0 && l.Round >= w.ownAt:
		w.ownAt = 0
		f := w.goal.apply(forecast(w.plan, nil, 0, nil, &rep, l.Round, l.Elapsed))
		f.Lanes = slices.DeleteFunc(f.Lanes, func(lf LaneForecast) bool { return !slices.Contains(l.Pending, lf.Lane) })
		return checkReach(w.goal.reach, f)
	}
	return nil
}

// checkReach calls reach, when set, with a forecast that knows every lane's noise or the
// time per round; its error comes back as a *ReachError.
func checkReach(reach func(Forecast) error, f Forecast) error {
	if reach == nil || !f.NoiseKnown() && f.PerRound <= 0 {
		return nil
	}
	if err := reach(f); err != nil {
		return &ReachError{Err: err}
	}
	return nil
}

// ReachError is a refusal of the job's reach (Gate's): the run stopped because its decision is out of reach.
// Its message is Err's; the plan, and the runs of round 1 when the refusal came after it,
// stay in the receipt folder.
type ReachError struct{ Err error }

func (e *ReachError) Error() string { return e.Err.Error() }
func (e *ReachError) Unwrap() error { return e.Err }

// planForecast makes the forecast before round 1, shows it and the re-planned iteration
// counts when opts.Events show plans, and hands it to reach (an error stops the run before
// anything is measured). known reports whether it had everything (the time per round and
// every lane's noise), so that no forecast follows round 1.
func planForecast(opts Options, plan *receipt.Plan, iters Iterations, host func() *calibrate.File, g goal) (known bool, err error) {
	show, _ := opts.Events.(PlanEvents)
	if show == nil && g.reach == nil {
		return true, nil
	}
	f := g.apply(forecast(plan, iters.Lanes, iters.Took, host(), nil, 0, 0))
	if show != nil {
		if note := iters.Note(); note != "" {
			show.Note(note)
		}
		show.Forecast(f)
	}
	return f.Known(), checkReach(g.reach, f)
}

// writePlan writes plan.json into receipt folder dir, with the lanes' host calibration
// (host, read when needed) frozen into it when the page lends it to the analysis
// (drift.calibration-df).
func writePlan(dir string, plan *receipt.Plan, host func() *calibrate.File) error {
	if plan.Drift.MaxCalibrationDF > 0 {
		lendCalibration(plan, host())
	}
	return receipt.Folder(dir).WritePlan(plan)
}

// lendCalibration freezes into the plan each lane's noise as this host's calibration f
// measured it, at the plan's samples per run, for a page that lends it to the analysis
// (drift.calibration-df): a lane without a calibration, or calibrated at another CPU
// placement, gets none; so does every lane when f is nil.
func lendCalibration(plan *receipt.Plan, f *calibrate.File) {
	if f == nil {
		return
	}
	for i := range plan.Lanes {
		c, ok := f.Lane(plan.Experiment, plan.Lanes[i].Name)
		if !ok || c.NoisePct <= 0 || c.DF <= 0 || c.PlacementChange(plan.Protocol.CPUs) != "" {
			continue
		}
		plan.Lanes[i].Calibration = &driftcheck.CalibratedNoise{DeltaPct: driftcheck.NoiseOf(c.BetweenPct, c.WithinCVPct, plan.Protocol.Samples),
			DF: float64(c.DF), Receipt: c.Receipt}
	}
}

// hostCalibration reads the calibration of this host under the ledger root, or nil.
func hostCalibration(opts Options, root, dir string) *calibrate.File {
	if root == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(calibrate.Dir))); err != nil {
		return nil
	}
	f, err := calibrate.Read(root, calibrate.HostOf(opts.capture()("plan", 0, 0, opts.Clock.Now(), dir)))
	if err != nil {
		return nil
	}
	return f
}
