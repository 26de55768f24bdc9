package pipeline

import (
	"os"
	"path/filepath"

	"github.com/flipbench/flipbench/calibrate"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/receipt"
)

// watch shows what a sequential run's looks imply, for Events that implement
// PlanEvents: the forecast after round 1 when the one before it lacked the time per
// round or a lane's noise, and a note when a look finds lanes that cannot be decided
// within the budget (receipt.Look.Undecidable). The sequence controller calls it with
// each look and the analysis the look was made from, so nothing is analysed twice.
type watch struct {
	show  PlanEvents
	plan  *receipt.Plan
	known bool // the forecast before round 1 had everything
}

// newWatch returns a watch for opts.Events when they show plans, else nil.
func newWatch(opts Options, plan *receipt.Plan, known bool) *watch {
	show, ok := opts.Events.(PlanEvents)
	if !ok {
		return nil
	}
	return &watch{show: show, plan: plan, known: known}
}

// look shows what look l, made from rep, implies.
func (w *watch) look(l receipt.Look, rep driftcheck.Report) {
	if note := UndecidableNote(l.Undecidable); note != "" {
		w.show.Note(note)
	}
	if l.Stop != "" || l.Round != 1 || w.known {
		return // nothing more will be measured, or the plan said it all
	}
	w.show.Forecast(forecast(w.plan, nil, 0, nil, &rep, 1, l.Elapsed))
}

// showForecast shows the re-planned iteration counts and the forecast before round 1,
// when opts.Events show plans, and reports whether it had everything (the time per round and every lane's noise).
func showForecast(opts Options, root, dir string, plan *receipt.Plan, iters Iterations) bool {
	show, ok := opts.Events.(PlanEvents)
	if !ok {
		return true
	}
	if note := iters.Note(); note != "" {
		show.Note(note)
	}
	f := forecast(plan, iters.Lanes, iters.Took, hostCalibration(opts, root, dir), nil, 0, 0)
	show.Forecast(f)
	return f.Known()
}

// hostCalibration reads the calibration of this host under the ledger root, or nil.
func hostCalibration(opts Options, root, dir string) *calibrate.File {
	if root == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(calibrate.Dir))); err != nil {
		return nil
	}
	capture := opts.Capture
	if capture == nil {
		capture = harness.CaptureEnv
	}
	f, err := calibrate.Read(root, calibrate.HostOf(capture("plan", 0, 0, opts.now(), dir)))
	if err != nil {
		return nil
	}
	return f
}
