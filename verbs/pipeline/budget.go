package pipeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// A run's budget (docs/sequential.md, "The plan before round 1"): before round 1 a run
// says what it will measure, how long a round takes, how many rounds its budget buys and
// what each lane can resolve with them; during the run, a lane whose MDE stays above its
// floor at the rounds the budget buys is said to be undecidable early.

// PlanEvents is implemented by the Events that show a run's plan and notes. Both are
// optional: Events without them see only the run loop's events and the looks.
type PlanEvents interface {
	// Forecast is called before round 1, and again after round 1 when the first forecast
	// lacked the time per round or a lane's noise.
	Forecast(f Forecast)
	// Note is called with one line to show: a lane that cannot be decided within the
	// budget.
	Note(msg string)
}

// Forecast is what a run can reach: its lanes, the time per round, the rounds the
// budget buys and the MDE each lane can reach with them.
type Forecast struct {
	// After is the round the forecast was made after: 0 before round 1.
	After int
	// Arms, Collections, Samples and Warmup are the run's.
	Arms, Collections, Samples, Warmup int
	// Calibrated is the wall time of the iteration calibration (0 when none ran).
	Calibrated time.Duration
	// PerRound is the wall time of one round (one pass pair per collection of every lane),
	// from the iteration calibration or round 1; 0 when unknown.
	PerRound time.Duration
	// From says where PerRound comes from.
	From string
	// Budget and MaxPairs are the stopping rule's (Budget 0: none); Rounds is how many
	// rounds the budget buys, at most MaxPairs (MaxPairs when PerRound is unknown).
	Budget   time.Duration
	MaxPairs int
	Rounds   int
	// MinPairs is the round of the rule's first look: before it, rounds take no decision.
	MinPairs int
	// Sequential says the run looks after every round (a forecast after round 1 follows
	// when this one lacks something).
	Sequential bool
	// Shorter is the benchtime ShorterRound would take: a fifth of the lanes' benchtime
	// ("" when the lanes were not calibrated), and ShorterRound the time per round at it.
	Shorter      string
	ShorterRound time.Duration
	// Drift is the run's drift configuration, whose power the MDEs are at.
	Drift driftcheck.Config
	// Lanes has one line per lane.
	Lanes []LaneForecast
	// Advice says what would buy a better answer, one line each.
	Advice []string
	// SharedLowPct..SharedHighPct is the range of the lanes' noise after a round too early
	// for a lane's own (driftcheck.OwnDF below minOwnDF): the prior they share, not each
	// lane's, so it gives them no MDE; OwnAfter is the round after which a lane's own is
	// known (0: none shared).
	SharedLowPct, SharedHighPct float64
	OwnAfter                    int
}

// LaneForecast is what one lane can reach.
type LaneForecast struct {
	Lane string
	// Iterations is the lane's fixed b.N (0: none).
	Iterations int
	// PerRound is the lane's share of a round (0: unknown).
	PerRound time.Duration
	// NoisePct is the noise of one pass delta (0: unknown), NoiseFrom where it comes from
	// ("the host calibration", "round 1"), FloorPct the lane's floor, or its threshold
	// when Bar says so ("threshold"; "" is the floor).
	NoisePct, FloorPct float64
	NoiseFrom, Bar     string
	// MDEPct is the MDE at Forecast.Rounds rounds (0: unknown); PairsNeeded the rounds
	// that would bring it to the floor.
	MDEPct      float64
	PairsNeeded int
	// WithinDominates says most of the noise is within a process: more samples per
	// process lower it, more processes barely do.
	WithinDominates bool
}

// Known reports whether the forecast has the time per round and every lane's noise.
func (f Forecast) Known() bool {
	return f.PerRound > 0 && f.NoiseKnown()
}

// NoiseKnown reports whether the forecast has every lane's noise (and so its MDE).
func (f Forecast) NoiseKnown() bool {
	for _, l := range f.Lanes {
		if l.NoisePct <= 0 {
			return false
		}
	}
	return len(f.Lanes) > 0
}

