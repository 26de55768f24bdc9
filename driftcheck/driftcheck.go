package driftcheck

// SchemaVersion is the version of the Report's JSON form (analysis.json, drift --json).
// Version 2 added the lane evidence from pair means (estimate, interval, noise, order
// effect, MDE) and the three-way lane verdicts; version 3 makes a pooled summary
// reproduced only when every collection reproduced it; version 4 spends errors over looks
// (Design), moderates each lane's noise with the run's other lanes, sets contaminated runs
// aside and states what each lane rules out; version 5 tests each collection's replication
// at alpha/2 (the union bound) rather than (alpha/2)^(1/C), which moves collection
// intervals, so a version 4 analysis is not what today's drift check computes; version 6
// reads each run's order, place and predecessor, estimates what they cost (Carryover) and
// corrects the pair means by it; version 7 lets a lane far noisier than its group's prior
// keep its own noise; version 8 gives no interval to a lane whose noise has less than one
// degree of freedom (minBoundedDF); version 10 reads failed and timed-out runs
// (Observation.Failed, TimedOut, AtLeast): a timed-out run with a bound is a censored
// observation that counts in one direction only (censored.go), and Report.Unfinished names
// every run that gave no samples; version 11 reads each run's predecessor as the process
// that ran before it on the machine, in any pass (before: in its own pass only, and a
// pass's first run was fitted as following the base), and names a busy host among the
// reasons a pass was measured again; version 12 gives the pooled summaries the
// Hodges-Lehmann estimate of their pair means (LaneSummary.HodgesLehmannPct); version 13
// judges each collection of a lane whose collections measured with different noise with
// its own noise (collnoise.go: LaneSummary.CollectionNoiseP, NoiseByCollection, and the
// priors of each collection, Prior.Collection).
const SchemaVersion = 13

// Config holds the thresholds and error rates of the drift check. Zero fields take the
// DefaultConfig value, so an unset threshold in a spec means the default.
type Config struct {
	// EffectFloorPct is the smallest effect, in percent, that matters: a lane reproduces
	// only with an estimate beyond it, and is neutral only with an interval inside it.
	// It is a ratio: 3 means a change by a factor of 1.03 either way.
	EffectFloorPct float64 `json:"effect_floor_pct" yaml:"effect-floor-pct,omitempty"`
	// CleanCVPct is the robust CV (percent, raw samples within one process run) above
	// which a pass's flagged side may be contaminated.
	CleanCVPct float64 `json:"clean_cv_pct" yaml:"clean-cv-pct,omitempty"`
	// CVAsymmetry is the ratio flagged CV / clean CV from which the clean side counts as
	// quiet by comparison.
	CVAsymmetry float64 `json:"cv_asymmetry" yaml:"cv-asymmetry,omitempty"`
	// Alpha is the two-sided error rate of one interval (default 0.05): a lane reads
	// reproduced in a direction it does not have at most Alpha/2 of the time.
	Alpha float64 `json:"alpha" yaml:"alpha,omitempty"`
	// Power is the probability at which the minimum detectable effect is stated
	// (default 0.8).
	Power float64 `json:"power" yaml:"power,omitempty"`
	// MinPairs and MaxPairs are a sequential run's stopping rule: a look after every round
	// from MinPairs to MaxPairs (0 and 0 for a fixed protocol, which looks once). Errors are
	// spent over the looks by Spending on the information fraction (round / MaxPairs), so
	// that every verdict holds at the stated error rate whenever the run stops (Design).
	MinPairs int      `json:"min_pairs,omitempty" yaml:"-"`
	MaxPairs int      `json:"max_pairs,omitempty" yaml:"-"`
	Spending Spending `json:"spending,omitempty" yaml:"spending,omitempty"`
	// MaxCalibrationDF is how many degrees of freedom at most a lane's host calibration
	// lends its noise (Lane.Calibration, moderate.go); 0 lends none.
	MaxCalibrationDF float64 `json:"calibration_df,omitempty" yaml:"calibration-df,omitempty"`
	// Design, when set, is the precomputed design of this configuration (NewDesign), for
	// callers that analyse many times; nil computes it.
	Design *Design `json:"-" yaml:"-"`
}

