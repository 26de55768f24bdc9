package profdiff

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
)

// SchemaVersion is the version of profiles.json.
const SchemaVersion = 1

// Selections: which lanes a run profiles.
const (
	// SelectReproduced profiles the lanes whose pooled verdict is reproduced (faster
	// or slower), the default.
	SelectReproduced = "reproduced"
	// SelectAll profiles every lane.
	SelectAll = "all"
	// SelectNone profiles none.
	SelectNone = "none"
)

// Selections returns the values of --profile-lanes.
func Selections() []string { return []string{SelectReproduced, SelectAll, SelectNone} }

// ValidSelection reports whether s is one of Selections.
func ValidSelection(s string) bool {
	for _, v := range Selections() {
		if s == v {
			return true
		}
	}
	return false
}

// Report is profiles.json: the profiled lanes of a receipt.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Selection says which lanes were profiled: SelectReproduced or SelectAll.
	Selection string `json:"selection"`
	// Base is the base arm's name.
	Base string `json:"base"`
	// Lanes are the profiled lanes, in plan order, for each candidate arm.
	Lanes []Lane `json:"lanes"`
}

// Lane is one lane of one candidate arm, profiled.
type Lane struct {
	Lane string `json:"lane"`
	Arm  string `json:"arm"`
	// Verdict is the lane's pooled verdict when it was profiled.
	Verdict string `json:"verdict"`
	// Runs are the profiled processes, base's first.
	Runs []Run `json:"runs"`
	// Diffs are the differences, one per profile kind both arms wrote (CPU first).
	Diffs []Diff `json:"diffs"`
	// Notes say why a difference is missing (a process failed, a lane wrote no profile).
	Notes []string `json:"notes,omitempty"`
}