// shorterBy is how much shorter a sample the advice proposes when the budget binds.
const shorterBy = 5

// noiseSource is one lane's noise components.
type noiseSource struct {
	noise, between, within float64
	from                   string
	// shared says the noise is the lanes' shared prior more than the lane's own (a look's
	// estimate with fewer than minOwnDF degrees of freedom of the lane's own).
	shared bool
}

// minOwnDF is the fewest degrees of freedom of its own a lane's noise needs before a
// forecast states the lane's MDE from it. With fewer, the moderated noise is the prior the
// lanes share (after round 1 with two collections every lane's own has 1 degree of
// freedom: google/uuid's 16 lanes all read 2.2-2.5% there, and one round later five of
// them had MDEs of 7.4-9.8%), and a 90% interval of a standard deviation from 2 degrees of
// freedom still spans a factor of 8.
const minOwnDF = 3

// ownAfter is the first round after round after whose look gives a lane minOwnDF degrees
// of freedom of its own, in the given collections.
func ownAfter(collections, after int) int {
	r := after + 1
	for driftcheck.OwnDF(max(collections, 1), r) < minOwnDF {
		r++
	}
	return r
}

// forecast makes a run's forecast from what is known: the iteration calibration, the
// host calibration (by lane name; nil when there is none), and the pooled evidence of a
// look (nil before round 1) with the look's measured elapsed time after round after.
func forecast(plan *receipt.Plan, cals []LaneCalibration, calibrated time.Duration, host *calibrate.File, rep *driftcheck.Report, after int, elapsed time.Duration) Forecast {
	p := plan.Protocol
	f := Forecast{After: after, Arms: len(plan.Arms), Collections: p.Collections, Samples: p.Samples, Warmup: p.Warmup,
		Calibrated: calibrated, MaxPairs: p.Passes / 2, Drift: plan.Drift}
	if s := p.Sequential; s != nil {
		f.Budget, f.MaxPairs, f.MinPairs, f.Sequential = s.Budget, s.MaxPairs, s.MinPairs, true
	}
	perPass := 2 * p.Collections // a round is a pass pair in every collection
	allTimed := len(plan.Lanes) > 0
	var target time.Duration
	for _, l := range plan.Lanes {
		lf := LaneForecast{Lane: l.Name, Iterations: l.Iterations, FloorPct: l.FloorPct}
		if lf.FloorPct <= 0 {
			lf.FloorPct = plan.Drift.EffectFloorPct
			if lf.FloorPct <= 0 {
				lf.FloorPct = driftcheck.DefaultConfig().EffectFloorPct
			}
		}
		if i := slices.IndexFunc(cals, func(c LaneCalibration) bool { return c.Lane == l.Name }); i >= 0 {
			c := cals[i]
			for _, a := range plan.Arms {
				lf.PerRound += c.ProcessTime(a.Name, p.Samples, p.Warmup) * time.Duration(perPass)
				short := c.Overhead + time.Duration(p.Samples+p.Warmup)*c.SampleTime(a.Name)/shorterBy
				f.ShorterRound += short * time.Duration(perPass)
			}
			target = max(target, c.Target)
		} else {
			allTimed = false
		}
		f.Lanes = append(f.Lanes, lf)
	}
	switch {
	case after > 0 && elapsed > 0:
		f.PerRound, f.From = elapsed/time.Duration(after), fmt.Sprintf("measured in round%s 1-%d", plural(after), after)
		if after == 1 {
			f.From = "measured in round 1"
		}
	case allTimed:
		for _, l := range f.Lanes {
			f.PerRound += l.PerRound
		}
		f.From = "from the iteration calibration"
	}
	if allTimed && target/shorterBy > 0 {
		f.Shorter = (target / shorterBy).String()
	} else {
		f.ShorterRound = 0
	}
	f.Rounds = f.MaxPairs
	if f.Budget > 0 && f.PerRound > 0 {
		f.Rounds = min(f.MaxPairs, max(int(f.Budget/f.PerRound), 1))
	}
	for i := range f.Lanes {
		lf := &f.Lanes[i]
		src, ok := laneNoise(plan, lf.Lane, host, rep, after)
		if !ok {
			continue
		}
		if src.shared {
			if f.OwnAfter == 0 || src.noise < f.SharedLowPct {
				f.SharedLowPct = src.noise
			}
			f.SharedHighPct = max(f.SharedHighPct, src.noise)
			f.OwnAfter = ownAfter(p.Collections, after)
			continue
		}
		lf.NoisePct, lf.NoiseFrom = src.noise, src.from
		pw := driftcheck.PowerAt(src.noise, lf.FloorPct, f.Rounds, max(p.Collections, 1), plan.Drift)
		lf.MDEPct, lf.PairsNeeded = pw.MDEPct, pw.PairsNeeded
		lf.WithinDominates = src.within > 0 && math.Pi/2*src.within*src.within/float64(max(p.Samples, 1)) > src.between*src.between
	}
	f.Advice = advice(f)
	return f
}

