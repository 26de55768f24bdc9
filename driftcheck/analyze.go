package driftcheck

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/flipbench/flipbench/internal/human"
)

// minSamples is the fewest samples per side for a usable pass.
const minSamples = 2

// fewSamples is the sample count per run below which Analyze warns.
const fewSamples = 6

// maxRuns bounds the protocol size Analyze accepts, so a corrupt plan cannot ask it to
// allocate without limit.
const maxRuns = 10_000_000

// confidence is the confidence level of pooled medians.
const confidence = 0.95

// maxLogRatio caps a pass's log ratio when one median is 0 (a ratio of 0 or infinity):
// a factor of a million either way.
var maxLogRatio = math.Log(1e6)

// blipSigmas is how many robust standard deviations of a lane's pass deltas a pass must
// lie from their median to be flagged as a host blip: far enough that the noise of a
// busy machine does not flag a pass in every lane.
const blipSigmas = 5

// contaminationReach is how many flagged-side CVs a contaminated pass's delta may be: a
// run disturbed by interference is slower by about as much as its samples spread, not by
// many times that.
const contaminationReach = 2

// run is one observation, cleaned: finite values only, sorted, with their statistics.
type run struct {
	present  bool
	forward  bool      // the lane ran in the forward order in this pass
	pos      int       // place among the lane's runs in the pass, 0-based
	after    int       // arm index of the process before it in the pass; -1 none or unknown
	setAside bool      // contaminated: left out of the analysis
	desched  string    // Observation.Descheduled: set aside for what the kernel counted
	bound    float64   // a timed-out run's bound (Observation.AtLeast); 0 for none
	values   []float64 // finite samples, sorted
	median   float64   // valid when len(values) >= 1
	cvPct    float64   // valid when len(values) >= 2 and median != 0
}

// layout indexes runs by collection, pass, lane and arm (all 0-based).
type layout struct {
	collections, passes, lanes, arms int
}

func (l layout) at(c, p, lane, arm int) int {
	return ((c*l.passes+p)*l.lanes+lane)*l.arms + arm
}

// WithDefaults returns the configuration with every unset threshold, error rate and the
// spending function filled with DefaultConfig's, as Analyze reads them.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.EffectFloorPct == 0 {
		c.EffectFloorPct = d.EffectFloorPct
	}
	if c.CleanCVPct == 0 {
		c.CleanCVPct = d.CleanCVPct
	}
	if c.CVAsymmetry == 0 {
		c.CVAsymmetry = d.CVAsymmetry
	}
	if c.Alpha == 0 {
		c.Alpha = d.Alpha
	}
	if c.Power == 0 {
		c.Power = d.Power
	}
	if c.Spending == "" {
		c.Spending = DefaultSpending
	}
	return c
}

// resolve fills zero fields with defaults and validates the result.
func (c Config) resolve() (Config, error) {
	c = c.WithDefaults()
	if c.MaxPairs > 0 && c.MinPairs == 0 {
		c.MinPairs = 1
	}
	switch {
	case !finite(c.EffectFloorPct) || c.EffectFloorPct < 0:
		return c, fmt.Errorf("config: effect_floor_pct %v: want a positive number", c.EffectFloorPct)
	case !finite(c.CleanCVPct) || c.CleanCVPct < 0:
		return c, fmt.Errorf("config: clean_cv_pct %v: want a positive number", c.CleanCVPct)
	case !finite(c.CVAsymmetry) || c.CVAsymmetry < 1:
		return c, fmt.Errorf("config: cv_asymmetry %v: want a ratio >= 1", c.CVAsymmetry)
	case !(c.Alpha > 0 && c.Alpha < 1):
		return c, fmt.Errorf("config: alpha %v: want a probability between 0 and 1", c.Alpha)
	case !(c.Power > 0 && c.Power < 1):
		return c, fmt.Errorf("config: power %v: want a probability between 0 and 1", c.Power)
	case c.MinPairs < 0 || c.MaxPairs < 0 || c.MaxPairs > 100_000 || (c.MaxPairs > 0 && c.MinPairs > c.MaxPairs) || (c.MaxPairs == 0 && c.MinPairs != 0):
		return c, fmt.Errorf("config: min_pairs %d, max_pairs %d: want 1 <= min <= max <= 100000, or both 0 for a fixed protocol", c.MinPairs, c.MaxPairs)
	case !c.Spending.valid():
		return c, fmt.Errorf("config: spending %q: want one of %v", c.Spending, Spendings())
	}
	return c, nil
}

