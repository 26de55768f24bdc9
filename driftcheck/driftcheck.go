package driftcheck

// Config holds the thresholds of the drift check. Zero fields take the DefaultConfig
// value, so an unset threshold in a spec means the default.
type Config struct {
	// EffectFloorPct is the smallest |delta%| of one pass that counts as material.
	EffectFloorPct float64 `json:"effect_floor_pct"`
	// CleanCVPct is the robust CV (percent, raw samples within one process run) above
	// which a pass's flagged side may be contaminated.
	CleanCVPct float64 `json:"clean_cv_pct"`
	// CVAsymmetry is the ratio flagged CV / clean CV from which the clean side counts as
	// quiet by comparison.
	CVAsymmetry float64 `json:"cv_asymmetry"`
}

// DefaultConfig returns the default thresholds: a 3% effect floor, an 8% clean CV and a
// 4x CV asymmetry.
func DefaultConfig() Config {
	return Config{EffectFloorPct: 3, CleanCVPct: 8, CVAsymmetry: 4}
}

// Lane roles, as written in an experiment spec.
const (
	RolePrimary   = "primary"
	RoleSecondary = "secondary"
	RoleGuard     = "guard"
	RoleControl   = "control"
)

// Expected directions of a lane, as written in an experiment spec.
const (
	ExpectFaster  = "faster"
	ExpectSlower  = "slower"
	ExpectNeutral = "neutral"
)

// Pass orders: forward runs the base first, reverse runs the candidates first.
const (
	OrderForward = "forward"
	OrderReverse = "reverse"
)

// Lane describes one measurement.
type Lane struct {
	// Name identifies the lane in observations.
	Name string `json:"name"`
	// Role is RolePrimary, RoleSecondary, RoleGuard, RoleControl or empty.
	Role string `json:"role"`
	// HigherIsBetter is set for units such as throughput; the delta's sign is flipped
	// so that negative always means the candidate is better.
	HigherIsBetter bool `json:"higher_is_better"`
	// Expect is ExpectFaster, ExpectSlower, ExpectNeutral or empty. Analyze only carries
	// it through; the decision rule reads it.
	Expect string `json:"expect,omitempty"`
}

// Observation is the raw samples of one process run: one lane of one arm in one pass.
type Observation struct {
	// Collection is 1-based.
	Collection int `json:"collection"`
	// Pass is 1-based within the collection; odd passes run forward (base first), even
	// passes in reverse.
	Pass int `json:"pass"`
	// Lane and Arm name a lane of Input.Lanes and Input.Base or one of Input.Candidates.
	Lane string `json:"lane"`
	Arm  string `json:"arm"`
	// Samples are the recorded values in the lane's unit, warmup excluded. An empty
	// slice records a failed run.
	Samples []float64 `json:"samples"`
}

// Input is everything Analyze needs: the protocol and the observations.
type Input struct {
	// Base is the arm every candidate is compared against.
	Base string `json:"base"`
	// Candidates are the other arms, in report order.
	Candidates []string `json:"candidates"`
	// Lanes are the lanes, in report order.
	Lanes []Lane `json:"lanes"`
	// Collections is the number of collections (>= 1).
	Collections int `json:"collections"`
	// Passes is the number of passes per collection (even, >= 2).
	Passes int `json:"passes"`
	// Observations may be in any order; a missing one becomes an insufficient pair
	// and a warning.
	Observations []Observation `json:"observations"`
}

// Verdict is the verdict of one pass-pair.
type Verdict string

// Pass-pair verdicts, in the order the rules are tried (see the package doc).
const (
	Insufficient   Verdict = "insufficient"
	DriftSuspected Verdict = "drift-suspected"
	Reproduced     Verdict = "REPRODUCED"
	OneSided       Verdict = "one-sided"
	Neutral        Verdict = "neutral"
)

// Verdicts returns every pass-pair verdict in a fixed display order.
func Verdicts() []Verdict {
	return []Verdict{Reproduced, DriftSuspected, OneSided, Neutral, Insufficient}
}

// LaneVerdict is the verdict of one lane for one candidate in one collection.
type LaneVerdict string

// Lane verdicts (see the package doc for the rule).
const (
	// LaneReproducedFaster: most pairs REPRODUCED faster, none slower, and the median
	// pass delta is at or beyond -floor.
	LaneReproducedFaster LaneVerdict = "reproduced-faster"
	// LaneReproducedSlower: most pairs REPRODUCED slower, none faster, and the median
	// pass delta is at or beyond +floor.
	LaneReproducedSlower LaneVerdict = "reproduced-slower"
	// LaneDrift: at least half of the usable pairs are drift-suspected.
	LaneDrift LaneVerdict = "drift"
	// LaneNeutral: the median pass delta is within the floor.
	LaneNeutral LaneVerdict = "neutral"
	// LaneMixed: the median pass delta is material but the pairs do not reproduce it
	// in one direction.
	LaneMixed LaneVerdict = "mixed"
	// LaneInsufficient: more than half of the pairs lack data.
	LaneInsufficient LaneVerdict = "insufficient"
)

// Directions of a REPRODUCED pair.
const (
	DirectionFaster = "faster"
	DirectionSlower = "slower"
)

