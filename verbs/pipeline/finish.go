package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/report"
)

// Finish completes a receipt from its data folder: the <arm>.bench files, analysis.json,
// one SVG plot per primary and guard lane, manifest.json, and the markdown page beside the
// folder. It returns the page's path. Finishing a receipt again (after adding an
// incidence report, or a resume that had nothing left to run) is allowed, but not over a
// change: when the folder has a manifest, the run's own files (plan.json, raw.jsonl,
// env.json, looks.jsonl, warnings.jsonl) must still match it, or the new manifest would bless the change.
func Finish(dir string) (string, error) {
	if err := checkRunFiles(dir); err != nil {
		return "", err
	}
	d, err := loaded.Load(dir)
	if err != nil {
		return "", err
	}
	return finishLoaded(d)
}

// finishLoaded writes what Finish derives from the receipt d, loaded and analysed from its
// data folder, and the page; it returns the page's path. Its caller checked the run files
// (checkRunFiles) first.
func finishLoaded(d *loaded.Receipt) (string, error) {
	f := receipt.Folder(d.Dir)
	if _, err := f.WriteBench(d.Plan, d.Records); err != nil {
		return "", err
	}
	if err := f.WriteAnalysis(&d.Analysis); err != nil {
		return "", err
	}
	names, err := writePlots(f, d)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		d.Plots[name] = true // the page links the plots just written
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, d); err != nil {
		return "", err
	}
	// The manifest records the page's hash too, so a page edited by hand is refused.
	if _, err := f.Seal(buf.Bytes()); err != nil {
		return "", err
	}
	return f.Page(), nil
}

// checkRunFiles checks the files a run writes (plan.json, raw.jsonl, env.json and, after a
// resume that measured some runs again, superseded.jsonl), which Finish derives
// everything else from or keeps as measured data, against the folder's manifest, if it
// has one yet. A run file the manifest lists must be there unchanged, and one it does
// not list must not be there.
func checkRunFiles(dir string) error {
	var m receipt.Manifest
	err := receipt.ReadJSON(filepath.Join(dir, receipt.ManifestFile), &m)
	if errors.Is(err, os.ErrNotExist) {
		return nil // finished for the first time
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range []string{receipt.PlanFile, receipt.RawFile, receipt.EnvFile, receipt.SupersededFile, receipt.LooksFile, receipt.WarningsFile} {
		want, listed := m.Files[name]
		path := filepath.Join(dir, name)
		sum, err := receipt.HashFile(path)
		switch {
		case !listed && errors.Is(err, os.ErrNotExist):
		case !listed && err == nil:
			errs = append(errs, fmt.Errorf("%s: not in %s: added since the run", path, receipt.ManifestFile))
		case errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s: listed in %s but missing", path, receipt.ManifestFile))
		case err != nil:
			errs = append(errs, err)
		case sum != want:
			errs = append(errs, fmt.Errorf("%s: changed since the run (sha256 %s, manifest says %s)",
				path, receipt.ShortHash(sum), receipt.ShortHash(want)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("receipt %s does not match its manifest; refusing to render it again over a changed run:\n%w", dir, errors.Join(errs...))
	}
	return nil
}

// writePlots writes one SVG plot per candidate arm and primary or guard lane into f (the
// receipt data folder d was loaded from): the per-pass delta against base by pass, forward
// and reverse passes drawn differently, each collection's median delta as a dashed line,
// and the effect floor as a shaded band around zero; and the bar chart of every profile
// difference (report.ProfilePlots). It returns the names of the files
// written (see report.PlotName). Call it before the manifest is written, so the plots are hashed
// with the rest of the receipt; the output is deterministic, so rewriting it is harmless.
func writePlots(f receipt.Folder, d *loaded.Receipt) ([]string, error) {
	var names []string
	for _, arm := range d.Analysis.Candidates {
		for _, l := range report.PlotLanes(d.Plan) {
			var buf bytes.Buffer
			if err := report.Plot(&buf, d, arm, l.Name); err != nil {
				return nil, fmt.Errorf("plotting lane %s of arm %s: %w", l.Name, arm, err)
			}
			name := report.PlotName(arm, l.Name)
			if err := f.WritePlot(name, buf.Bytes()); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	profs, err := report.ProfilePlots(d)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(profs)) {
		if err := f.WritePlot(name, profs[name]); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}