// validate checks the protocol part of in and returns the arm and lane indexes.
func validate(in Input) (arms, lanes map[string]int, err error) {
	if in.Base == "" {
		return nil, nil, errors.New("base arm: empty name")
	}
	if len(in.Candidates) == 0 {
		return nil, nil, errors.New("no candidate arms")
	}
	arms = map[string]int{in.Base: 0}
	for i, c := range in.Candidates {
		if c == "" {
			return nil, nil, fmt.Errorf("candidates[%d]: empty name", i)
		}
		if _, dup := arms[c]; dup {
			return nil, nil, fmt.Errorf("candidates[%d]: arm %q listed twice", i, c)
		}
		arms[c] = i + 1
	}
	if len(in.Lanes) == 0 {
		return nil, nil, errors.New("no lanes")
	}
	lanes = make(map[string]int, len(in.Lanes))
	for i, l := range in.Lanes {
		if l.Name == "" {
			return nil, nil, fmt.Errorf("lanes[%d]: empty name", i)
		}
		if _, dup := lanes[l.Name]; dup {
			return nil, nil, fmt.Errorf("lanes[%d]: lane %q listed twice", i, l.Name)
		}
		if !finite(l.FloorPct) || l.FloorPct < 0 {
			return nil, nil, fmt.Errorf("lane %q: floor_pct %v: want a positive number", l.Name, l.FloorPct)
		}
		lanes[l.Name] = i
	}
	if in.Collections < 1 {
		return nil, nil, fmt.Errorf("collections: %d: want at least 1", in.Collections)
	}
	if in.Passes < 2 || in.Passes%2 != 0 {
		return nil, nil, fmt.Errorf("passes: %d per collection: want an even number >= 2", in.Passes)
	}
	if runs := float64(in.Collections) * float64(in.Passes) * float64(len(in.Lanes)) * float64(1+len(in.Candidates)); runs > maxRuns {
		return nil, nil, fmt.Errorf("protocol of %g runs (collections x passes x lanes x arms): want at most %d", runs, maxRuns)
	}
	return arms, lanes, nil
}

// analyze computes pass deltas, pass-pair verdicts and lane evidence for every candidate
// against the base (Analyze, AnalyzeBy). It returns an error only for malformed input
// (see the package doc); missing or failed runs become insufficient verdicts and warnings.
func analyze(in Input, cfg Config) (Report, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return Report{}, err
	}
	armIdx, laneIdx, err := validate(in)
	if err != nil {
		return Report{}, err
	}
	full := in
	in, replaced, chosen, err := attempts(in)
	if err != nil {
		return Report{}, err
	}
	lay := layout{in.Collections, in.Passes, len(in.Lanes), 1 + len(in.Candidates)}
	runs := make([]run, lay.collections*lay.passes*lay.lanes*lay.arms)
	rep := Report{
		SchemaVersion: SchemaVersion,
		Config:        cfg,
		Base:          in.Base,
		Candidates:    slices.Clone(in.Candidates),
		Collections:   in.Collections,
		Pairs:         []Pair{},
		Passes:        []PassDelta{},
		Lanes:         []LaneSummary{},
		Pooled:        []LaneSummary{},
		SetAside:      []SetAside{},
		Unfinished:    []Unfinished{},
		Priors:        []Prior{},
		Carryover:     []Carryover{},
		Warnings:      []string{},
	}
	if err := index(in, lay, armIdx, laneIdx, runs, &rep); err != nil {
		return Report{}, err
	}
	if cfg.Design == nil || cfg.Design.Collections != in.Collections {
		if cfg.Design, err = NewDesign(cfg, in.Collections); err != nil {
			return Report{}, err
		}
	}
	rep.SetAside = setAside(in, cfg, runs, lay)
	rep.Interference = slices.Clone(in.Interference)
	for _, f := range in.Interference {
		if f.Finding != "" && f.Arm != in.Base {
			rep.Warnings = append(rep.Warnings, f.Finding)
		}
	}
	for i := range rep.SetAside {
		a := &rep.SetAside[i]
		a.Attempt = chosen[passKey{a.Collection, a.Pass, a.Lane}]
	}
	rep.SetAside = append(replaced, rep.SetAside...)
	slices.SortStableFunc(rep.SetAside, func(x, y SetAside) int {
		return cmp.Or(cmp.Compare(x.Collection, y.Collection), cmp.Compare(laneIdx[x.Lane], laneIdx[y.Lane]), cmp.Compare(x.Pass, y.Pass),
			cmp.Compare(x.Attempt, y.Attempt), cmp.Compare(armIdx[x.Arm], armIdx[y.Arm]))
	})
	rep.Config.Design = nil
	lanes, carry := prepareLanes(in, cfg, runs, lay)
	rep.Carryover = append(rep.Carryover, carry...)
	at := func(round int) []run { return runsAt(full, runs, lay, armIdx, laneIdx, len(chosen) > 0, round) }
	priors := fitPriors(in, cfg, at, lay, lanes, &rep)
	for _, ld := range lanes {
		ld.summarize(&rep, in, cfg, runs, lay, priors[ld.lane.Group][ld.round])
	}
	for i := range rep.Pairs {
		pr := &rep.Pairs[i]
		pr.Attempt1 = chosen[passKey{pr.Collection, 2*pr.Pair - 1, pr.Lane}]
		pr.Attempt2 = chosen[passKey{pr.Collection, 2 * pr.Pair, pr.Lane}]
	}
	sortReport(&rep, in)
	rep.Unfinished = unfinished(full, chosen, &rep)
	slices.SortStableFunc(rep.Unfinished, func(x, y Unfinished) int {
		return cmp.Or(cmp.Compare(x.Collection, y.Collection), cmp.Compare(laneIdx[x.Lane], laneIdx[y.Lane]), cmp.Compare(x.Pass, y.Pass),
			cmp.Compare(x.Attempt, y.Attempt), cmp.Compare(armIdx[x.Arm], armIdx[y.Arm]))
	})
	return rep, nil
}