// DefaultConfig returns the default thresholds: a 3% effect floor, an 8% clean CV, a 4x
// CV asymmetry, an error rate of 5% (2.5% each way), MDEs at 80% power and a fixed
// protocol (one look).
func DefaultConfig() Config {
	return Config{EffectFloorPct: 3, CleanCVPct: 8, CVAsymmetry: 4, Alpha: 0.05, Power: 0.8}
}

// Looks returns the number of looks the configuration's rule takes: 1 for a fixed
// protocol, MaxPairs - MinPairs + 1 for a sequential one.
func (c Config) Looks() int {
	if c.MaxPairs == 0 {
		return 1
	}
	return c.MaxPairs - max(c.MinPairs, 1) + 1
}

// Pass orders: forward runs the base first, reverse runs the candidates first.
const (
	OrderForward = "forward"
	OrderReverse = "reverse"
)

// OrderOf returns the order of pass p (1-based within its collection): forward when p
// is odd, reverse when it is even.
func OrderOf(p int) string {
	if p%2 == 0 {
		return OrderReverse
	}
	return OrderForward
}

// Lane describes one measurement.
type Lane struct {
	// Name identifies the lane in observations.
	Name string `json:"name"`
	// HigherIsBetter is set for units such as throughput; the delta's sign is flipped
	// so that negative always means the candidate is better.
	HigherIsBetter bool `json:"higher_is_better"`
	// FloorPct, when positive, replaces Config.EffectFloorPct for this lane.
	FloorPct float64 `json:"floor_pct,omitempty"`
	// Group names the lane's noise group: lanes borrow noise only from lanes of the same
	// group ("" for timed lanes; a counted lane's metric, such as "instructions").
	Group string `json:"group,omitempty"`
	// Calibration, when set, is the lane's noise as a host calibration measured it: a
	// prior for the lane's noise beside the run's other lanes (moderate.go).
	Calibration *CalibratedNoise `json:"calibration,omitempty"`
}

// floorPct returns the lane's effect floor: its own, else the configuration's.
func (l Lane) floorPct(cfg Config) float64 {
	if l.FloorPct > 0 {
		return l.FloorPct
	}
	return cfg.EffectFloorPct
}

// CalibratedNoise is a lane's noise as a host calibration measured it (flipbench
// calibrate), at the run's samples per process.
type CalibratedNoise struct {
	// DeltaPct is the standard deviation of one pass delta's log ratio, times 100.
	DeltaPct float64 `json:"delta_pct"`
	// DF is the degrees of freedom of the calibration's estimate.
	DF float64 `json:"df"`
	// Receipt names the calibration's A/A receipt (calibrate.Lane.Receipt).
	Receipt string `json:"receipt,omitempty"`
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
	// Order is the lane's order in the pass, OrderForward or OrderReverse; empty means
	// OrderOf(Pass). Position is the run's place (1-based) among the lane's runs of the
	// pass; 0 means the arm's place in Base, Candidates (forward) or the reverse. After is
	// the arm of the process that ran just before this one on the machine, of any lane
	// and any pass ("" for the first, or unknown). They let the analysis estimate what a
	// run's place costs (Carryover) and take it out of the arm contrasts.
	Order    string `json:"order,omitempty"`
	Position int    `json:"position,omitempty"`
	After    string `json:"after,omitempty"`
	// Attempt is 0 for a pass's first measurement, and n for the n-th time the lane's
	// pass was measured again (every arm) because a run of it was set aside as
	// contaminated, or its pair as an outlier. Of a lane's pass, the latest attempt is
	// analysed; the runs of the others are reported in Report.SetAside (Remeasured).
	Attempt int `json:"attempt,omitempty"`
	// Failed is why the run gave no samples (receipt.Record.Error: a crash, a timeout,
	// output that does not parse); "" for a run that gave them (empty Samples without it
	// read "no samples"). TimedOut marks a run killed at the protocol's timeout, and
	// AtLeast, when above 0, is the value in the lane's unit that the run's level is known
	// to be at least (receipt.Record.AtLeast): a right-censored run, which enters its
	// pairs in one direction only (censored.go). A failed run, or a timed-out one without
	// a bound, leaves its pass without a delta (a sequential run measures it again);
	// Report.Unfinished names each with what became of its pass.
	Failed   string  `json:"failed,omitempty"`
	TimedOut bool    `json:"timed_out,omitempty"`
	AtLeast  float64 `json:"at_least,omitempty"`
	// Round is the round that measured an attempt above 0 (a sequential run measures a
	// pass again in a later round); 0 means the round of its pass. A lane that stopped at
	// an earlier look is judged with the other lanes' data as that look saw it.
	Round int `json:"round,omitempty"`
	// Descheduled, when set, says why the run is set aside for what the kernel counted: a
	// neighbour took the lane's CPU through most of its samples (the method's
	// Interference rule). It is set aside like a contaminated run (Report.SetAside), and a
	// sequential run measures its pass again.
	Descheduled string `json:"descheduled,omitempty"`
}