// Run is one profiled process: never a measured run, its output is not in raw.jsonl.
type Run struct {
	Arm  string `json:"arm"`
	Kind string `json:"kind"` // CPU or Alloc: what it profiled
	// File is the profile it wrote, relative to the data folder (profiles/...), empty
	// when it wrote none.
	File    string    `json:"file"`
	Command []string  `json:"command"`
	Env     []string  `json:"env,omitempty"` // added to the arm's environment for profiling
	PID     int       `json:"pid"`
	Exit    int       `json:"exit"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Operations is how many operations the process ran (warmup included), which its
	// profile is divided by.
	Operations int `json:"operations"`
	// Error says why the process gave no usable profile.
	Error string `json:"error,omitempty"`
}

// Exists reports whether the receipt data folder dir holds profiles.json.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, receipt.ProfilesFile))
	return err == nil
}

// ReadReport reads profiles.json from dir; a missing file is (nil, nil).
func ReadReport(dir string) (*Report, error) {
	var r Report
	err := receipt.ReadJSON(filepath.Join(dir, receipt.ProfilesFile), &r)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this flipbench reads %d", filepath.Join(dir, receipt.ProfilesFile), r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// PlotName returns the file name of the bar chart of one lane's difference of one kind,
// inside the data folder: "profile-<arm>-<lane>-<kind>.svg".
func PlotName(arm, lane, kind string) string {
	return "profile-" + clean(arm) + "-" + clean(lane) + "-" + kind + ".svg"
}

// ProfileName returns the file name of one arm's profile of one kind for a lane, inside
// Dir: "<arm>-<lane>.<kind>.pprof".
func ProfileName(arm, lane, kind string) string {
	return clean(arm) + "-" + clean(lane) + "." + kind + ".pprof"
}

// clean replaces what does not belong in a file name (a sub-benchmark's "/" or "=") by
// "_".
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Short returns a function's name without its package path's folders:
// "work.step" for "example.com/work/work.step", "sqlite.(*Conn).Prep" for
// "zombiezen.com/go/sqlite.(*Conn).Prep".
func Short(fn string) string {
	// The package path ends at the last slash before the first dot after it; a method's
	// receiver may hold slashes only inside brackets, which Go names do not.
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// signed formats a per-operation difference with its sign: "+2.10ms/op", "-512B/op".
func signed(v float64, unit string) string {
	s := human.Value(v, unit) + "/op"
	if v > 0 {
		s = "+" + s
	}
	return s
}

// perOp formats a per-operation value: "1.05ms/op".
func perOp(v float64, unit string) string { return human.Value(v, unit) + "/op" }

// Summary says in one line where a lane's difference of one kind is: the top flat
// entry, "+2.10ms/op in example.com/work/work.step (flat, 1.05ms/op -> 3.15ms/op)", or
// "" when there is none.
func (d Diff) Summary() string {
	if len(d.Top) == 0 {
		return ""
	}
	return d.entryLine(d.Top[0])
}

// entryLine says one flat entry in a line.
func (d Diff) entryLine(e Entry) string {
	s := fmt.Sprintf("%s in %s (flat, %s -> %s", signed(e.Flat.Delta, d.Unit), e.Function, perOp(e.Flat.Base, d.Unit), perOp(e.Flat.Cand, d.Unit))
	if e.FlatNoise > 0 {
		s += ", sampling ±" + perOp(e.FlatNoise, d.Unit)
	}
	return s + ")"
}

// what names a difference's kind for people.
func what(kind string) string {
	if kind == Alloc {
		return "bytes allocated"
	}
	return "CPU time"
}

// Lines writes a receipt's profile differences for a terminal: per profiled lane and
// kind, a line naming it and the total change, then its top n flat entries, one a line.
func Lines(w io.Writer, r *Report, n int) error {
	if r == nil || len(r.Lanes) == 0 {
		return nil
	}
	ew := mdtable.NewErrWriter(w)
	fmt.Fprintf(ew, "\nWhere it changed: profiles of one more process per arm, per operation, %s -> candidate (flat: the function's own cost; "+
		"a profile counts the whole process, setup included, so its totals can exceed the table's; a function is named when its difference is beyond twice its sampling error):\n", r.Base)
	for _, l := range r.Lanes {
		for _, d := range l.Diffs {
			fmt.Fprintf(ew, "\n%s (%s), %s: %s -> %s in all (%s)\n", l.Lane, l.Verdict, what(d.Kind),
				perOp(d.Total.Base, d.Unit), perOp(d.Total.Cand, d.Unit), signed(d.Total.Delta, d.Unit))
			shown := 0
			for _, e := range d.Top[:min(n, len(d.Top))] {
				if e.Telling() {
					fmt.Fprintf(ew, "  %s\n", d.entryLine(e))
					shown++
				}
			}
			if shown == 0 && len(d.Top) > 0 {
				fmt.Fprintf(ew, "  the profile cannot tell at this sample size: no function's difference is beyond twice its sampling error\n")
			}
		}
		for _, note := range l.Notes {
			fmt.Fprintf(ew, "\n%s: %s\n", l.Lane, note)
		}
	}
	return ew.Err()
}

// Markdown writes the profile section of a page: a line on what it shows, then for every
// profiled lane and kind the top n entries by flat difference and by cumulative
// difference, with each arm's value, and the bar chart when plot returns its link (""
// for none); heading starts each lane's heading line ("### ", "#### "). link returns the
// page's link to a file of the data folder.
func Markdown(w io.Writer, r *Report, heading string, n int, link func(rel string) string) error {
	ew := mdtable.NewErrWriter(w)
	fmt.Fprintf(ew, "After the measured runs, one more process of each arm ran each profiled lane (%s) with profiling on; "+
		"these processes are not part of the measured data. Each arm's profile is divided by the operations its process ran, "+
		"and the difference is the one `go tool pprof -diff_base` shows: per function, candidate minus %s, per operation. "+
		"Flat is the function's own cost, cumulative includes what it calls. "+
		"CPU profiles are sampled every 10ms of CPU time, so a small difference may be sampling noise (its standard error is given); "+
		"allocations are recorded one by one.\n\n", selectionText(r.Selection), r.Base)
	for _, l := range r.Lanes {
		fmt.Fprintf(ew, "%s%s, %s vs %s (%s)\n\n", heading, l.Lane, l.Arm, r.Base, l.Verdict)
		for _, d := range l.Diffs {
			base, cand := runOf(l, r.Base, d.Kind), runOf(l, l.Arm, d.Kind)
			fmt.Fprintf(ew, "**%s**: %s -> %s per operation in all (%s); profiles [%s](%s) (%s, %s) and [%s](%s) (%s, %s); "+
				"`go tool pprof -diff_base=%s %s` shows the difference unnormalised.\n\n",
				capital(what(d.Kind)), perOp(d.Total.Base, d.Unit), perOp(d.Total.Cand, d.Unit), signed(d.Total.Delta, d.Unit),
				base.File, link(base.File), count(int64(d.BaseOps), "operation"), eventsText(d.Kind, d.BaseEvents),
				cand.File, link(cand.File), count(int64(d.CandOps), "operation"), eventsText(d.Kind, d.CandEvents), base.File, cand.File)
			if err := entryTable(ew, d, "flat", d.Top[:min(n, len(d.Top))]); err != nil {
				return err
			}
			fmt.Fprintln(ew)
			if err := entryTable(ew, d, "cumulative", d.TopCum[:min(n, len(d.TopCum))]); err != nil {
				return err
			}
			fmt.Fprintln(ew)
			if len(d.TopCode) > 0 && !slices.Equal(d.TopCode[:min(n, len(d.TopCode))], d.TopCum[:min(n, len(d.TopCum))]) {
				if err := entryTable(ew, d, "cumulative difference, the Go runtime and testing left out as `pprof -hide` does", d.TopCode[:min(n, len(d.TopCode))]); err != nil {
					return err
				}
				fmt.Fprintln(ew)
			}
			if p := link(PlotName(l.Arm, l.Lane, d.Kind)); p != "" {
				fmt.Fprintf(ew, "![%s: %s per operation by function, %s vs %s](%s)\n\n", l.Lane, what(d.Kind), l.Arm, r.Base, p)
			}
		}
		for _, note := range l.Notes {
			fmt.Fprintf(ew, "- %s\n", note)
		}
		if len(l.Notes) > 0 {
			fmt.Fprintln(ew)
		}
	}
	return ew.Err()
}

// entryTable writes the top entries of a difference by flat or cumulative value.
func entryTable(w io.Writer, d Diff, by string, es []Entry) error {
	noise := d.Kind == CPU
	what := by + " difference"
	if strings.Contains(by, " ") {
		what = by
	}
	header := []string{"function (by " + what + ")", "base", "cand", "delta"}
	if noise && by == "flat" {
		header = append(header, "sampling ±")
	}
	var rows [][]string
	for _, e := range es {
		v := e.Flat
		if by != "flat" {
			v = e.Cum
		}
		row := []string{"`" + e.Function + "`", perOp(v.Base, d.Unit), perOp(v.Cand, d.Unit), signed(v.Delta, d.Unit)}
		if noise && by == "flat" {
			row = append(row, perOp(e.FlatNoise, d.Unit))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(w, "No function differs.\n")
		return err
	}
	return mdtable.Write(w, header, rows)
}

// runOf returns the run of arm that profiled kind.
func runOf(l Lane, arm, kind string) Run {
	for _, r := range l.Runs {
		if r.Arm == arm && r.Kind == kind {
			return r
		}
	}
	return Run{}
}

// selectionText says which lanes a selection profiles.
func selectionText(s string) string {
	if s == SelectAll {
		return "every lane, `--profile-lanes all`"
	}
	return "every lane whose pooled verdict is reproduced"
}

// capital puts s's first letter in upper case.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// count writes n with its noun, plural but for one.
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// eventsText says how many events a profile of kind recorded: "12 samples",
// "3400 allocations".
func eventsText(kind string, n int64) string {
	if kind == Alloc {
		return count(n, "allocation")
	}
	return count(n, "sample")
}
