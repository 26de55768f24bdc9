// Package loaded is a receipt data folder read into memory with its drift analysis: what
// the renderers (report, ledger, compare's table, the gate) take, so that none of them
// reads a file. Load reads a folder and analyses it afresh (what Finish renders); Open
// loads a finished receipt for deciding on it, verifying its manifest, its page and its
// stored analysis against the one recomputed from its plan and raw runs.
//
// It sits beside package receipt rather than in it because it needs what imports receipt:
// the lane kinds' floors and noise groups (lanekind), the better direction (spec), the
// profile differences (profdiff) and the incidence report (incidence). Package receipt
// keeps the file formats; this package joins them into one analysed receipt.
package loaded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// Receipt is everything a receipt shows, loaded from its data folder.
type Receipt struct {
	Dir      string
	Plan     *receipt.Plan
	Records  []receipt.Record
	Env      receipt.Env
	Analysis driftcheck.Report
	// Looks are a sequential run's looks (looks.jsonl); nil for a fixed protocol.
	Looks []receipt.Look
	// Kept are the warnings the build and the run kept in warnings.jsonl.
	Kept []receipt.Warning
	// Profiles are the profile differences of the lanes profiled after the measured runs
	// (profiles.json); nil when none were.
	Profiles *profdiff.Report
	// Plots names the profile differences' bar charts (profdiff.PlotName) that are in the
	// data folder; a page links only those.
	Plots map[string]bool
	// Incidence is the incidence report measured into the receipt (incidence.json); nil
	// when there is none.
	Incidence *incidence.Report
	// Method is the analysis method Analysis is by: the plan's (MethodOf), or the one a
	// caller re-analysed with (ByMethod). MethodImplied says the plan recorded none, so
	// the method is the one its age implies (driftcheck.ImpliedMethod).
	Method        driftcheck.Method
	MethodImplied bool
	// Reanalyzed says that Open found an analysis.json not by the receipt's method (of an
	// older schema, or made before methods were recorded by another default) and computed
	// the analysis afresh by the method from the run's data (plan and raw runs, both
	// under the manifest) instead.
	Reanalyzed bool
	// NotRecomputed, when set, says why Open took analysis.json as stored, verified by the
	// manifest's hash only: this flipbench does not compute the receipt's method.
	NotRecomputed string
}

// MethodOf returns the analysis method the run of plan is judged by: the method it was
// planned with, or, for a plan made before methods were recorded, the method its age
// implies (driftcheck.ImpliedMethod; implied is then true).
func MethodOf(plan *receipt.Plan) (m driftcheck.Method, implied bool) {
	if plan.Method != nil {
		return *plan.Method, false
	}
	return driftcheck.ImpliedMethod(), true
}