// Interference is what the method's interference rule did with one lane's samples in one
// arm (Report.Interference; docs/busy-host.md).
type Interference struct {
	Lane string `json:"lane"`
	Arm  string `json:"arm"`
	// Runs are the arm's good runs of the lane; Samples their samples whose interval the
	// kernel's counts measured, Waited those that waited for a CPU more than MaxWaitShare
	// of their interval.
	Runs    int `json:"runs"`
	Samples int `json:"samples"`
	Waited  int `json:"waited"`
	// SamplesSetAside were left out of their runs, RunsSetAside set aside whole (too few
	// samples left).
	SamplesSetAside int `json:"samples_set_aside"`
	RunsSetAside    int `json:"runs_set_aside"`
	// Finding, when set, says the lane's candidate waits far more often than the base:
	// its own threads waiting for each other, so nothing of the lane was set aside.
	Finding string `json:"finding,omitempty"`
	// Metric is "cpu" when the lane's samples are its on-CPU time per operation (metric
	// cpu, or auto for a lane that never waits); "" for its own values.
	Metric string `json:"metric,omitempty"`
}

// MeasuredRound returns the round that measured the observation.
func (o Observation) MeasuredRound() int {
	if o.Round > 0 {
		return o.Round
	}
	return passRound(o.Pass)
}

// passRound returns the round (pass pair) of pass p, 1-based.
func passRound(p int) int { return (p + 1) / 2 }

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
	// Passes is the number of passes per collection (even, >= 2): the most a lane may
	// have. A pass-pair of a lane with no observation at all (a sequential run that
	// stopped measuring the lane, or has not reached the pair yet) is not reported; one
	// with some observations missing is insufficient, with a warning.
	Passes int `json:"passes"`
	// Observations may be in any order.
	Observations []Observation `json:"observations"`
	// Interference is what the interference rule did with the samples before they became
	// observations, copied into the report (Report.Interference).
	Interference []Interference `json:"interference,omitempty"`
	// Layouts is how many layout builds each arm ran, rotated over the pass pairs
	// (layout.go); 0 or 1: one build per arm.
	Layouts int `json:"layouts,omitempty"`
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

// LaneVerdict is the verdict of one lane for one candidate, in one collection or pooled
// over all of them.
type LaneVerdict string

// Lane verdicts (see the package doc for the rule). A collection's summary is
// reproduced-faster or -slower when its replication test says so, else undecided or
// insufficient; the pooled summary takes every verdict below.
const (
	// LaneReproducedFaster: every collection's interval (at its replication level) lies
	// below 0 and the pooled estimate is at or beyond -floor.
	LaneReproducedFaster LaneVerdict = "reproduced-faster"
	// LaneReproducedSlower: every collection's interval lies above 0 and the pooled
	// estimate is at or beyond +floor.
	LaneReproducedSlower LaneVerdict = "reproduced-slower"
	// LaneNeutral: shown by equivalence: the whole pooled interval lies inside +-floor.
	LaneNeutral LaneVerdict = "neutral"
	// LaneOrderDependent: the effect is not decided, and the order effect's interval
	// excludes 0 with an estimate beyond the floor and larger than the effect: which arm
	// runs first decides the sign of a pass delta. The lane goes on measuring; its pair
	// means cancel the order effect.
	LaneOrderDependent LaneVerdict = "order-dependent"
	// LaneUndecided: the data can neither show an effect nor rule one out at this
	// protocol; the summary says what it rules out, the MDE and about how many more pairs
	// would decide it.
	LaneUndecided LaneVerdict = "undecided"
	// LaneInsufficient: no usable pair, more than half of the pairs lack data, or no
	// noise estimate (one pair in all).
	LaneInsufficient LaneVerdict = "insufficient"
)

// LaneVerdicts returns every lane verdict in a fixed display order.
func LaneVerdicts() []LaneVerdict {
	return []LaneVerdict{LaneReproducedFaster, LaneReproducedSlower, LaneNeutral, LaneOrderDependent, LaneUndecided, LaneInsufficient}
}

