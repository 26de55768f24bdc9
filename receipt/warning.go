package receipt

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Warning is a problem worth a user's attention, phrased with what to do about it: the
// one shape warnings take from the build, the run, the host, the analysis, the incidence
// suite and the lane metrics to the receipt's footnotes.
type Warning struct {
	// Stage is where it was found: one of the Stage constants.
	Stage string `json:"stage"`
	Text  string `json:"text"`
}

// Stages of a warning.
const (
	StageBuild     = "build"
	StageRun       = "run"
	StageHost      = "host"
	StageAnalysis  = "analysis"
	StageIncidence = "incidence"
	StageMetrics   = "metrics"
)

// String formats the warning as "stage: text".
func (w Warning) String() string { return w.Stage + ": " + w.Text }

// Warnings returns texts as warnings of one stage.
func Warnings(stage string, texts []string) []Warning {
	out := make([]Warning, len(texts))
	for i, t := range texts {
		out[i] = Warning{Stage: stage, Text: t}
	}
	return out
}

// WarningsFile holds the warnings found while a receipt was made that its other files
// cannot show again (a build that ended a killed run's leftovers, a lane that left
// processes running, runs measured again after an interruption), one JSON object per line,
// appended and fsynced.
const WarningsFile = "warnings.jsonl"

// AppendWarnings appends ws to dir's warnings.jsonl and syncs it.
func AppendWarnings(dir string, ws ...Warning) error {
	if len(ws) == 0 {
		return nil
	}
	var b strings.Builder
	for _, w := range ws {
		line, err := json.Marshal(w)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	f, err := os.OpenFile(filepath.Join(dir, WarningsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadWarnings reads dir's warnings.jsonl; a missing file is none, a torn last line (a
// kill during a write) is dropped.
func ReadWarnings(dir string) ([]Warning, error) {
	path := filepath.Join(dir, WarningsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Warning
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var w Warning
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			if i == len(lines)-1 {
				break
			}
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, w)
	}
	return out, nil
}
