package ledger

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/report"
)

// IndexFile is the generated index of the ledger, under the ledger root.
const IndexFile = "experiments/README.md"

// IndexEntry is one row of the ledger's index.
type IndexEntry struct {
	ID     int
	Title  string
	Status spec.Status
	// Reanalysed says the page is judged by another analysis method than its run's, on
	// purpose (finalize --reanalyse); the index marks its status.
	Reanalysed bool
	Directions []string
	Date       string
	// Headline is the first primary lane's pooled effect for the first candidate, with its
	// interval (Headline), from the page's newest listed receipt, or "" when there is none.
	Headline string
	// Page is the page's path.
	Page string
	// Invalid says the page's front matter does not parse (flipbench check says why).
	Invalid bool
}

// IndexEntries reads every page under root/experiments into index entries, newest first
// (by date, then by number). A page whose front matter does not parse is listed with what
// its file name says.
func IndexEntries(root string) ([]IndexEntry, error) {
	pages, err := Pages(root)
	if err != nil {
		return nil, err
	}
	var out []IndexEntry
	for _, path := range pages {
		p, err := ReadPage(path)
		if err != nil || p.Spec == nil {
			id, _ := PageID(path)
			out = append(out, IndexEntry{ID: id, Page: path, Invalid: true})
			continue
		}
		e := p.Spec
		out = append(out, IndexEntry{
			ID: e.ID, Title: e.Title, Status: e.Status, Reanalysed: e.Reanalysed != nil, Directions: e.Directions, Date: e.Date,
			Headline: headline(filepath.Dir(path), e), Page: path,
		})
	}
	slices.SortStableFunc(out, func(a, b IndexEntry) int {
		if c := cmp.Compare(b.Date, a.Date); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}

// newestListed returns the data folder of the newest receipt a page lists, or "".
func newestListed(pageDir string, e *spec.Experiment) string {
	best, bestStamp := "", ""
	for _, r := range e.Receipts {
		n, ok := ParseReceiptName(filepath.Base(filepath.Dir(r.Path)))
		dir := filepath.Join(pageDir, filepath.FromSlash(filepath.Dir(r.Path)))
		if !ok {
			n, ok = ParseReceiptName(r.Path)
			dir = ReceiptDir(filepath.Join(pageDir, filepath.FromSlash(r.Path)))
		}
		if ok && n.Stamp >= bestStamp {
			best, bestStamp = dir, n.Stamp
		}
	}
	return best
}

// headline computes an index entry's headline from the page's newest listed receipt, from
// the analysis its results block shows: the stored one, or for a receipt analysed by an
// older drift check, the one computed afresh.
func headline(pageDir string, e *spec.Experiment) string {
	dir := newestListed(pageDir, e)
	if dir == "" {
		return ""
	}
	var rep driftcheck.Report
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.AnalysisFile), &rep); err != nil || len(rep.Candidates) == 0 {
		return ""
	}
	if rep.SchemaVersion != driftcheck.SchemaVersion {
		// An older drift check's analysis: the page shows the one computed afresh
		// (loaded.Open), and so does its headline.
		d, err := loaded.Load(dir)
		if err != nil {
			return ""
		}
		rep = d.Analysis
	}
	return Headline(e, rep)
}

// Headline returns the first primary lane's effect pooled over collections for the first
// candidate of rep, with its interval, as the page's results table shows it:
// "index-build (cand): -20.7% [-21.3%, -20.1%] (1.26x faster)", or "" when the lane was
// not measured.
func Headline(e *spec.Experiment, rep driftcheck.Report) string {
	if len(rep.Candidates) == 0 {
		return ""
	}
	arm := rep.Candidates[0]
	for _, l := range e.Lanes {
		if l.Role != spec.RolePrimary {
			continue
		}
		for _, s := range rep.Pooled {
			if s.Arm == arm && s.Lane == l.Name {
				return fmt.Sprintf("%s (%s): %s", l.Name, arm, report.Effect(s))
			}
		}
		return ""
	}
	return ""
}

// RenderIndex writes the index table as markdown, or a line saying there are no
// experiments yet: one row per experiment, its number (the first column) linking to its
// page. link maps a page's path to the link target written in the table.
func RenderIndex(w io.Writer, entries []IndexEntry, link func(page string) string) error {
	ew := report.NewErrWriter(w)
	if len(entries) == 0 {
		fmt.Fprintf(ew, "No experiments yet: start one with `flipbench new NNN \"title\"`.\n")
		return ew.Err()
	}
	var rows [][]string
	for _, e := range entries {
		id := fmt.Sprintf("[%03d](%s)", e.ID, link(e.Page))
		if e.Invalid {
			rows = append(rows, []string{id, "(front matter invalid: run flipbench check)", "-", "-", "-", "-"})
			continue
		}
		status := string(e.Status)
		if e.Reanalysed {
			status += " (re-analysed)"
		}
		rows = append(rows, []string{id, e.Title, status, mdtable.OrDash(strings.Join(e.Directions, ", ")), e.Date, mdtable.OrDash(e.Headline)})
	}
	if err := mdtable.Write(ew, []string{"id", "title", "status", "directions", "date", "headline"}, rows); err != nil {
		return err
	}
	return ew.Err()
}

// headlineNote explains the index's headline column.
const headlineNote = "The headline is the first primary lane's effect pooled over collections for the first candidate, " +
	"with its interval, as the page's results table shows it, from the page's newest receipt; negative means the candidate is better."

// Index returns the content of the ledger's index, experiments/README.md, for root.
func Index(root string) ([]byte, error) {
	entries, err := IndexEntries(root)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Experiments\n\n")
	fmt.Fprintf(&buf, "Generated by `flipbench ledger` from the experiment pages in this folder; do not edit it by hand "+
		"(`flipbench check` fails when it is out of date). Newest first. Directions are described in `directions.yaml`. "+
		"%s\n\n", headlineNote)
	err = RenderIndex(&buf, entries, func(page string) string { return filepath.Base(page) })
	return buf.Bytes(), err
}

// WriteIndex regenerates root/experiments/README.md. It reports whether the file changed.
func WriteIndex(root string) (bool, error) {
	data, err := Index(root)
	if err != nil {
		return false, err
	}
	path := filepath.Join(root, filepath.FromSlash(IndexFile))
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	// What a killed finalize or ledger left beside the pages goes first.
	if _, err := owner.RemoveStaleTemps(filepath.Dir(path)); err != nil {
		return false, err
	}
	return true, atomicfile.Write(path, data)
}

// orDash returns s, or "-" when it is empty.