// Decided reports whether the verdict settles the lane: reproduced either way or neutral.
func (v LaneVerdict) Decided() bool {
	return v == LaneReproducedFaster || v == LaneReproducedSlower || v == LaneNeutral
}

// Directions of a REPRODUCED pair.
const (
	DirectionFaster = "faster"
	DirectionSlower = "slower"
)

// Report is the result of Analyze. Slices are ordered by candidate (Input.Candidates
// order), collection, lane (Input.Lanes order), then pair or pass. No float field is
// ever NaN or infinite, so a Report always encodes as JSON.
type Report struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Config is the configuration in effect, defaults filled in.
	Config Config `json:"config"`
	// Method is the method the analysis was computed by (absent in analyses of receipts
	// made before methods were recorded).
	Method     *Method  `json:"method,omitempty"`
	Base       string   `json:"base"`
	Candidates []string `json:"candidates"`
	// Collections is the protocol's number of collections.
	Collections int           `json:"collections"`
	Pairs       []Pair        `json:"pairs"`
	Passes      []PassDelta   `json:"passes"`
	Lanes       []LaneSummary `json:"lanes"`
	// Pooled has one summary per candidate and lane over all collections (Collection 0),
	// ordered by candidate, then lane.
	Pooled []LaneSummary `json:"pooled"`
	// SetAside lists the runs set aside as contaminated, with why; their pairs are left out
	// of every statistic (a sequential run measures them again).
	SetAside []SetAside `json:"set_aside"`
	// Unfinished lists every run that gave no samples (failed, or timed out), in the order
	// of SetAside, with what became of its pass: measured again, entered as a censored
	// bound, or left without a delta.
	Unfinished []Unfinished `json:"unfinished"`
	// Priors are the fitted noise priors the lanes borrowed from, per noise group and look.
	Priors []Prior `json:"priors"`
	// Carryover is, for each lane (in lane order), what its runs say about the cost of a
	// run's place in its pass and of the process before it (carryover.go).
	Carryover []Carryover `json:"carryover"`
	// Interference says, per lane and arm, how many samples waited for a CPU and what the
	// method's interference rule set aside (omitted when no interval was measured).
	Interference []Interference `json:"interference,omitempty"`
	// Warnings are problems in the data, each with what to do about it.
	Warnings []string `json:"warnings"`
}

// SetAside is one run left out of the analysis as contaminated: its within-run spread
// is far beyond the lane's typical spread for that arm, as when a neighbour's burst
// disturbs one process. Its pass-pair is left out for the lane and candidate.
type SetAside struct {
	Lane       string `json:"lane"`
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	// CVPct is the run's robust CV and TypicalCVPct the lane's typical one for the arm.
	CVPct        float64 `json:"cv_pct"`
	TypicalCVPct float64 `json:"typical_cv_pct"`
	Reason       string  `json:"reason"`
	// Attempt is the run's Observation.Attempt. Remeasured says a later attempt of the
	// lane's pass replaced it, so its pair is measured, not left out.
	Attempt    int  `json:"attempt,omitempty"`
	Remeasured bool `json:"remeasured,omitempty"`
}

// Unfinished is one run that gave no samples: it failed (a crash, bad output) or timed out.
type Unfinished struct {
	Lane       string `json:"lane"`
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	// Attempt is the run's Observation.Attempt.
	Attempt int `json:"attempt,omitempty"`
	// Error is why it gave no samples (Observation.Failed).
	Error string `json:"error"`
	// TimedOut and AtLeast are the run's (Observation): a timed-out run with a bound is
	// right-censored.
	TimedOut bool    `json:"timed_out,omitempty"`
	AtLeast  float64 `json:"at_least,omitempty"`
	// Censored says its bound entered the pass delta of at least one candidate, which then
	// counts toward Toward only (DirectionSlower when the candidate's run timed out,
	// DirectionFaster when the base's did; the reverse for a higher-is-better lane).
	Censored bool   `json:"censored,omitempty"`
	Toward   string `json:"toward,omitempty"`
	// Remeasured says a later attempt of its lane's pass replaced it.
	Remeasured bool `json:"remeasured,omitempty"`
	// Outcome says what became of its pass, in words.
	Outcome string `json:"outcome"`
}