// laneNoise finds a lane's noise: from the look's evidence (the worst candidate) when it
// rests on the lane's own pairs, else the host calibration scaled to the run's samples,
// else the look's shared estimate (shared).
func laneNoise(plan *receipt.Plan, lane string, host *calibrate.File, rep *driftcheck.Report, after int) (noiseSource, bool) {
	var best noiseSource
	if rep != nil {
		for _, s := range rep.Pooled {
			if s.Lane == lane && s.NoisePct > best.noise && !math.IsInf(s.NoisePct, 0) {
				best = noiseSource{s.NoisePct, s.BetweenPct, s.WithinCVPct, fmt.Sprintf("round%s 1-%d", plural(after), after), s.DF < minOwnDF}
				if after == 1 {
					best.from = "round 1"
				}
			}
		}
		if best.noise > 0 && !best.shared {
			return best, true
		}
	}
	if host != nil {
		if c, ok := host.Lane(plan.Experiment, lane); ok && c.NoisePct > 0 {
			n := driftcheck.NoiseOf(c.BetweenPct, c.WithinCVPct, plan.Protocol.Samples)
			return noiseSource{noise: n, between: c.BetweenPct, within: c.WithinCVPct, from: "the host calibration"}, true
		}
	}
	return best, best.noise > 0
}

// advice says what would buy a better answer: fewer benchmarks or a larger budget when
// the budget binds, more samples per process when the noise within a process dominates.
func advice(f Forecast) []string {
	var out []string
	var short, within []string
	need := 0
	for _, l := range f.Lanes {
		// PairsNeeded is 0 when the rounds resolve the floor.
		if l.MDEPct > 0 && l.PairsNeeded > f.Rounds {
			short = append(short, l.Lane)
			if l.PairsNeeded > need && l.PairsNeeded < 100_000 {
				need = l.PairsNeeded
			}
			if l.WithinDominates {
				within = append(within, l.Lane)
			}
		}
	}
	if f.Budget > 0 && f.PerRound > 0 && f.Rounds < f.MaxPairs {
		out = append(out, fmt.Sprintf("the %s budget buys %d of %d rounds: select fewer benchmarks (--bench; each lane costs about %s a round) or raise the budget (--budget %s runs all %d)",
			f.Budget, f.Rounds, f.MaxPairs, (f.PerRound/time.Duration(max(len(f.Lanes), 1))).Round(time.Millisecond),
			human.RoundUp(f.PerRound*time.Duration(f.MaxPairs)), f.MaxPairs))
	}
	if f.Budget > 0 && f.Rounds < f.MaxPairs && f.Shorter != "" && f.ShorterRound > 0 && f.ShorterRound < f.PerRound*2/3 {
		out = append(out, fmt.Sprintf("a benchtime of %s (--benchtime, harness.benchtime) makes a round about %s, so the budget buys %d rounds; every arm still runs one N, at more noise within a process",
			f.Shorter, f.ShorterRound.Round(100*time.Millisecond), min(f.MaxPairs, max(int(f.Budget/f.ShorterRound), 1))))
	}
	if len(short) > 0 && f.PerRound > 0 {
		msg := fmt.Sprintf("%d of %d lanes cannot reach their %s in %d rounds at this noise", len(short), len(f.Lanes), cmp.Or(f.Lanes[0].Bar, "floor"), f.Rounds)
		if need > f.Rounds {
			msg += fmt.Sprintf("; the noisiest of them would need about %d rounds (%s)", need, human.RoundUp(f.PerRound*time.Duration(need)))
		}
		out = append(out, msg)
	}
	if len(within) > 0 {
		out = append(out, fmt.Sprintf("%s: most of the noise is within a process: more samples per process (--samples %d) lower it more than more rounds", names(within), 2*f.Samples))
	}
	return out
}