// Report is the result of Analyze. Slices are ordered by candidate (Input.Candidates
// order), collection, lane (Input.Lanes order), then pair or pass. No float field is
// ever NaN or infinite, so a Report always encodes as JSON.
type Report struct {
	// Config is the configuration in effect, defaults filled in.
	Config     Config        `json:"config"`
	Base       string        `json:"base"`
	Candidates []string      `json:"candidates"`
	Pairs      []Pair        `json:"pairs"`
	Passes     []PassDelta   `json:"passes"`
	Lanes      []LaneSummary `json:"lanes"`
	// Warnings are problems in the data, each with what to do about it.
	Warnings []string `json:"warnings"`
}

// Pair is the verdict of one pass-pair of one lane, for one candidate against the base.
type Pair struct {
	Lane string `json:"lane"`
	// Arm is the candidate arm.
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	// Pair k covers passes 2k-1 (forward) and 2k (reverse) of the collection.
	Pair    int     `json:"pair"`
	Verdict Verdict `json:"verdict"`
	// Direction is DirectionFaster or DirectionSlower for a REPRODUCED pair, else empty.
	Direction string `json:"direction,omitempty"`
	// Delta1Pct and Delta2Pct are the forward and reverse pass deltas (negative means
	// the candidate is better); 0 when a pass is not usable.
	Delta1Pct float64 `json:"delta1_pct"`
	Delta2Pct float64 `json:"delta2_pct"`
	// Reason says what happened, with the numbers.
	Reason string `json:"reason"`
	// BaseCV1Pct ... CandCV2Pct are each side's robust CV in the two passes.
	BaseCV1Pct float64 `json:"base_cv1_pct"`
	CandCV1Pct float64 `json:"cand_cv1_pct"`
	BaseCV2Pct float64 `json:"base_cv2_pct"`
	CandCV2Pct float64 `json:"cand_cv2_pct"`
	// Usable1 and Usable2 say whether each pass had enough data for a delta.
	Usable1 bool `json:"usable1"`
	Usable2 bool `json:"usable2"`
	// Contaminated1 and Contaminated2 report rule 2 for each pass.
	Contaminated1 bool `json:"contaminated1"`
	Contaminated2 bool `json:"contaminated2"`
}

// PassDelta is the comparison of one candidate against the base in one pass of one lane.
type PassDelta struct {
	Lane       string `json:"lane"`
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	// Order is OrderForward (odd pass) or OrderReverse (even pass).
	Order string `json:"order"`
	// BaseN and CandN count the finite samples on each side.
	BaseN int `json:"base_n"`
	CandN int `json:"cand_n"`
	// Usable is false when a side is missing, has fewer than 2 samples or a zero
	// median; Note then says which, and the numbers below are 0 where undefined.
	Usable     bool    `json:"usable"`
	Note       string  `json:"note,omitempty"`
	BaseMedian float64 `json:"base_median"`
	CandMedian float64 `json:"cand_median"`
	DeltaPct   float64 `json:"delta_pct"`
	BaseCVPct  float64 `json:"base_cv_pct"`
	CandCVPct  float64 `json:"cand_cv_pct"`
	// Flagged is "candidate" when DeltaPct >= 0, else "base": the side tested for
	// contamination.
	Flagged      string `json:"flagged,omitempty"`
	Contaminated bool   `json:"contaminated"`
	// HostBlip marks a delta far outside the lane's pass-to-pass spread.
	HostBlip bool `json:"host_blip"`
}

// Sides of a pass, as named in PassDelta.Flagged.
const (
	SideBase      = "base"
	SideCandidate = "candidate"
)

// Summary is a pooled median with its confidence interval.
type Summary struct {
	// N is the number of pooled samples.
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// Lo and Hi bound the confidence interval when Bounded; with too few samples the
	// interval is unbounded, Bounded is false and Lo and Hi are 0.
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Bounded bool    `json:"bounded"`
	// Confidence is the interval's actual confidence level (>= 0.95).
	Confidence float64 `json:"confidence"`
}

// LaneSummary pools one lane's passes for one candidate in one collection.
type LaneSummary struct {
	Lane string `json:"lane"`
	// Arm is the candidate arm.
	Arm    string `json:"arm"`
	Role   string `json:"role"`
	Expect string `json:"expect,omitempty"`
	// Collection is 1-based.
	Collection int `json:"collection"`
	// MedianDeltaPct and MeanDeltaPct summarise the usable per-pass deltas.
	MedianDeltaPct float64 `json:"median_delta_pct"`
	MeanDeltaPct   float64 `json:"mean_delta_pct"`
	// PooledDeltaPct compares the pooled medians (Cand against Base), sign as DeltaPct.
	PooledDeltaPct float64 `json:"pooled_delta_pct"`
	// Faster counts usable passes with a negative delta, out of Passes usable passes.
	Faster int `json:"faster"`
	Passes int `json:"passes"`
	// Pairs is the number of pass-pairs in the collection; Counts has every verdict.
	Pairs  int             `json:"pairs"`
	Counts map[Verdict]int `json:"counts"`
	// ReproducedFaster and ReproducedSlower split Counts[Reproduced] by direction.
	ReproducedFaster int `json:"reproduced_faster"`
	ReproducedSlower int `json:"reproduced_slower"`
	// P is the Mann-Whitney U p-value over the pooled samples of the usable passes
	// (1 when the test cannot be made).
	P    float64 `json:"p"`
	Base Summary `json:"base"`
	Cand Summary `json:"cand"`
	// HostBlips lists the passes (1-based within the collection) flagged as host blips.
	HostBlips []int       `json:"host_blips"`
	Verdict   LaneVerdict `json:"verdict"`
	Reason    string      `json:"reason"`
}