// Prior is the fitted prior of one noise group's lane variances at one look: lanes whose
// pairs reach Round borrowed D0 degrees of freedom of noise S0Pct (one pass delta, percent
// on the log scale) from the group.
type Prior struct {
	Group string `json:"group"`
	Round int    `json:"round"`
	// Collection is the collection whose lanes' noise the prior was fitted to (for a lane
	// whose collections measure with different noise); 0 for all collections.
	Collection int     `json:"collection,omitempty"`
	Lanes      int     `json:"lanes"`
	S0Pct      float64 `json:"s0_pct"`
	D0         float64 `json:"d0"`
}

// Pair is the verdict of one pass-pair of one lane, for one candidate against the base.
type Pair struct {
	Lane string `json:"lane"`
	// Attempt1 and Attempt2 are the attempts analysed of the pair's passes 2k-1 and 2k
	// (Observation.Attempt).
	Attempt1 int `json:"attempt1,omitempty"`
	Attempt2 int `json:"attempt2,omitempty"`
	// Outlier marks a pair set aside because its pair mean or order effect lies far from
	// the lane's other pairs (SetAside is set too).
	Outlier bool `json:"outlier,omitempty"`
	// Arm is the candidate arm.
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	// Pair k covers passes 2k-1 and 2k of the collection; the lane runs forward in one
	// and in reverse in the other.
	Pair    int     `json:"pair"`
	Verdict Verdict `json:"verdict"`
	// Direction is DirectionFaster or DirectionSlower for a REPRODUCED pair, else empty.
	Direction string `json:"direction,omitempty"`
	// Delta1Pct and Delta2Pct are the forward and reverse pass deltas (negative means
	// the candidate is better); 0 when a pass is not usable.
	Delta1Pct float64 `json:"delta1_pct"`
	Delta2Pct float64 `json:"delta2_pct"`
	// MeanPct is the pair mean m = (d_fwd + d_rev)/2 (on the log scale, shown in
	// percent) less the design's correction AdjustPct: the pair's effect with linear
	// drift, order and the estimated cost of each run's place (Carryover) cancelled.
	// OrderPct is o = (d_fwd - d_rev)/2: its order dependence. All 0 unless both passes
	// are usable; AdjustPct is 0 for two arms back to back in each lane, where the flip
	// cancels a place's cost exactly.
	MeanPct   float64 `json:"mean_pct"`
	OrderPct  float64 `json:"order_pct"`
	AdjustPct float64 `json:"adjust_pct,omitempty"`
	// MaterialPct is the |delta| from which a pass counts as material in this pair's
	// lane: the larger of the floor and the lane's noise scaled so that an A/A pair
	// reads REPRODUCED about 5% of the time (see the package doc).
	MaterialPct float64 `json:"material_pct"`
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
	// SetAside marks a pair left out of the lane's statistics because a run of it was set
	// aside as contaminated (Report.SetAside).
	SetAside bool `json:"set_aside,omitempty"`
	// Censored1 and Censored2 are the passes' PassDelta.Bound: BoundAtLeast or
	// BoundAtMost for a pass whose delta is only bounded (a run of it timed out), else "".
	Censored1 string `json:"censored1,omitempty"`
	Censored2 string `json:"censored2,omitempty"`
}

