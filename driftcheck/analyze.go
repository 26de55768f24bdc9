package driftcheck

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
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

// run is one observation, cleaned: finite values only, sorted, with their statistics.
type run struct {
	present bool
	values  []float64 // finite samples, sorted
	median  float64   // valid when len(values) >= 1
	cvPct   float64   // valid when len(values) >= 2 and median != 0, or 0 without spread
	// cvUndefined marks a zero median with samples spread around it (MAD > 0): a CV of
	// infinity, which no contamination test can use.
	cvUndefined bool
}

// layout indexes runs by collection, pass, lane and arm (all 0-based).
type layout struct {
	collections, passes, lanes, arms int
}

func (l layout) at(c, p, lane, arm int) int {
	return ((c*l.passes+p)*l.lanes+lane)*l.arms + arm
}

// resolve fills zero fields with defaults and validates the result.
func (c Config) resolve() (Config, error) {
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
	switch {
	case !finite(c.EffectFloorPct) || c.EffectFloorPct < 0:
		return c, fmt.Errorf("config: effect_floor_pct %v: want a positive number", c.EffectFloorPct)
	case !finite(c.CleanCVPct) || c.CleanCVPct < 0:
		return c, fmt.Errorf("config: clean_cv_pct %v: want a positive number", c.CleanCVPct)
	case !finite(c.CVAsymmetry) || c.CVAsymmetry < 1:
		return c, fmt.Errorf("config: cv_asymmetry %v: want a ratio >= 1", c.CVAsymmetry)
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
		switch l.Role {
		case "", RolePrimary, RoleSecondary, RoleGuard, RoleControl:
		default:
			return nil, nil, fmt.Errorf("lane %q: role %q: want primary, secondary, guard or control", l.Name, l.Role)
		}
		switch l.Expect {
		case "", ExpectFaster, ExpectSlower, ExpectNeutral:
		default:
			return nil, nil, fmt.Errorf("lane %q: expect %q: want faster, slower or neutral", l.Name, l.Expect)
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

// Analyze computes pass deltas, pass-pair verdicts and lane summaries for every candidate
// against the base. It returns an error only for malformed input (see the package doc);
// missing or failed runs become insufficient verdicts and warnings.
func Analyze(in Input, cfg Config) (Report, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return Report{}, err
	}
	armIdx, laneIdx, err := validate(in)
	if err != nil {
		return Report{}, err
	}
	lay := layout{in.Collections, in.Passes, len(in.Lanes), 1 + len(in.Candidates)}
	armNames := append([]string{in.Base}, in.Candidates...)
	runs := make([]run, lay.collections*lay.passes*lay.lanes*lay.arms)
	seen := make([]int, len(runs)) // observation index + 1
	rep := Report{
		Config:     cfg,
		Base:       in.Base,
		Candidates: slices.Clone(in.Candidates),
		Pairs:      []Pair{},
		Passes:     []PassDelta{},
		Lanes:      []LaneSummary{},
		Warnings:   []string{},
	}

	// Clean and index the observations.
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
			return Report{}, fmt.Errorf("observation %d: unknown lane %q", i, o.Lane)
		}
		a, ok := armIdx[o.Arm]
		if !ok {
			return Report{}, fmt.Errorf("observation %d: unknown arm %q", i, o.Arm)
		}
		if o.Collection < 1 || o.Collection > in.Collections {
			return Report{}, fmt.Errorf("observation %d: collection %d out of range 1..%d", i, o.Collection, in.Collections)
		}
		if o.Pass < 1 || o.Pass > in.Passes {
			return Report{}, fmt.Errorf("observation %d: pass %d out of range 1..%d", i, o.Pass, in.Passes)
		}
		k := lay.at(o.Collection-1, o.Pass-1, l, a)
		if seen[k] != 0 {
			return Report{}, fmt.Errorf("observation %d: duplicate of observation %d (collection %d, pass %d, lane %q, arm %q)",
				i, seen[k]-1, o.Collection, o.Pass, o.Lane, o.Arm)
		}
		seen[k] = i + 1
		r := run{present: true, values: make([]float64, 0, len(o.Samples))}
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
			switch {
			case n >= 2 && r.median != 0:
				r.cvPct = robustCVPct(r.values, r.median)
			case n >= 2:
				r.cvUndefined = mad(r.values, 0) > 0
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

	for ci, cand := range in.Candidates {
		a := ci + 1
		for c := 0; c < in.Collections; c++ {
			for l, lane := range in.Lanes {
				passes := make([]PassDelta, in.Passes)
				for p := range passes {
					passes[p] = passDelta(runs[lay.at(c, p, l, 0)], runs[lay.at(c, p, l, a)], lane, in.Base, cand, c+1, p+1, cfg)
				}
				var pairs []Pair
				for k := 0; k < in.Passes/2; k++ {
					pairs = append(pairs, pairVerdict(passes[2*k], passes[2*k+1], k+1, in.Base, cfg))
				}
				sum := summarize(passes, pairs, runs, lay, c, l, a, lane, cfg)
				for _, pr := range pairs {
					if pr.Verdict == Insufficient {
						rep.Warnings = append(rep.Warnings, fmt.Sprintf(
							"lane %s, %s vs %s, collection %d, pair %d: insufficient: %s; rerun that pass-pair with at least %d samples per side",
							lane.Name, cand, in.Base, c+1, pr.Pair, pr.Reason, minSamples))
					}
				}
				for _, pd := range passes {
					if pd.Contaminated {
						rep.Warnings = append(rep.Warnings, fmt.Sprintf(
							"lane %s, %s vs %s, collection %d, pass %d: contaminated (%s); look for interference on the host during that run and rerun the pair",
							lane.Name, cand, in.Base, c+1, pd.Pass, contaminationText(pd, in.Base)))
					}
					if pd.HostBlip {
						rep.Warnings = append(rep.Warnings, fmt.Sprintf(
							"lane %s, %s vs %s, collection %d, pass %d: host blip: delta %s against a lane median of %s over %d passes; "+
								"check the host's load during that pass (the lane verdict uses the median)",
							lane.Name, cand, in.Base, c+1, pd.Pass, fmtDelta(pd.DeltaPct), fmtDelta(sum.MedianDeltaPct), sum.Passes))
					}
				}
				rep.Passes = append(rep.Passes, passes...)
				rep.Pairs = append(rep.Pairs, pairs...)
				rep.Lanes = append(rep.Lanes, sum)
			}
		}
	}
	return rep, nil
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
	}
	return ""
}

// passDelta compares one candidate run with the base run of the same pass and lane.
func passDelta(b, k run, lane Lane, base, cand string, c, p int, cfg Config) PassDelta {
	pd := PassDelta{Lane: lane.Name, Arm: cand, Collection: c, Pass: p, Order: OrderForward,
		BaseN: len(b.values), CandN: len(k.values)}
	if p%2 == 0 {
		pd.Order = OrderReverse
	}
	if len(b.values) > 0 {
		pd.BaseMedian = b.median
		pd.BaseCVPct = b.cvPct
	}
	if len(k.values) > 0 {
		pd.CandMedian = k.median
		pd.CandCVPct = k.cvPct
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
	if len(notes) == 0 {
		for _, s := range []struct {
			r   run
			arm string
		}{{b, base}, {k, cand}} {
			if s.r.cvUndefined {
				notes = append(notes, fmt.Sprintf("%s median is 0 with samples spread around it (CV undefined)", s.arm))
			}
		}
	}
	delta, ok := DeltaPct(b.median, k.median, lane.HigherIsBetter)
	if len(notes) == 0 && !ok {
		zero := base
		if lane.HigherIsBetter {
			zero = cand
		}
		notes = append(notes, fmt.Sprintf("%s median is 0 (delta undefined)", zero))
	}
	if len(notes) > 0 {
		pd.Note = joinSemi(notes)
		return pd
	}
	pd.Usable = true
	pd.DeltaPct = delta
	flagged, clean := pd.CandCVPct, pd.BaseCVPct
	pd.Flagged = SideCandidate
	if pd.DeltaPct < 0 {
		flagged, clean = clean, flagged
		pd.Flagged = SideBase
	}
	pd.Contaminated = flagged > cfg.CleanCVPct && (clean == 0 || flagged/clean >= cfg.CVAsymmetry)
	return pd
}

// DeltaPct returns the candidate's change against the base in percent, negative when
// the candidate is better, and whether it is defined:
//
//	lower is better:  (cand - base) / |base| x 100   undefined when base is 0
//	higher is better: (base - cand) / |cand| x 100   undefined when cand is 0
//
// For a higher-is-better unit (a rate: results per second) this is the change of its
// reciprocal (seconds per result), so a rate lane and the time lane of the same work
// read the same delta, and a base that delivers nothing against a candidate that
// delivers is -100%, not an infinite gain. Equal values are 0, zeros included.
func DeltaPct(base, cand float64, higherIsBetter bool) (float64, bool) {
	switch {
	case base == cand:
		return 0, true
	case higherIsBetter && cand != 0:
		return (base - cand) / math.Abs(cand) * 100, true
	case !higherIsBetter && base != 0:
		return (cand - base) / math.Abs(base) * 100, true
	}
	return 0, false
}

// contaminationText describes a contaminated pass: "candA CV 31% vs base 4.0%".
func contaminationText(pd PassDelta, base string) string {
	if pd.Flagged == SideBase {
		return fmt.Sprintf("%s CV %s vs %s %s", base, fmtCV(pd.BaseCVPct), pd.Arm, fmtCV(pd.CandCVPct))
	}
	return fmt.Sprintf("%s CV %s vs %s %s", pd.Arm, fmtCV(pd.CandCVPct), base, fmtCV(pd.BaseCVPct))
}

// pairVerdict applies the pass-pair rule to the forward pass p1 and the reverse pass p2.
func pairVerdict(p1, p2 PassDelta, k int, base string, cfg Config) Pair {
	pr := Pair{Lane: p1.Lane, Arm: p1.Arm, Collection: p1.Collection, Pair: k,
		Delta1Pct: p1.DeltaPct, Delta2Pct: p2.DeltaPct,
		BaseCV1Pct: p1.BaseCVPct, CandCV1Pct: p1.CandCVPct, BaseCV2Pct: p2.BaseCVPct, CandCV2Pct: p2.CandCVPct,
		Usable1: p1.Usable, Usable2: p2.Usable, Contaminated1: p1.Contaminated, Contaminated2: p2.Contaminated}
	floor := fmtFloor(cfg.EffectFloorPct)
	d1, d2 := fmtDelta(p1.DeltaPct), fmtDelta(p2.DeltaPct)
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
				parts = append(parts, fmt.Sprintf("pass %d contaminated: %s", pd.Pass, contaminationText(pd, base)))
			}
		}
		pr.Verdict = DriftSuspected
		pr.Reason = fmt.Sprintf("%s (deltas %s then %s)", joinSemi(parts), d1, d2)
	default:
		m1 := math.Abs(p1.DeltaPct) >= cfg.EffectFloorPct
		m2 := math.Abs(p2.DeltaPct) >= cfg.EffectFloorPct
		switch {
		case m1 && m2 && (p1.DeltaPct < 0) != (p2.DeltaPct < 0):
			pr.Verdict = DriftSuspected
			pr.Reason = fmt.Sprintf("order flip reverses the sign, both beyond the %s floor: %s then %s", floor, d1, d2)
		case m1 && m2:
			pr.Verdict, pr.Direction = Reproduced, DirectionSlower
			if p1.DeltaPct < 0 {
				pr.Direction = DirectionFaster
			}
			pr.Reason = fmt.Sprintf("both passes %s beyond the %s floor: %s then %s", pr.Direction, floor, d1, d2)
		case m1 || m2:
			pr.Verdict = OneSided
			pr.Reason = fmt.Sprintf("one pass material, one not: %s then %s (%s floor)", d1, d2, floor)
		default:
			pr.Verdict = Neutral
			pr.Reason = fmt.Sprintf("both passes within the %s floor: %s then %s", floor, d1, d2)
		}
	}
	return pr
}

