package receipt

import (
	"path/filepath"
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
	StageMerge     = "merge"
	// StageBenchmark is a lane whose samples look like a Go benchmark given too few
	// iterations (report.BenchtimeWarnings).
	StageBenchmark = "benchmark"
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

// ReadWarnings reads dir's warnings.jsonl; a missing file is none, a torn last line (a
// kill during a write) is dropped.
func ReadWarnings(dir string) ([]Warning, error) {
	return readJSONL[Warning](filepath.Join(dir, WarningsFile))
}