// Load reads a receipt data folder and runs the drift check on it afresh: what Finish
// renders, and what flipbench drift shows.
func Load(dir string) (*Receipt, error) {
	r, err := Read(dir)
	if err != nil {
		return nil, err
	}
	r.Method, r.MethodImplied = MethodOf(r.Plan)
	if r.Analysis, err = AnalyzeBy(r.Method, r.Plan, r.Records); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

// Analyze runs the drift check on a plan and its records by the plan's method (MethodOf),
// with the plan's thresholds.
func Analyze(plan *receipt.Plan, recs []receipt.Record) (driftcheck.Report, error) {
	m, _ := MethodOf(plan)
	return AnalyzeBy(m, plan, recs)
}

// AnalyzeBy runs the drift check on a plan and its records by method m, with the plan's
// thresholds.
func AnalyzeBy(m driftcheck.Method, plan *receipt.Plan, recs []receipt.Record) (driftcheck.Report, error) {
	return driftcheck.AnalyzeBy(m, DriftInput(m, plan, recs), plan.Drift)
}

// ByMethod returns a copy of r whose analysis is by method m, computed afresh from its
// data (a page re-analysed on purpose: finalize --reanalyse); r is left as it is.
func (r *Receipt) ByMethod(m driftcheck.Method) (*Receipt, error) {
	a, err := AnalyzeBy(m, r.Plan, r.Records)
	if err != nil {
		return nil, fmt.Errorf("receipt %s: %w", r.Dir, err)
	}
	tidyReasons(&a)
	c := *r
	c.Analysis, c.Method, c.MethodImplied, c.Reanalyzed, c.NotRecomputed = a, m, false, true, ""
	return &c, nil
}

// Open loads a finished receipt as its page shows it, for deciding on it: it refuses an
// unfinished receipt (no manifest yet), verifies the data folder against its manifest,
// refusing a receipt whose files changed since the run, checks that the receipt page
// exists and is the page rendered from the data (receipt.VerifyPage), and takes the drift
// analysis stored in analysis.json, unless that analysis is of an older schema
// (Receipt.Reanalyzed: then the one computed afresh). A stored analysis of the current
// schema is checked against the drift check computed afresh from the plan and raw runs,
// and a receipt whose analysis.json differs is refused with the first difference named (an
// analysis edited and its manifest recomputed). dir is the data folder.
func Open(dir string) (*Receipt, error) {
	if err := verify(dir); err != nil {
		return nil, err
	}
	r, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.AnalysisFile), &r.Analysis); err != nil {
		return nil, fmt.Errorf("receipt %s: %w", dir, err)
	}
	r.Method, r.MethodImplied = MethodOf(r.Plan)
	stored := r.Analysis.Method
	if err := r.Method.Computable(); err != nil {
		// What this flipbench cannot recompute stands as stored, when it is by the
		// receipt's method: the manifest vouches for it.
		if stored != nil && stored.Same(r.Method) {
			r.NotRecomputed = err.Error()
			tidyReasons(&r.Analysis)
			return r, nil
		}
		return nil, fmt.Errorf("receipt %s: its analysis method is not one this flipbench computes (%v), and its %s is not by that method; judge it by today's method on purpose with flipbench finalize --reanalyse", dir, err, receipt.AnalysisFile)
	}
	fresh, err := AnalyzeBy(r.Method, r.Plan, r.Records)
	if err != nil {
		return nil, fmt.Errorf("receipt %s: %w", dir, err)
	}
	if r.Analysis.SchemaVersion != driftcheck.SchemaVersion || (stored != nil && !stored.Same(r.Method)) {
		// An analysis of another schema says what an older drift check concluded; the rule
		// reads the receipt's method's, computed from the same verified data.
		r.Analysis, r.Reanalyzed = fresh, true
		tidyReasons(&r.Analysis)
		return r, nil
	}
	tidyReasons(&r.Analysis)
	if diff := AnalysisDiff(r.Analysis, fresh); diff != "" {
		return nil, fmt.Errorf("receipt %s: %s is not the drift check of its %s (%s); a stored analysis is derived from the measured data, never edited: restore the receipt (e.g. with git checkout) or measure anew",
			dir, receipt.AnalysisFile, receipt.RawFile, diff)
	}
	return r, nil
}

// verify checks what Open opens: a finished data folder that matches its manifest, with
// its page beside it as rendered from the data.
func verify(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("receipt %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("receipt %s: not a receipt data folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("receipt %s is not finished (it has no %s): a run is still measuring into it, or was interrupted (flipbench ab --resume %s finishes it)", dir, receipt.ManifestFile, dir)
	}
	if err := receipt.VerifyManifest(dir); err != nil {
		return fmt.Errorf("receipt %s does not match its manifest; refusing a changed receipt:\n%w", dir, err)
	}
	page := receipt.PagePath(dir)
	if _, err := os.Stat(page); err != nil {
		return fmt.Errorf("receipt %s: its page %s is missing: %w", dir, page, err)
	}
	if err := receipt.VerifyPage(dir); err != nil {
		return fmt.Errorf("receipt %s: refusing a receipt page edited by hand: %w", dir, err)
	}
	return nil
}

// Read reads what a run wrote into a receipt data folder, without analysing it: the plan,
// the records, the environment (optional), the looks, the kept warnings, and what was
// added after the measured runs (ReadAdded). Its Analysis is empty: Load fills it.
func Read(dir string) (*Receipt, error) {
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	recs, err := receipt.ReadRecords(dir)
	if err != nil {
		return nil, err
	}
	r := &Receipt{Dir: dir, Plan: plan, Records: recs}
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.EnvFile), &r.Env); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if r.Looks, err = receipt.ReadLooks(dir); err != nil {
		return nil, err
	}
	if r.Kept, err = receipt.ReadWarnings(dir); err != nil {
		return nil, err
	}
	return r, r.ReadAdded()
}

// ReadAdded reads again what is added to a data folder after its measured runs: the
// profile differences, their bar charts and the incidence report. The pipeline calls it
// after profiling and measuring the incidence into a receipt it loaded before.
func (r *Receipt) ReadAdded() error {
	var err error
	if r.Profiles, err = profdiff.ReadReport(r.Dir); err != nil {
		return err
	}
	r.Plots = map[string]bool{}
	if r.Profiles != nil {
		for _, l := range r.Profiles.Lanes {
			for _, d := range l.Diffs {
				name := profdiff.PlotName(l.Arm, l.Lane, d.Kind)
				if _, err := os.Stat(filepath.Join(r.Dir, name)); err == nil {
					r.Plots[name] = true
				}
			}
		}
	}
	r.Incidence = nil
	if incidence.Exists(r.Dir) {
		if r.Incidence, err = incidence.Read(r.Dir); err != nil {
			return err
		}
	}
	return nil
}
