package compare

import (
	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
)

// SchemaVersion is the version of flipbench compare --json's output (docs/json.md): the
// version a consumer checks before reading the fields.
const SchemaVersion = 1

// Result is one package's comparison as flipbench compare --json writes it: what the
// table shows, as numbers.
type Result struct {
	Package string `json:"package"`
	// Receipt is the receipt page of the run.
	Receipt string `json:"receipt"`
	// Summary is the table's one-line summary (Summary); Level the level of the lanes'
	// intervals, valid at every look ("90%", Level).
	Summary string `json:"summary"`
	Level   string `json:"level"`
	// Slower names the lanes that reproduced slower (what --fail-on slower fails on).
	Slower []string     `json:"slower"`
	Lanes  []LaneResult `json:"lanes"`
	// FailedRuns counts the runs that failed (exit 1).
	FailedRuns int `json:"failed_runs"`
	// Identical is set when base and candidate binaries were identical and nothing was
	// measured (the other fields are then empty).
	Identical bool `json:"identical,omitempty"`
}

// LaneResult is one lane of a comparison: each arm's value, the effect pooled over the
// collections with its interval, and the verdict with what it rules out.
type LaneResult struct {
	Lane string `json:"lane"`
	Role string `json:"role"`
	Unit string `json:"unit"`
	// Base and Cand are each arm's median over its runs of each run's median, with its
	// interval (driftcheck.Summary).
	Base driftcheck.Summary `json:"base"`
	Cand driftcheck.Summary `json:"candidate"`
	// EstimatePct, CILowPct and CIHighPct are the effect (positive is slower) and its
	// interval at the result's level; Bounded is false when there is no interval yet.
	EstimatePct float64 `json:"estimate_pct"`
	CILowPct    float64 `json:"ci_low_pct"`
	CIHighPct   float64 `json:"ci_high_pct"`
	Bounded     bool    `json:"bounded"`
	// LookConfidence is the level of this lane's interval at the look that judged it
	// alone (0.984): higher than the result's level, which holds at every look at once.
	LookConfidence float64 `json:"look_confidence,omitempty"`
	// Verdict is the lane's verdict (driftcheck.LaneVerdict); RuledOut what an undecided
	// lane's interval rules out ("no regression beyond +2.8%"), empty otherwise.
	Verdict  string `json:"verdict"`
	RuledOut string `json:"ruled_out,omitempty"`
	// Pairs is the usable pass pairs over all collections; MDEPct the smallest effect the
	// lane resolves at its noise; FloorPct its effect floor.
	Pairs    int     `json:"pairs"`
	MDEPct   float64 `json:"mde_pct"`
	FloorPct float64 `json:"floor_pct"`
	// Note is what the table's note column says of the lane (Note), empty for none.
	Note string `json:"note,omitempty"`
	// BytesPerOp and AllocsPerOp are the medians of base and candidate (go test
	// -benchmem), when the lane reported them.
	BytesPerOp  *[2]float64 `json:"bytes_per_op,omitempty"`
	AllocsPerOp *[2]float64 `json:"allocs_per_op,omitempty"`
}

// JSON returns the comparison of a receipt as compare --json writes it, for the package
// pkg whose receipt page is page and whose failed runs number failed.
func JSON(d *loaded.Receipt, pkg, page string, failed int) Result {
	rows := Rows(d)
	out := Result{Package: pkg, Receipt: page, Summary: Summary(rows), Level: Level(d.Analysis), Slower: append([]string{}, Slower(d)...),
		Lanes: []LaneResult{}, FailedRuns: failed}
	for _, r := range rows {
		e := r.Effect
		l := LaneResult{Lane: r.Lane, Role: string(r.Role), Unit: r.Unit, Base: r.Base, Cand: r.Cand,
			EstimatePct: e.EstimatePct, CILowPct: e.CILowPct, CIHighPct: e.CIHighPct, Bounded: e.Bounded, LookConfidence: e.Confidence,
			Verdict: string(e.Verdict), Pairs: e.UsablePairs, MDEPct: e.MDEPct, FloorPct: e.FloorPct, Note: Note(r)}
		if e.Verdict == driftcheck.LaneUndecided {
			l.RuledOut = RuledOut(e)
		}
		if v, ok := r.Memory["B/op"]; ok {
			l.BytesPerOp = &v
		}
		if v, ok := r.Memory["allocs/op"]; ok {
			l.AllocsPerOp = &v
		}
		out.Lanes = append(out.Lanes, l)
	}
	return out
}

// Slower names the lanes of a receipt that reproduced slower.
func Slower(d *loaded.Receipt) []string {
	var out []string
	for _, r := range Rows(d) {
		if r.Effect.Verdict == driftcheck.LaneReproducedSlower {
			out = append(out, r.Lane)
		}
	}
	return out
}