// Lines renders the forecast for a person, one line each.
func (f Forecast) Lines() []string {
	when := "plan"
	if f.After > 0 {
		when = fmt.Sprintf("plan after round %d", f.After)
	}
	head := fmt.Sprintf("%s: %d lanes x %d arms, %d samples after %d warmup per process, %d collections", when, len(f.Lanes), f.Arms, f.Samples, f.Warmup, f.Collections)
	if f.Calibrated > 0 {
		head += fmt.Sprintf("; iteration counts fixed in %s", f.Calibrated.Round(100*time.Millisecond))
	}
	out := []string{head}
	switch {
	case f.PerRound > 0 && f.Budget > 0:
		line := fmt.Sprintf("about %s per round (%s); the %s budget buys %d of at most %d rounds",
			f.PerRound.Round(100*time.Millisecond), f.From, f.Budget, f.Rounds, f.MaxPairs)
		if f.Sequential && f.Rounds < f.MaxPairs && len(f.Lanes) > 1 {
			line += fmt.Sprintf(" of all %d lanes; lanes decided early leave more to the rest (each look says how many)", len(f.Lanes))
		}
		out = append(out, line)
	case f.PerRound > 0:
		out = append(out, fmt.Sprintf("about %s per round (%s); %d rounds, about %s", f.PerRound.Round(100*time.Millisecond), f.From, f.Rounds,
			human.RoundUp(f.PerRound*time.Duration(f.Rounds))))
	default:
		out = append(out, fmt.Sprintf("time per round unknown until round 1 ends; at most %d rounds", f.MaxPairs))
	}
	if !slices.ContainsFunc(f.Lanes, func(l LaneForecast) bool { return l.MDEPct > 0 }) {
		// No lane's noise yet: one line names them all.
		var ls []string
		for _, l := range f.Lanes {
			if l.Iterations > 0 {
				ls = append(ls, fmt.Sprintf("%s (%dx)", l.Lane, l.Iterations))
			} else {
				ls = append(ls, l.Lane)
			}
		}
		what := "MDE known after round " + strconv.Itoa(ownAfter(f.Collections, f.After))
		if f.OwnAfter > 0 {
			what = fmt.Sprintf("MDE known after round %d (round %d gives a lane too few pairs of its own; the noise the lanes share so far is %s)",
				f.OwnAfter, f.After, noiseRange(f.SharedLowPct, f.SharedHighPct))
		}
		if !f.Sequential {
			what = "MDE unknown (no host calibration of the lanes: flipbench calibrate measures their noise)"
		}
		return append(append(out, "  lanes: "+strings.Join(ls, ", ")+"; "+what), adviceLines(f)...)
	}
	for _, l := range f.Lanes {
		line := "  " + l.Lane
		if l.Iterations > 0 {
			line += fmt.Sprintf(" (%dx)", l.Iterations)
		}
		switch {
		case l.MDEPct > 0:
			line += fmt.Sprintf(": MDE %s at %d round%s (noise %.1f%% from %s), %s %g%%", mdeText(l.MDEPct), f.Rounds, plural(f.Rounds), l.NoisePct, l.NoiseFrom, cmp.Or(l.Bar, "floor"), l.FloorPct)
		case f.OwnAfter > 0:
			line += ": MDE known after round " + strconv.Itoa(f.OwnAfter)
		case f.Sequential:
			line += ": MDE known after round " + strconv.Itoa(ownAfter(f.Collections, f.After))
		default:
			line += ": MDE unknown (no host calibration of the lane: flipbench calibrate measures its noise)"
		}
		out = append(out, line)
	}
	return append(out, adviceLines(f)...)
}

