package pipeline

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/calibrate"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
)

// watch passes a run's events on and, for Events that implement PlanEvents, adds what
// the looks imply: the forecast after round 1 when the one before it lacked the time per
// round or a lane's noise, and a note when lanes cannot be decided within the budget.
type watch struct {
	Events
	show  PlanEvents
	dir   string
	plan  *receipt.Plan
	known bool            // the forecast before round 1 had everything
	told  map[string]bool // lanes already said to be undecidable
}

// watching wraps opts.Events in a watch when they show plans.
func watching(opts Options, dir string, plan *receipt.Plan, known bool) Options {
	show, ok := opts.Events.(PlanEvents)
	if !ok {
		return opts
	}
	opts.Events = &watch{Events: opts.Events, show: show, dir: dir, plan: plan, known: known, told: map[string]bool{}}
	return opts
}

// Look passes the look on, then shows what it implies.
func (w *watch) Look(l receipt.Look) {
	w.Events.Look(l)
	if l.Stop != "" || w.plan.Protocol.Sequential == nil {
		return // nothing more will be measured
	}
	if l.Round == 1 && w.known {
		return
	}
	rep, ok := w.analysis(l.Round)
	if !ok {
		return
	}
	if l.Round == 1 {
		w.show.Forecast(forecast(w.plan, nil, 0, nil, &rep, 1, l.Elapsed))
		return
	}
	// Say each lane once: judge only the lanes not said yet.
	rep.Pooled = slices.DeleteFunc(slices.Clone(rep.Pooled), func(s driftcheck.LaneSummary) bool { return w.told[s.Lane] })
	lanes, sentence := Undecidable(rep, BudgetOf(w.plan, l))
	for _, n := range lanes {
		w.told[n] = true
	}
	if len(lanes) > 0 {
		w.show.Note(sentence)
	}
}

// analysis analyses the records of rounds 1..round on disk.
func (w *watch) analysis(round int) (driftcheck.Report, bool) {
	recs, err := receipt.ReadRecords(w.dir)
	if err != nil {
		return driftcheck.Report{}, false
	}
	recs = slices.DeleteFunc(recs, func(r receipt.Record) bool { return receipt.Round(r.Pass) > round })
	rep, err := driftcheck.Analyze(report.DriftInput(w.plan, recs), w.plan.Drift)
	return rep, err == nil
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
