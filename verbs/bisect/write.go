package bisect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// LogFile is the file in a bisection's folder that holds its outcome, rewritten after
// every step.
const LogFile = "bisect.json"

// LogSchema is the schema_version of LogFile.
const LogSchema = 1

// Log is what LogFile holds: the request's arguments, to refuse a resume of another
// bisection, and the outcome so far.
type Log struct {
	SchemaVersion int      `json:"schema_version"`
	Good          string   `json:"good_ref"`
	Bad           string   `json:"bad_ref"`
	Package       string   `json:"package"`
	Bench         string   `json:"bench"`
	Benchtime     string   `json:"benchtime"`
	Command       []string `json:"command"`
	Outcome       *Outcome `json:"outcome"`
}

// WriteLog writes l to dir/LogFile, replacing it whole (through a temporary file), so an
// interrupted write leaves the previous one.
func WriteLog(dir string, l Log) error {
	var b strings.Builder
	if err := EncodeLog(&b, l); err != nil {
		return err
	}
	tmp := filepath.Join(dir, LogFile+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, LogFile))
}

// EncodeLog writes l as LogFile holds it, indented and with its schema version: what
// flipbench bisect --json prints on stdout.
func EncodeLog(w io.Writer, l Log) error {
	l.SchemaVersion = LogSchema
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadLog reads dir/LogFile.
func ReadLog(dir string) (Log, error) {
	var l Log
	data, err := os.ReadFile(filepath.Join(dir, LogFile))
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w", filepath.Join(dir, LogFile), err)
	}
	if l.SchemaVersion != LogSchema {
		return l, fmt.Errorf("%s: schema_version %d, this flipbench reads %d", filepath.Join(dir, LogFile), l.SchemaVersion, LogSchema)
	}
	if l.Outcome == nil {
		return l, fmt.Errorf("%s: no outcome", filepath.Join(dir, LogFile))
	}
	return l, nil
}

// CheckResume refuses to resume log with other arguments than want's.
func CheckResume(log, want Log) error {
	var diffs []string
	for _, f := range []struct{ name, was, now string }{
		{"GOOD", log.Good, want.Good}, {"BAD", log.Bad, want.Bad}, {"PACKAGE", log.Package, want.Package},
		{"--bench", log.Bench, want.Bench}, {"--benchtime", log.Benchtime, want.Benchtime},
	} {
		if f.was != f.now {
			diffs = append(diffs, fmt.Sprintf("%s was %q, now %q", f.name, f.was, f.now))
		}
	}
	if len(diffs) > 0 {
		return errors.New("--resume: the bisection there had other arguments: " + strings.Join(diffs, ", "))
	}
	return nil
}

// Write renders an outcome for a terminal: the range and the baseline, one line per step,
// then the answer. rel shortens receipt paths.
func Write(w io.Writer, o *Outcome, rel func(string) string) error {
	if rel == nil {
		rel = func(p string) string { return p }
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bisect: GOOD %s %q .. BAD %s %q, %d first-parent commits, hunting the first %s commit\n",
		o.Good.Short(), o.Good.Subject, o.Bad.Short(), o.Bad.Subject, o.Commits, o.Direction)
	for i, s := range o.Steps {
		b.WriteString(stepLine(i, s, o, rel))
	}
	switch o.Status {
	case StatusRefused:
		fmt.Fprintf(&b, "refused: %s\n", o.Reason)
	case StatusUndecided:
		fmt.Fprintf(&b, "undecided: %s\n", o.Reason)
		if o.LastGood != nil {
			fmt.Fprintf(&b, "so far: the change is after %s and at or before %s\n", o.LastGood.Short(), o.FirstBad.Short())
		}
	case StatusFound:
		first := *o.FirstBad
		fmt.Fprintf(&b, "first %s commit: %s (%d/%d) %q\n", o.Direction, first.Short(), position(o, first), o.Commits, first.Subject)
		if len(o.Suspects) > 1 {
			var names []string
			for _, c := range o.Suspects {
				names = append(names, fmt.Sprintf("%s %q", c.Short(), c.Subject))
			}
			fmt.Fprintf(&b, "  or one of the commits before it that do not build: the change is in one of %s\n", strings.Join(names, ", "))
		}
		if o.StepEffect != nil {
			fmt.Fprintf(&b, "  effect of %s on %s against %s: %s\n", first.Short(), o.Lane, o.LastGood.Short(), StepReason(*o.StepEffect, *o.Total, o.Direction))
		}
		if o.Multiple {
			fmt.Fprintf(&b, "two or more step changes in the range:\n")
			for _, r := range o.MultipleReasons {
				fmt.Fprintf(&b, "  - %s\n", r)
			}
		} else {
			fmt.Fprintf(&b, "one step change: every midpoint measured at GOOD's level or at BAD's, none partway between, and the step is the whole change\n")
		}
	}
	fmt.Fprintf(&b, "%d steps measured beyond GOOD against BAD\n", o.Measured())
	_, err := io.WriteString(w, b.String())
	return err
}

// stepLine is one step of Write: what was compared, the effect and the side.
func stepLine(i int, s Step, o *Outcome, rel func(string) string) string {
	what := fmt.Sprintf("%s (%d/%d) against %s", s.Cand.Short(), s.Position, o.Commits, s.Base.Short())
	var res string
	switch {
	case s.Kind == KindBaseline && len(s.Lanes) > 0:
		var parts []string
		for _, e := range s.Lanes {
			parts = append(parts, fmt.Sprintf("%s %s %s", e.Lane, EffectText(e), e.Verdict))
		}
		res = strings.Join(parts, "; ")
	case s.Side == SideSkipped:
		res = "skipped: " + s.Reason
	case s.Identical:
		res = "identical binaries, nothing measured"
	case s.Effect != nil:
		res = fmt.Sprintf("%s %s", s.Effect.Lane, EffectText(*s.Effect))
	}
	line := fmt.Sprintf("  %d %-8s %s: %s", i, s.Kind, what, res)
	if s.Kind == KindMidpoint && s.Side != SideSkipped {
		line += " -> " + string(s.Side)
	}
	if s.Reused {
		line += " (from the resumed bisection)"
	}
	if s.Receipt != "" {
		line += "\n      receipt: " + rel(s.Receipt)
	}
	return line + "\n"
}

// position is c's 1-based place in the range, or 0.
func position(o *Outcome, c Commit) int {
	for _, s := range o.Steps {
		if s.Cand.Hash == c.Hash {
			return s.Position
		}
	}
	return 0
}
