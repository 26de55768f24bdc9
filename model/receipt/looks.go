package receipt

import (
	"path/filepath"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
)

// Stop reasons of a sequential run (Look.Stop).
const (
	StopDecided  = "decided"   // every lane the decision needs is decided
	StopMaxPairs = "max-pairs" // the rule's max-pairs rounds ran
	StopBudget   = "budget"    // the next round would end past the budget
	// StopUndecidable: every lane left cannot be decided within the budget at its noise,
	// and the rule stops such lanes (Sequential.StopUndecidable).
	StopUndecidable = "undecidable"
)

// Look is one look of a sequential run, after a round: how far it got, each lane's pooled
// evidence, and what happens next.
type Look struct {
	// SchemaVersion is LookSchema, set when the look is appended.
	SchemaVersion int `json:"schema_version,omitempty"`
	// Round is the number of rounds measured (pass pairs per collection).
	Round int `json:"round"`
	// Elapsed is the measured wall time of the rounds so far.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Lanes is each lane's pooled evidence for each candidate.
	Lanes []LookLane `json:"lanes"`
	// Pending are the lanes the next round runs; empty when the run stops.
	Pending []string `json:"pending"`
	// Stop is why the run stops after this look (StopDecided, StopMaxPairs, StopBudget,
	// StopUndecidable), or "" when it goes on.
	Stop string `json:"stop,omitempty"`
	// Undecidable are the lanes this look found cannot be decided within the budget at
	// their noise, each named only at the first look that finds it.
	Undecidable []UndecidableLane `json:"undecidable,omitempty"`
	// LastLook, set at the look that fitted the rule to the budget
	// (Sequential.FitBudget), is the round the rule's last look moved to.
	LastLook int `json:"last_look,omitempty"`
	// Remeasure are the passes measured again at the end of this look's round, before
	// the look (every arm's run of the lane's pass, back to back), each because the data
	// so far set a run of it aside as contaminated or its pair as an outlier, a run of it
	// failed, or the host was busy beside it.
	Remeasure []Remeasure `json:"remeasure,omitempty"`
}

// MaxRemeasures is how many times a sequential run measures one lane's pass again: a
// burst that outlasts two more attempts leaves its pair out.
const MaxRemeasures = 2

// Remeasure is a lane's pass that a round's mend measures again before the look.
type Remeasure struct {
	Lane       string `json:"lane"`
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	// Attempt is the attempt the re-measure is (Run.Attempt). Arm is the arm whose run
	// was set aside, with its robust CV and its arm's typical one, or, when Outlier is
	// set, the candidate whose pair with the base lay far from the lane's other pairs, or,
	// when Failed is set, the arm whose run failed (a crash, bad output) with its error.
	Attempt      int     `json:"attempt"`
	Arm          string  `json:"arm"`
	Outlier      bool    `json:"outlier,omitempty"`
	Failed       string  `json:"failed,omitempty"`
	CVPct        float64 `json:"cv_pct"`
	TypicalCVPct float64 `json:"typical_cv_pct"`
	// BusyPct, when set, says the pass is measured again because the host was busy while
	// it ran: other processes used this share of all CPUs over the pass (a burst against
	// the run's quiet passes); Arm is then empty.
	BusyPct float64 `json:"busy_pct,omitempty"`
}

// UndecidableLane is a lane that a look found cannot be decided within the budget at its
// noise: the rounds the run can reach do not bring its MDE to its floor, and its interval
// there would still reach inside the floor.
type UndecidableLane struct {
	Lane string `json:"lane"`
	// Reach is the rounds the run could measure in all at that look, and MaxPairs the
	// rule's most (Reach < MaxPairs: the budget binds).
	Reach    int `json:"reach"`
	MaxPairs int `json:"max_pairs"`
	// MDEPct is the lane's MDE at Reach rounds, FloorPct its floor.
	MDEPct   float64 `json:"mde_pct"`
	FloorPct float64 `json:"floor_pct"`
	// Stopped says the lane is measured no more from the next round on
	// (Sequential.StopUndecidable, for a lane the decision rule does not read).
	Stopped bool `json:"stopped,omitempty"`
}

// LookLane is one lane's pooled evidence for one candidate at a look.
type LookLane struct {
	Lane        string                 `json:"lane"`
	Arm         string                 `json:"arm"`
	Pairs       int                    `json:"pairs"`
	Verdict     driftcheck.LaneVerdict `json:"verdict"`
	EstimatePct float64                `json:"estimate_pct"`
	CILowPct    float64                `json:"ci_low_pct"`
	CIHighPct   float64                `json:"ci_high_pct"`
	MDEPct      float64                `json:"mde_pct"`
}

// ReadLooks reads dir's looks; a missing file is no looks. A torn last line (a kill in the
// middle of a write) is dropped: the look is made again from the data.
func ReadLooks(dir string) ([]Look, error) { return readJSONL[Look](filepath.Join(dir, LooksFile)) }
