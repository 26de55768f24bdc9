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
	// Reanalyzed says that Open found an analysis.json of an older schema than this
	// flipbench's drift check and computed the analysis afresh from the run's data (plan
	// and raw runs, both under the manifest) instead.
	Reanalyzed bool
}

// Load reads a receipt data folder and runs the drift check on it afresh: what Finish
// renders, and what flipbench drift shows.
func Load(dir string) (*Receipt, error) {
	r, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if r.Analysis, err = Analyze(r.Plan, r.Records); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

// Analyze runs the drift check on a plan and its records, with the plan's thresholds.
func Analyze(plan *receipt.Plan, recs []receipt.Record) (driftcheck.Report, error) {
	return driftcheck.Analyze(DriftInput(plan, recs), plan.Drift)
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
	fresh, err := Analyze(r.Plan, r.Records)
	if err != nil {
		return nil, fmt.Errorf("receipt %s: %w", dir, err)
	}
	if r.Analysis.SchemaVersion != driftcheck.SchemaVersion {
		// An analysis of another schema says what an older drift check concluded; the rule
		// reads today's, computed from the same verified data.
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