// passKey names one lane's pass.
type passKey struct {
	c, p int
	lane string
}

// attempts resolves the lanes' passes measured more than once (Observation.Attempt): of
// each, the latest attempt is analysed, since a pass is measured again only when a look
// set a run of it aside as contaminated or its pair aside as an outlier, on the runs'
// spread or on the pair's distance from the lane's other pairs either way, or when a run
// of it failed, never on the direction of its delta. It returns the input with one
// attempt of each pass, the runs with samples of the attempts replaced (SetAside,
// Remeasured; those without are in Report.Unfinished), and the attempt analysed of each
// pass measured again.
func attempts(in Input) (Input, []SetAside, map[passKey]int, error) {
	latest := map[passKey]int{}
	type runKey struct {
		k       passKey
		arm     string
		attempt int
	}
	seen := map[runKey]int{}
	for i, o := range in.Observations {
		switch {
		case o.Attempt < 0:
			return in, nil, nil, fmt.Errorf("observation %d: attempt %d: want 0 or more", i, o.Attempt)
		case o.Round < 0 || o.Round > 0 && o.Round < passRound(o.Pass):
			return in, nil, nil, fmt.Errorf("observation %d: round %d: want 0, or a round at or after its pass's (%d)", i, o.Round, passRound(o.Pass))
		}
		k := passKey{o.Collection, o.Pass, o.Lane}
		rk := runKey{k, o.Arm, o.Attempt}
		if j, dup := seen[rk]; dup && o.Attempt > 0 {
			return in, nil, nil, fmt.Errorf("observation %d: duplicate of observation %d (collection %d, pass %d, lane %q, arm %q, attempt %d)",
				i, j, o.Collection, o.Pass, o.Lane, o.Arm, o.Attempt)
		}
		seen[rk] = i
		latest[k] = max(latest[k], o.Attempt)
	}
	maps.DeleteFunc(latest, func(_ passKey, a int) bool { return a == 0 })
	replaced := []SetAside{}
	if len(latest) == 0 {
		return in, replaced, latest, nil
	}
	sub := in
	sub.Observations = nil
	for _, o := range in.Observations {
		k := passKey{o.Collection, o.Pass, o.Lane}
		if o.Attempt == latest[k] {
			sub.Observations = append(sub.Observations, o)
			continue
		}
		if len(o.Samples) == 0 {
			continue // a run that gave no samples: Report.Unfinished names it
		}
		a := SetAside{Lane: o.Lane, Arm: o.Arm, Collection: o.Collection, Pass: o.Pass, Attempt: o.Attempt, Remeasured: true,
			Reason: fmt.Sprintf("its lane's pass was measured again (measurement %d is analysed): a look set a run of it aside as contaminated, its pair as an outlier, a run of it failed, or the host was busy beside it (looks.jsonl names the run and the reason)", latest[k]+1)}
		if xs := slices.Sorted(slices.Values(o.Samples)); len(xs) >= 2 {
			if m := medianSorted(xs); m != 0 && finite(m) {
				a.CVPct = robustCVPct(xs, m)
			}
		}
		replaced = append(replaced, a)
	}
	return sub, replaced, latest, nil
}