// noiseRange writes a range of noise levels: "2.2%-2.5%", or one level.
func noiseRange(lo, hi float64) string {
	if human.Percent(lo) == human.Percent(hi) {
		return human.Percent(lo)
	}
	return human.Percent(lo) + "-" + human.Percent(hi)
}

// adviceLines prefixes the forecast's advice.
func adviceLines(f Forecast) []string {
	var out []string
	for _, a := range f.Advice {
		out = append(out, "advice: "+a)
	}
	return out
}

// mdeText writes an MDE, "more than 100%" beyond it (a factor the run cannot resolve).
func mdeText(pct float64) string {
	if pct > 100 {
		return "above 100%"
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// Budget is what a sequential run has spent and may still spend, at a look.
type Budget struct {
	// Rounds measured so far, and their measured wall time.
	Rounds  int
	Elapsed time.Duration
	// PerRound is the time one more round takes (the last round's, for the lanes still
	// measured); 0 means the mean round so far.
	PerRound time.Duration
	// The stopping rule's: at most MaxPairs rounds, no round started past Budget (0:
	// none).
	MaxPairs int
	Budget   time.Duration
	// Collections is the run's number of collections.
	Collections int
}

// Reach returns the rounds a run can measure in all: MaxPairs, or fewer when the budget
// ends first at the time per round (PerRound, else the mean round so far).
func (b Budget) Reach() int {
	if b.Budget <= 0 || b.Rounds <= 0 || b.Elapsed <= 0 {
		return b.MaxPairs
	}
	per := b.PerRound
	if per <= 0 {
		per = b.Elapsed / time.Duration(b.Rounds)
	}
	more := 0
	if left := b.Budget - b.Elapsed; left > 0 {
		more = int(left / per)
	}
	return max(min(b.MaxPairs, b.Rounds+more), b.Rounds)
}

// BudgetOf returns the budget of a plan's sequential rule at look l.
func BudgetOf(plan *receipt.Plan, l receipt.Look) Budget {
	b := Budget{Rounds: l.Round, Elapsed: l.Elapsed, MaxPairs: plan.Protocol.Passes / 2, Collections: plan.Protocol.Collections}
	if s := plan.Protocol.Sequential; s != nil {
		b.MaxPairs, b.Budget = s.MaxPairs, s.Budget
	}
	return b
}

// Undecidable returns the lanes of a look's evidence that cannot be decided within the
// budget at their measured noise. A lane is undecidable when it is not decided yet, the
// rounds the budget buys (Budget.Reach) do not resolve its floor at its noise
// (driftcheck.PowerAt: its MDE stays above the floor, it needs more pairs than that),
// and its interval at those rounds, centred on its estimate, would still reach inside
// the floor: no verdict of neutral or reproduced is in reach. The noise it is judged at
// is the optimistic end of its estimate (driftcheck.NoiseAtLeast): a noise measured from a few
// pairs is too rough to give up on. Lanes without a noise estimate are left out. A lane
// undecidable for any candidate is listed once.
func Undecidable(rep driftcheck.Report, b Budget) []receipt.UndecidableLane {
	reach := b.Reach()
	if reach < 1 || b.Collections < 1 {
		return nil
	}
	half := rep.Config
	half.Power = 0.5 // the MDE at power 1/2 is the interval's half-width
	var out []receipt.UndecidableLane
	for _, s := range rep.Pooled {
		if s.Verdict.Decided() || !s.Bounded || !(s.NoisePct > 0) || math.IsInf(s.NoisePct, 0) ||
			slices.ContainsFunc(out, func(u receipt.UndecidableLane) bool { return u.Lane == s.Lane }) {
			continue
		}
		floor := s.FloorPct
		if floor <= 0 {
			floor = rep.Config.EffectFloorPct
		}
		noise := driftcheck.NoiseAtLeast(s.NoisePct, s.DFUsed, undecidableConfidence)
		pw := driftcheck.PowerAt(noise, floor, reach, b.Collections, rep.Config)
		mde := pw.MDEPct
		// The interval's half-width at reach: today's, scaled as the MDE scales from today
		// to reach at the optimistic noise (today's half-width and MDE are both in
		// proportion to the noise, so their ratio holds at it); without today's, the MDE
		// at power 1/2.
		hw := driftcheck.PowerAt(noise, floor, reach, b.Collections, half).MDEPct
		if now := (s.CIHighPct - s.CILowPct) / 2; s.MDEPct > 0 && now > 0 && !math.IsInf(now, 0) {
			hw = now * mde / s.MDEPct
		}
		// PairsNeeded is 0 when reach pairs resolve the floor.
		if pw.PairsNeeded <= reach || math.Abs(s.EstimatePct)-hw > floor {
			continue
		}
		out = append(out, receipt.UndecidableLane{Lane: s.Lane, Reach: reach, MaxPairs: b.MaxPairs, MDEPct: mde, FloorPct: floor})
	}
	return out
}

// UndecidableNote says in one line what a look found of lanes that cannot be decided
// within the budget: "2 lanes cannot be decided within the budget (4 rounds) at this
// noise: Scan (MDE 12.1%, floor 3%), ...; they are measured no more, ...", or, for lanes the
// decision rule reads, that they go on being measured. "" for no lanes.
func UndecidableNote(us []receipt.UndecidableLane) string {
	if len(us) == 0 {
		return ""
	}
	var stopped, kept []receipt.UndecidableLane
	for _, u := range us {
		if u.Stopped {
			stopped = append(stopped, u)
		} else {
			kept = append(kept, u)
		}
	}
	var parts []string
	if len(stopped) > 0 {
		they := map[bool]string{true: "it is", false: "they are"}[len(stopped) == 1]
		parts = append(parts, undecidableList(stopped)+"; "+they+" measured no more, and the rounds go to the lanes that can still be decided")
	}
	if len(kept) > 0 {
		what := "they go on"
		if len(kept) == 1 {
			what = "it goes on"
		}
		parts = append(parts, undecidableList(kept)+"; "+what+" being measured while the budget lasts, narrowing what is ruled out, and will end undecided unless the noise drops")
	}
	return strings.Join(parts, "; ") + " (select fewer benchmarks, raise --budget or --samples)"
}

// undecidableList names undecidable lanes with their MDE and floor: "2 lanes cannot be
// decided within the budget (4 rounds) at this noise: Scan (MDE 12.1%, floor 3%), ...".
func undecidableList(us []receipt.UndecidableLane) string {
	const show = 6
	var parts []string
	for _, u := range us[:min(len(us), show)] {
		parts = append(parts, fmt.Sprintf("%s (MDE %s, floor %g%%)", u.Lane, mdeText(u.MDEPct), u.FloorPct))
	}
	list := strings.Join(parts, ", ")
	if len(us) > show {
		list += fmt.Sprintf(" and %d more", len(us)-show)
	}
	return fmt.Sprintf("%d lane%s cannot be decided within %s at this noise: %s", len(us), plural(len(us)), reachText(us[0]), list)
}

// reachText says what bounds a run's rounds: "max-pairs (20 rounds)", "the budget (4
// rounds)".
func reachText(u receipt.UndecidableLane) string {
	if u.Reach >= u.MaxPairs {
		return fmt.Sprintf("max-pairs (%d rounds)", u.MaxPairs)
	}
	return fmt.Sprintf("the budget (%d round%s)", u.Reach, plural(u.Reach))
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// names lists lane names, at most five.
func names(ls []string) string {
	if len(ls) <= 5 {
		return strings.Join(ls, ", ")
	}
	return strings.Join(ls[:5], ", ") + fmt.Sprintf(" and %d more", len(ls)-5)
}

// undecidableConfidence is how sure a look must be that a lane's noise is at least the
// noise it is judged undecidable at (driftcheck.NoiseAtLeast).
const undecidableConfidence = 0.9