// summarize pools one lane's passes for candidate arm a in collection c (0-based).
func summarize(passes []PassDelta, pairs []Pair, runs []run, lay layout, c, l, a int, lane Lane, cfg Config) LaneSummary {
	s := LaneSummary{Lane: lane.Name, Arm: passes[0].Arm, Role: lane.Role, Expect: lane.Expect, Collection: c + 1,
		Pairs: len(pairs), Counts: map[Verdict]int{}, P: 1, HostBlips: []int{}}
	for _, v := range Verdicts() {
		s.Counts[v] = 0
	}
	for _, pr := range pairs {
		s.Counts[pr.Verdict]++
		switch pr.Direction {
		case DirectionFaster:
			s.ReproducedFaster++
		case DirectionSlower:
			s.ReproducedSlower++
		}
	}

	var deltas, bv, cv []float64
	for p, pd := range passes {
		if !pd.Usable {
			continue
		}
		deltas = append(deltas, pd.DeltaPct)
		if pd.DeltaPct < 0 {
			s.Faster++
		}
		bv = append(bv, runs[lay.at(c, p, l, 0)].values...)
		cv = append(cv, runs[lay.at(c, p, l, a)].values...)
	}
	s.Passes = len(deltas)
	if len(deltas) > 0 {
		s.MedianDeltaPct = Median(deltas)
		s.MeanDeltaPct = mean(deltas)
	}
	if len(deltas) >= 3 {
		limit := math.Max(3*madScale*mad(deltas, s.MedianDeltaPct), 2*cfg.EffectFloorPct)
		for i := range passes {
			if pd := &passes[i]; pd.Usable && math.Abs(pd.DeltaPct-s.MedianDeltaPct) > limit {
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
		s.PooledDeltaPct, _ = DeltaPct(s.Base.Median, s.Cand.Median, lane.HigherIsBetter)
	}
	s.Verdict, s.Reason = laneVerdict(s, cfg)
	return s
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

// laneVerdict applies the lane rule (see the package doc) to a summary whose counts and
// deltas are filled in.
func laneVerdict(s LaneSummary, cfg Config) (LaneVerdict, string) {
	n := s.Pairs
	usable := n - s.Counts[Insufficient]
	floor := fmtFloor(cfg.EffectFloorPct)
	med, avg := fmtDelta(s.MedianDeltaPct), fmtDelta(s.MeanDeltaPct)
	switch {
	case s.Passes == 0:
		return LaneInsufficient, fmt.Sprintf("no usable pass: all %d pairs insufficient", n)
	case 2*usable < n:
		return LaneInsufficient, fmt.Sprintf("only %d of %d pairs usable; more than half lack data", usable, n)
	case 2*s.ReproducedFaster > n && s.ReproducedSlower == 0 && s.MedianDeltaPct <= -cfg.EffectFloorPct:
		return LaneReproducedFaster, fmt.Sprintf("%d of %d pairs REPRODUCED faster, none slower; median pass delta %s (mean %s) beyond the %s floor",
			s.ReproducedFaster, n, med, avg, floor)
	case 2*s.ReproducedSlower > n && s.ReproducedFaster == 0 && s.MedianDeltaPct >= cfg.EffectFloorPct:
		return LaneReproducedSlower, fmt.Sprintf("%d of %d pairs REPRODUCED slower, none faster; median pass delta %s (mean %s) beyond the %s floor",
			s.ReproducedSlower, n, med, avg, floor)
	case 2*s.Counts[DriftSuspected] >= usable:
		return LaneDrift, fmt.Sprintf("%d of %d usable pairs drift-suspected (median pass delta %s, mean %s): the result depends on order or time; check the host and rerun",
			s.Counts[DriftSuspected], usable, med, avg)
	case math.Abs(s.MedianDeltaPct) < cfg.EffectFloorPct:
		return LaneNeutral, fmt.Sprintf("median pass delta %s (mean %s) within the %s floor; pairs: %s", med, avg, floor, countsText(s))
	default:
		return LaneMixed, fmt.Sprintf("median pass delta %s (mean %s) beyond the %s floor, but the pairs do not reproduce it in one direction; pairs: %s",
			med, avg, floor, countsText(s))
	}
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

// fmtDelta formats a delta in percent with its sign: "-12.1%".
func fmtDelta(d float64) string { return fmt.Sprintf("%+.1f%%", d) }

// fmtFloor formats a threshold in percent: "3%".
func fmtFloor(f float64) string { return fmt.Sprintf("%g%%", f) }

// fmtCV formats a CV in percent: whole percents from 10%, one decimal below, "0%" for 0.
func fmtCV(cv float64) string {
	switch {
	case cv == 0:
		return "0%"
	case cv >= 10:
		return fmt.Sprintf("%.0f%%", cv)
	default:
		return fmt.Sprintf("%.1f%%", cv)
	}
}

func joinSemi(parts []string) string  { return strings.Join(parts, "; ") }
func joinComma(parts []string) string { return strings.Join(parts, ", ") }