// index cleans the observations into runs and warns about non-finite values and small
// sample counts.
func index(in Input, lay layout, armIdx, laneIdx map[string]int, runs []run, rep *Report) error {
	armNames := append([]string{in.Base}, in.Candidates...)
	seen := make([]int, len(runs)) // observation index + 1
	type fewest struct {
		n, arm, c, p int
	}
	minN := make([]fewest, len(in.Lanes))
	for i := range minN {
		minN[i].n = -1
	}
	for i, o := range in.Observations {
		l, ok := laneIdx[o.Lane]
		if !ok {
			return fmt.Errorf("observation %d: unknown lane %q", i, o.Lane)
		}
		a, ok := armIdx[o.Arm]
		if !ok {
			return fmt.Errorf("observation %d: unknown arm %q", i, o.Arm)
		}
		if o.Collection < 1 || o.Collection > in.Collections {
			return fmt.Errorf("observation %d: collection %d out of range 1..%d", i, o.Collection, in.Collections)
		}
		if o.Pass < 1 || o.Pass > in.Passes {
			return fmt.Errorf("observation %d: pass %d out of range 1..%d", i, o.Pass, in.Passes)
		}
		k := lay.at(o.Collection-1, o.Pass-1, l, a)
		if seen[k] != 0 {
			return fmt.Errorf("observation %d: duplicate of observation %d (collection %d, pass %d, lane %q, arm %q)",
				i, seen[k]-1, o.Collection, o.Pass, o.Lane, o.Arm)
		}
		seen[k] = i + 1
		r := run{present: true, values: make([]float64, 0, len(o.Samples)), forward: OrderOf(o.Pass) == OrderForward, pos: o.Position - 1, after: -1, desched: o.Descheduled}
		switch o.Order {
		case "":
		case OrderForward, OrderReverse:
			r.forward = o.Order == OrderForward
		default:
			return fmt.Errorf("observation %d: order %q: want %s or %s", i, o.Order, OrderForward, OrderReverse)
		}
		switch {
		case o.Position < 0 || o.Position > lay.arms:
			return fmt.Errorf("observation %d: position %d out of range 1..%d", i, o.Position, lay.arms)
		case o.Position == 0 && r.forward:
			r.pos = a
		case o.Position == 0:
			r.pos = lay.arms - 1 - a
		}
		if o.After != "" {
			if r.after, ok = armIdx[o.After]; !ok {
				return fmt.Errorf("observation %d: after: unknown arm %q", i, o.After)
			}
		}
		switch {
		case !finite(o.AtLeast) || o.AtLeast < 0:
			return fmt.Errorf("observation %d: at_least %v: want a positive number", i, o.AtLeast)
		case o.AtLeast > 0 && (len(o.Samples) > 0 || !o.TimedOut):
			return fmt.Errorf("observation %d: at_least %v: only a timed-out run without samples has a bound", i, o.AtLeast)
		}
		r.bound = o.AtLeast
		for _, x := range o.Samples {
			if finite(x) {
				r.values = append(r.values, x)
			}
		}
		if dropped := len(o.Samples) - len(r.values); dropped > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"lane %s, arm %s, collection %d, pass %d: dropped %d non-finite samples (NaN or Inf); check the lane's output",
				o.Lane, o.Arm, o.Collection, o.Pass, dropped))
		}
		slices.Sort(r.values)
		if n := len(r.values); n >= 1 {
			r.median = medianSorted(r.values)
			if n >= 2 && r.median != 0 {
				r.cvPct = robustCVPct(r.values, r.median)
			}
			if f := &minN[l]; f.n < 0 || n < f.n {
				*f = fewest{n, a, o.Collection, o.Pass}
			}
		}
		runs[k] = r
	}
	for l, f := range minN {
		if f.n >= 0 && f.n < fewSamples {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"lane %s: runs have as few as %d samples (arm %s, collection %d, pass %d); per-pass medians and CVs from so few samples are shaky, "+
					"and every pass delta and pair verdict rests on them: use at least %d samples per run (10-20 recommended)",
				in.Lanes[l].Name, f.n, armNames[f.arm], f.c, f.p, fewSamples))
		}
	}
	return nil
}