// PassDelta is the comparison of one candidate against the base in one pass of one lane.
type PassDelta struct {
	Lane       string `json:"lane"`
	Arm        string `json:"arm"`
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	// Order is the lane's order in the pass: OrderForward or OrderReverse.
	Order string `json:"order"`
	// BaseN and CandN count the finite samples on each side.
	BaseN int `json:"base_n"`
	CandN int `json:"cand_n"`
	// Usable is false when a side is missing or has fewer than 2 samples; Note then says
	// which, and the numbers below are 0 where undefined. Note also marks a ratio capped
	// because one median is 0.
	Usable     bool    `json:"usable"`
	Note       string  `json:"note,omitempty"`
	BaseMedian float64 `json:"base_median"`
	CandMedian float64 `json:"cand_median"`
	// DeltaPct is the change of the candidate's median against the base's in percent,
	// sign flipped for higher-is-better lanes (negative is better). LogRatio is the same
	// comparison on the log scale (ln(cand/base), or ln(base/cand) for higher-is-better),
	// which the lane statistics use.
	DeltaPct  float64 `json:"delta_pct"`
	LogRatio  float64 `json:"log_ratio"`
	BaseCVPct float64 `json:"base_cv_pct"`
	CandCVPct float64 `json:"cand_cv_pct"`
	// Flagged is "candidate" when DeltaPct >= 0, else "base": the side tested for
	// contamination.
	Flagged      string `json:"flagged,omitempty"`
	Contaminated bool   `json:"contaminated"`
	// HostBlip marks a delta far outside the lane's pass-to-pass spread.
	HostBlip bool `json:"host_blip"`
	// Bound is set when a run of the pass timed out and its bound stands in for its
	// median (censored.go): BoundAtLeast when DeltaPct is a lower bound of the pass's delta
	// (the candidate timed out, lower-is-better), BoundAtMost when it is an upper bound
	// (the base timed out). Censored names the side that timed out (SideBase,
	// SideCandidate).
	Bound    string `json:"bound,omitempty"`
	Censored string `json:"censored,omitempty"`
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

// LaneSummary is one lane's evidence for one candidate: in one collection, or pooled over
// all collections (Collection 0).
type LaneSummary struct {
	Lane string `json:"lane"`
	// Arm is the candidate arm.
	Arm string `json:"arm"`
	// Collection is 1-based, or 0 for the summary pooled over collections.
	Collection int `json:"collection"`
	// FloorPct is the effect floor the verdict used.
	FloorPct float64 `json:"floor_pct"`
	// HigherIsBetter is the lane's: percentages are of a higher-is-better unit, sign
	// flipped.
	HigherIsBetter bool `json:"higher_is_better"`

	// Evidence from pair means. EstimatePct is the effect (mean of the pair means, shown
	// in percent; negative is better), CILowPct..CIHighPct its interval at Confidence.
	// Bounded is false when there is no interval (no noise estimate); the interval
	// fields are 0 then.
	EstimatePct float64 `json:"estimate_pct"`
	CILowPct    float64 `json:"ci_low_pct"`
	CIHighPct   float64 `json:"ci_high_pct"`
	Bounded     bool    `json:"bounded"`
	Confidence  float64 `json:"confidence"`
	// OrderEffectPct is the mean order effect (forward minus reverse delta, halved), with
	// its interval OrderLowPct..OrderHighPct at the same confidence.
	OrderEffectPct float64 `json:"order_effect_pct"`
	OrderLowPct    float64 `json:"order_low_pct"`
	OrderHighPct   float64 `json:"order_high_pct"`
	// NoisePct is the measured noise of one pass delta (its standard deviation, from the
	// spread of pair means and order effects around their means, pooled over the lane's
	// collections), BetweenPct the part of it that comes from process-to-process
	// variation, and WithinCVPct the median robust CV of the raw samples within one run.
	NoisePct    float64 `json:"noise_pct"`
	BetweenPct  float64 `json:"between_pct"`
	WithinCVPct float64 `json:"within_cv_pct"`
	// DF is the degrees of freedom of the lane's own noise estimate, DFUsed those of the
	// noise the interval uses (moderated with the run's other lanes: DF plus the prior's),
	// and OwnNoisePct the lane's own estimate before moderation. EstimateLog and SELog are
	// the estimate and its standard error on the log scale, Crit the interval's critical
	// value (t scale) and Tail its nominal one-sided error at this look (Design), so that
	// an interval at another level can be derived (IntervalPct). CalibrationDF are the
	// degrees of freedom the host calibration lent (included in DFUsed; 0 when it lent
	// none, or the lane's own noise was far above it).
	DF            int     `json:"df"`
	DFUsed        float64 `json:"df_used"`
	CalibrationDF float64 `json:"calibration_df,omitempty"`
	OwnNoisePct   float64 `json:"own_noise_pct"`
	EstimateLog   float64 `json:"estimate_log"`
	SELog         float64 `json:"se_log"`
	Crit          float64 `json:"crit"`
	Tail          float64 `json:"tail"`
	// NoWorseThanPct and NoBetterThanPct are what the interval rules out, one side each: a
	// change worse (slower) than NoWorseThanPct and better than NoBetterThanPct (the
	// interval's ends; 0 when unbounded).
	NoWorseThanPct  float64 `json:"no_worse_than_pct"`
	NoBetterThanPct float64 `json:"no_better_than_pct"`
	// MDEPct is the minimum detectable effect of the decision rule at this summary's
	// pairs (the smallest effect it reproduces with probability Config.Power: every
	// collection's replication test at this look and the estimate past the floor), and
	// MDEMaxPct the same at the rule's last look (MaxPairs). PairsNeeded is about how many
	// usable pairs per collection would decide the lane, either way, with that
	// probability if its effect were its estimate (its current count when they already
	// would; 100000 for an effect too close to the floor; -1 when no estimate is possible).
	MDEPct      float64 `json:"mde_pct"`
	MDEMaxPct   float64 `json:"mde_max_pct"`
	PairsNeeded int     `json:"pairs_needed"`
	// Round is the look the summary was judged at: the most pairs per collection the lane
	// measured (a sequential run's round).
	Round int `json:"round"`
	// HeterogeneityP (pooled summaries) is the p-value of Cochran's Q test that the
	// collections measured one effect (1 with one collection); below 0.001 the collections
	// disagree and the reason names them.
	HeterogeneityP float64 `json:"heterogeneity_p"`
	// SetAside counts the pairs set aside because a run of theirs was contaminated (see
	// Report.SetAside); they count neither as usable nor as missing.
	SetAside int `json:"set_aside"`
	// CensoredSlower and CensoredFaster count the usable passes whose delta is only a
	// bound because a run of them timed out: at least (the candidate's run) and at most
	// (the base's). A summary with CensoredSlower passes is never reproduced faster or
	// neutral and rules out no regression (NoWorseThanPct 0, UpperBelow false); one with
	// CensoredFaster passes is never reproduced slower or neutral (censored.go).
	CensoredSlower int `json:"censored_slower,omitempty"`
	CensoredFaster int `json:"censored_faster,omitempty"`

	// MedianDeltaPct and MeanDeltaPct summarise the usable per-pass deltas.
	MedianDeltaPct float64 `json:"median_delta_pct"`
	MeanDeltaPct   float64 `json:"mean_delta_pct"`
	// PooledDeltaPct compares the pooled medians (Cand against Base), sign as DeltaPct.
	PooledDeltaPct float64 `json:"pooled_delta_pct"`
	// HodgesLehmannPct is, in the pooled summary, the Hodges-Lehmann estimate of the pair
	// means (the median of their pairwise averages): a centre that a few far pairs barely
	// move, beside the mean the interval is built on (0 elsewhere; censored pairs left out).
	HodgesLehmannPct float64 `json:"hodges_lehmann_pct,omitempty"`
	// LayoutSharePct is, in the pooled summary of a run of several layout builds per arm,
	// the share of the pair means' variance the layouts explain (layout.go): a lower
	// bound of what code layout does to the lane, since only the functions' order moves
	// (0 elsewhere).
	LayoutSharePct float64 `json:"layout_share_pct,omitempty"`
	// CollectionNoiseP is, in the pooled summary, the p-value of Bartlett's test that the
	// lane's collections measured with equal noise (0 without a test: fewer than two
	// collections with two pairs); below 0.01 NoiseByCollection is set and each
	// collection was judged with its own noise, the pooled estimate with the variance they
	// give it (methodology: noise that differs between collections).
	CollectionNoiseP  float64 `json:"collection_noise_p,omitempty"`
	NoiseByCollection bool    `json:"noise_by_collection,omitempty"`
	// Faster counts usable passes with a negative delta, out of Passes usable passes.
	Faster int `json:"faster"`
	Passes int `json:"passes"`
	// Pairs is the number of pass-pairs measured (at least one run observed) and
	// UsablePairs those with both passes usable; Counts has every verdict.
	Pairs       int             `json:"pairs"`
	UsablePairs int             `json:"usable_pairs"`
	Counts      map[Verdict]int `json:"counts"`
	// ReproducedFaster and ReproducedSlower split Counts[Reproduced] by direction.
	ReproducedFaster int `json:"reproduced_faster"`
	ReproducedSlower int `json:"reproduced_slower"`
	// P is the Mann-Whitney U p-value over the pooled samples of the usable passes
	// (1 when the test cannot be made). It counts samples as independent, which the
	// samples of one process are not: it is shown for comparison with benchstat, and no
	// verdict uses it.
	P    float64 `json:"p"`
	Base Summary `json:"base"`
	Cand Summary `json:"cand"`
	// HostBlips lists the passes (1-based within the collection) flagged as host blips.
	HostBlips []int       `json:"host_blips"`
	Verdict   LaneVerdict `json:"verdict"`
	Reason    string      `json:"reason"`
}