// measured reports whether pass p (0-based) of collection c has any run of lane l in the
// base or in arm a.
func measured(runs []run, lay layout, c, p, l, a int) bool {
	return runs[lay.at(c, p, l, 0)].present || runs[lay.at(c, p, l, a)].present
}

// sampleCount returns the most samples any run of lane l in the base or arm a has.
func sampleCount(runs []run, lay layout, l, a int) int {
	n := 0
	for c := range lay.collections {
		for p := range lay.passes {
			for _, arm := range []int{0, a} {
				n = max(n, len(runs[lay.at(c, p, l, arm)].values))
			}
		}
	}
	return n
}

// newSummary returns an empty summary of a lane for a candidate.
func newSummary(lane Lane, cand string, c int, floorPct float64) LaneSummary {
	s := LaneSummary{Lane: lane.Name, Arm: cand, Collection: c, FloorPct: floorPct, HigherIsBetter: lane.HigherIsBetter,
		Counts: map[Verdict]int{}, P: 1, HostBlips: []int{}}
	for _, v := range Verdicts() {
		s.Counts[v] = 0
	}
	return s
}

// countPairs adds pairs to the summary's counts.
func (s *LaneSummary) countPairs(pairs []Pair) {
	for _, pr := range pairs {
		if pr.SetAside {
			s.SetAside++
			continue
		}
		s.Pairs++
		s.Counts[pr.Verdict]++
		if pr.Usable1 && pr.Usable2 {
			s.UsablePairs++
		}
		switch pr.Direction {
		case DirectionFaster:
			s.ReproducedFaster++
		case DirectionSlower:
			s.ReproducedSlower++
		}
	}
}

// passDeltas fills the pass-delta statistics of a collection's summary: median and mean
// delta, passes faster, host blips, and the pooled-sample medians and Mann-Whitney p.
func passDeltas(s *LaneSummary, passes []PassDelta, kept []int, runs []run, lay layout, c, l, a int, lane Lane, floorPct float64) {
	var deltas, bv, cv []float64
	for _, k := range kept {
		for _, p := range []int{2 * k, 2*k + 1} {
			pd := passes[p]
			if !pd.Usable || pd.Bound != "" {
				continue // a censored pass's delta is a bound, not a measurement
			}
			deltas = append(deltas, pd.DeltaPct)
			if pd.DeltaPct < 0 {
				s.Faster++
			}
			bv = append(bv, runs[lay.at(c, p, l, 0)].values...)
			cv = append(cv, runs[lay.at(c, p, l, a)].values...)
		}
	}
	s.Passes = len(deltas)
	if len(deltas) > 0 {
		s.MedianDeltaPct = Median(deltas)
		s.MeanDeltaPct = mean(deltas)
	}
	if len(deltas) >= 3 {
		limit := math.Max(blipSigmas*madScale*mad(deltas, s.MedianDeltaPct), 2*floorPct)
		for i := range passes {
			if pd := &passes[i]; pd.Usable && pd.Bound == "" && math.Abs(pd.DeltaPct-s.MedianDeltaPct) > limit {
				pd.HostBlip = true
				s.HostBlips = append(s.HostBlips, pd.Pass)
			}
		}
	}
	if len(bv) > 0 && len(cv) > 0 {
		th := benchmath.DefaultThresholds
		bs, cs := benchmath.NewSample(bv, &th), benchmath.NewSample(cv, &th)
		s.Base = summary(bs)
		s.Cand = summary(cs)
		s.P = benchmath.AssumeNothing.Compare(bs, cs).P
		if s.Base.Median != 0 {
			s.PooledDeltaPct = (s.Cand.Median - s.Base.Median) / math.Abs(s.Base.Median) * 100
			if lane.HigherIsBetter {
				s.PooledDeltaPct = -s.PooledDeltaPct
			}
		}
	}
}

// warnLane adds the warnings of one collection of a lane: insufficient pairs,
// contaminated passes and host blips.
func warnLane(rep *Report, cp *collPairs, lane Lane, cand, base string, c int, s LaneSummary) {
	for _, pr := range cp.pairs {
		if pr.Verdict == Insufficient {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"lane %s, %s vs %s, collection %d, pair %d: insufficient: %s; rerun that pass-pair with at least %d samples per side",
				lane.Name, cand, base, c, pr.Pair, pr.Reason, minSamples))
		}
	}
	for _, k := range cp.kept {
		for _, pd := range []PassDelta{cp.passes[2*k], cp.passes[2*k+1]} {
			if pd.Contaminated {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf(
					"lane %s, %s vs %s, collection %d, pass %d: contaminated (%s); look for interference on the host during that run and rerun the pair",
					lane.Name, cand, base, c, pd.Pass, contaminationText(pd, base)))
			}
			if pd.HostBlip {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf(
					"lane %s, %s vs %s, collection %d, pass %d: host blip: delta %s against a lane median of %s over %d passes; "+
						"check the host's load during that pass (the lane verdict uses the pair means, which it moves)",
					lane.Name, cand, base, c, pd.Pass, fmtDelta(pd.DeltaPct), fmtDelta(s.MedianDeltaPct), s.Passes))
			}
		}
	}
}

// sortReport keeps only the passes of measured pairs and orders every slice as the
// Report documents: by candidate, collection, lane, then pair or pass. analyzeLane
// appends by candidate and lane, collection inside.
func sortReport(rep *Report, in Input) {
	cand := map[string]int{}
	for i, c := range in.Candidates {
		cand[c] = i
	}
	lane := map[string]int{}
	for i, l := range in.Lanes {
		lane[l.Name] = i
	}
	key := func(arm string, c int, l string, n int) []int { return []int{cand[arm], c, lane[l], n} }
	less := func(a, b []int) int { return slices.Compare(a, b) }
	slices.SortStableFunc(rep.Passes, func(x, y PassDelta) int {
		return less(key(x.Arm, x.Collection, x.Lane, x.Pass), key(y.Arm, y.Collection, y.Lane, y.Pass))
	})
	slices.SortStableFunc(rep.Pairs, func(x, y Pair) int {
		return less(key(x.Arm, x.Collection, x.Lane, x.Pair), key(y.Arm, y.Collection, y.Lane, y.Pair))
	})
	slices.SortStableFunc(rep.Lanes, func(x, y LaneSummary) int {
		return less(key(x.Arm, x.Collection, x.Lane, 0), key(y.Arm, y.Collection, y.Lane, 0))
	})
	// Passes of pairs a lane did not run are not reported.
	keptPass := map[[4]int]bool{}
	for _, pr := range rep.Pairs {
		for _, p := range []int{2*pr.Pair - 1, 2 * pr.Pair} {
			keptPass[[4]int{cand[pr.Arm], pr.Collection, lane[pr.Lane], p}] = true
		}
	}
	rep.Passes = slices.DeleteFunc(rep.Passes, func(pd PassDelta) bool {
		return !keptPass[[4]int{cand[pd.Arm], pd.Collection, lane[pd.Lane], pd.Pass}]
	})
}

// sideNote explains why one side of a pass is not usable, or returns "".
func sideNote(r run, arm string) string {
	switch n := len(r.values); {
	case !r.present:
		return fmt.Sprintf("no %s observation", arm)
	case n == 0:
		return fmt.Sprintf("no %s samples", arm)
	case n < minSamples:
		return fmt.Sprintf("only %d %s sample (need %d)", n, arm, minSamples)
	case r.median < 0:
		return fmt.Sprintf("%s median is negative (a ratio needs positive values)", arm)
	}
	return ""
}

// passDelta compares one candidate run with the base run of the same pass and lane.
func passDelta(b, k run, lane Lane, base, cand string, c, p int, cfg Config) PassDelta {
	order := OrderOf(p)
	if r := b; r.present || k.present {
		if !r.present {
			r = k
		}
		order = OrderReverse
		if r.forward {
			order = OrderForward
		}
	}
	pd := PassDelta{Lane: lane.Name, Arm: cand, Collection: c, Pass: p, Order: order,
		BaseN: len(b.values), CandN: len(k.values)}
	if len(b.values) > 0 {
		pd.BaseMedian = b.median
		pd.BaseCVPct = b.cvPct
	}
	if len(k.values) > 0 {
		pd.CandMedian = k.median
		pd.CandCVPct = k.cvPct
	}
	if cd, ok := censoredDelta(pd, b, k, lane, base, cand); ok {
		return cd
	}
	var notes []string
	for _, s := range []struct {
		r   run
		arm string
	}{{b, base}, {k, cand}} {
		if n := sideNote(s.r, s.arm); n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 {
		pd.Note = joinSemi(notes)
		return pd
	}
	pd.Usable = true
	// ratio is cand/base, or base/cand for higher-is-better lanes: above 1 is worse.
	num, den := k.median, b.median
	if lane.HigherIsBetter {
		num, den = den, num
	}
	switch {
	case num == 0 && den == 0:
		pd.LogRatio = 0
		pd.Note = "both medians are 0"
	case den == 0:
		pd.LogRatio = maxLogRatio
		pd.Note = "a median of 0: the ratio is capped at a factor of a million"
	case num == 0:
		pd.LogRatio = -maxLogRatio
		pd.Note = "a median of 0: the ratio is capped at a factor of a million"
	default:
		pd.LogRatio = math.Max(-maxLogRatio, math.Min(maxLogRatio, math.Log(num/den)))
	}
	pd.DeltaPct = toPct(pd.LogRatio)
	if math.Abs(pd.LogRatio) < maxLogRatio && den != 0 {
		pd.DeltaPct = (num - den) / den * 100 // exact, where exp(log(x)) would round
	}
	flagged, clean := pd.CandCVPct, pd.BaseCVPct
	pd.Flagged = SideCandidate
	if pd.DeltaPct < 0 {
		flagged, clean = clean, flagged
		pd.Flagged = SideBase
	}
	pd.Contaminated = flagged > cfg.CleanCVPct && (clean == 0 || flagged/clean >= cfg.CVAsymmetry) &&
		math.Abs(pd.DeltaPct) <= contaminationReach*flagged
	return pd
}

// contaminationText describes a contaminated pass: "candA CV 31% vs base 4.0%".
func contaminationText(pd PassDelta, base string) string {
	if pd.Flagged == SideBase {
		return fmt.Sprintf("%s CV %s vs %s %s", base, fmtCV(pd.BaseCVPct), pd.Arm, fmtCV(pd.CandCVPct))
	}
	return fmt.Sprintf("%s CV %s vs %s %s", pd.Arm, fmtCV(pd.CandCVPct), base, fmtCV(pd.BaseCVPct))
}

// pairVerdict applies the pass-pair rule to the forward pass p1 and the reverse pass p2,
// with a pass material beyond materialLog on the log scale.
func pairVerdict(p1, p2 PassDelta, k int, base string, cfg Config, floorPct, materialLog float64) Pair {
	pr := Pair{Lane: p1.Lane, Arm: p1.Arm, Collection: p1.Collection, Pair: k,
		Delta1Pct: p1.DeltaPct, Delta2Pct: p2.DeltaPct,
		MaterialPct: toPct(materialLog),
		BaseCV1Pct:  p1.BaseCVPct, CandCV1Pct: p1.CandCVPct, BaseCV2Pct: p2.BaseCVPct, CandCV2Pct: p2.CandCVPct,
		Usable1: p1.Usable, Usable2: p2.Usable, Contaminated1: p1.Contaminated, Contaminated2: p2.Contaminated,
		Censored1: p1.Bound, Censored2: p2.Bound}
	if p1.Usable && p2.Usable {
		pr.MeanPct = toPct((p1.LogRatio + p2.LogRatio) / 2)
		pr.OrderPct = toPct((p1.LogRatio - p2.LogRatio) / 2)
	}
	threshold := fmtFloor(round1(pr.MaterialPct))
	what := "material threshold"
	if materialLog <= floorLog(floorPct)*(1+1e-12) {
		threshold, what = fmtFloor(floorPct), "floor"
	}
	d1, d2 := passText(p1), passText(p2)
	var parts []string
	switch {
	case !p1.Usable || !p2.Usable:
		for _, pd := range []PassDelta{p1, p2} {
			if !pd.Usable {
				parts = append(parts, fmt.Sprintf("pass %d: %s", pd.Pass, pd.Note))
			}
		}
		pr.Verdict, pr.Reason = Insufficient, joinSemi(parts)
	case p1.Contaminated || p2.Contaminated:
		for _, pd := range []PassDelta{p1, p2} {
			if pd.Contaminated {
				parts = append(parts, fmt.Sprintf("pass %d contaminated: %s, enough spread to explain its delta", pd.Pass, contaminationText(pd, base)))
			}
		}
		pr.Verdict = DriftSuspected
		pr.Reason = fmt.Sprintf("%s (deltas %s then %s)", joinSemi(parts), d1, d2)
	default:
		m1 := material(p1, materialLog)
		m2 := material(p2, materialLog)
		switch {
		case m1 && m2 && (p1.LogRatio < 0) != (p2.LogRatio < 0):
			pr.Verdict = DriftSuspected
			pr.Reason = fmt.Sprintf("order flip reverses the sign, both beyond the %s %s: %s then %s", threshold, what, d1, d2)
		case m1 && m2:
			pr.Verdict, pr.Direction = Reproduced, DirectionSlower
			if p1.LogRatio < 0 {
				pr.Direction = DirectionFaster
			}
			pr.Reason = fmt.Sprintf("both passes %s beyond the %s %s: %s then %s", pr.Direction, threshold, what, d1, d2)
		case m1 || m2:
			pr.Verdict = OneSided
			pr.Reason = fmt.Sprintf("one pass material, one not: %s then %s (%s %s)", d1, d2, threshold, what)
		default:
			pr.Verdict = Neutral
			pr.Reason = fmt.Sprintf("both passes within the %s %s: %s then %s", threshold, what, d1, d2)
		}
	}
	if pr.Verdict != Insufficient {
		for _, pd := range []PassDelta{p1, p2} {
			if pd.Bound != "" {
				pr.Reason += fmt.Sprintf(" (pass %d: %s)", pd.Pass, pd.Note)
			}
		}
	}
	return pr
}

// summary converts a benchmath median summary into a JSON-safe Summary.
func summary(smp *benchmath.Sample) Summary {
	sm := benchmath.AssumeNothing.Summary(smp, confidence)
	out := Summary{N: len(smp.Values), Median: sm.Center, Confidence: sm.Confidence}
	if finite(sm.Lo) && finite(sm.Hi) {
		out.Lo, out.Hi, out.Bounded = sm.Lo, sm.Hi, true
	}
	return out
}

// countsText lists the non-zero pair verdict counts and the number of pairs:
// "7 REPRODUCED faster, 5 neutral of 12".
func countsText(s LaneSummary) string {
	return fmt.Sprintf("%s of %d", PairCounts(s), s.Pairs)
}

// PairCounts lists a lane summary's non-zero pair verdict counts, REPRODUCED split by
// direction, in the order of Verdicts: "7 REPRODUCED faster, 1 drift-suspected, 4
// neutral". It returns "" when the summary counts no pairs.
func PairCounts(s LaneSummary) string {
	var parts []string
	add := func(n int, label string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	add(s.ReproducedFaster, "REPRODUCED faster")
	add(s.ReproducedSlower, "REPRODUCED slower")
	for _, v := range Verdicts() {
		if v != Reproduced {
			add(s.Counts[v], string(v))
		}
	}
	return joinComma(parts)
}

// fmtDelta formats a delta in percent with its sign: "-12.1%", "x186" (human.Delta).
func fmtDelta(d float64) string { return human.Delta(d) }

// fmtFloor formats a threshold in percent: "3%".
func fmtFloor(f float64) string { return human.Num(f) + "%" }

// fmtCV formats a CV in percent: whole percents from 10%, one decimal below, "0%" for 0.
func fmtCV(cv float64) string {
	switch {
	case cv == 0:
		return "0%"
	case cv >= 10:
		return human.Num(math.Round(cv)) + "%"
	default:
		return human.Percent(cv)
	}
}

func joinSemi(parts []string) string  { return strings.Join(parts, "; ") }
func joinComma(parts []string) string { return strings.Join(parts, ", ") }
