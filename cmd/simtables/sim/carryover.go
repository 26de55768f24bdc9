package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
)

// CarryWorld is an experiment whose arms are identical builds on a host where a run's
// place costs something: FirstCost slows the first run of each lane in a pass (a cold
// cache, a file the first run creates), Heat slows every process that follows one of
// the last arm (a build that heats the CPU). Any lane verdict other than neutral or
// undecided is then false, unless Effect makes the first candidate really slower.
type CarryWorld struct {
	Name               string
	Arms, Lanes        int
	Collections, Pairs int
	Samples            int
	Within, Between    float64 // sample and process noise, as fractions
	FirstCost, Heat    float64 // as fractions: 0.1 is 10% slower
	// Effect makes the first candidate really slower by this fraction (0: every arm the same).
	Effect               float64
	Mirror, SeparateArms bool // Mirror: the schedule before designs (one mirrored order per pass)
}

// CarryResult counts the false reproduced pooled lane verdicts of a CarryWorld over its
// trials, and how often the carryover was detected.
type CarryResult struct {
	World           CarryWorld
	Trials          int
	LaneVerdicts    int // pooled lane verdicts, one per lane and candidate per trial
	FalseReproduced int // reproduced verdicts of arms without an effect
	Found           int // reproduced-slower verdicts of the first candidate with an Effect
	Undecided       int
	Verdicts        map[driftcheck.LaneVerdict]int
	Detected        int // lanes whose carryover was detected
	Fits            int // lanes fitted
}

// EvaluateCarry runs trials of w through the real schedule (harness.Schedule) and the
// real analysis (driftcheck.Analyze) at the default thresholds.
func EvaluateCarry(w CarryWorld, trials int, seed uint64) (CarryResult, error) {
	arms := []string{Base}
	for i := 1; i < w.Arms; i++ {
		arms = append(arms, fmt.Sprintf("cand%c", 'A'+i-1))
	}
	var lanes []string
	var dl []driftcheck.Lane
	for i := range w.Lanes {
		lanes = append(lanes, LaneName(i))
		dl = append(dl, driftcheck.Lane{Name: LaneName(i)})
	}
	out := CarryResult{World: w, Trials: trials, Verdicts: map[driftcheck.LaneVerdict]int{}}
	for t := range trials {
		rng := NewRand(seed + uint64(t))
		runs := harness.Schedule(arms, lanes, w.Collections, 2*w.Pairs, int64(seed)+int64(t), w.SeparateArms)
		in := driftcheck.Input{Base: Base, Candidates: arms[1:], Lanes: dl, Collections: w.Collections, Passes: 2 * w.Pairs}
		for i, r := range runs {
			if w.Mirror { // every pass one order, the arms mirrored in the second
				r = mirrored(runs, i, arms)
			}
			level := math.Exp(w.Between * rng.NormFloat64())
			if r.Arm == arms[1] {
				level *= 1 + w.Effect
			}
			if r.Position == 1 {
				level *= 1 + w.FirstCost
			}
			last := "" // the previous process, in any pass, as the receipt records it
			if i > 0 {
				last = runs[i-1].Arm
				if w.Mirror {
					last = mirrored(runs, i-1, arms).Arm
				}
			}
			if last == arms[len(arms)-1] {
				level *= 1 + w.Heat
			}
			xs := make([]float64, w.Samples)
			for j := range xs {
				xs[j] = 100 * level * (1 + w.Within*rng.NormFloat64())
			}
			o := driftcheck.Observation{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane, Arm: r.Arm, Samples: xs, After: last}
			if !w.Mirror {
				o.Order, o.Position = r.Order, r.Position
			}
			in.Observations = append(in.Observations, o)
		}
		rep, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
		if err != nil {
			return out, err
		}
		for _, s := range rep.Pooled {
			out.LaneVerdicts++
			out.Verdicts[s.Verdict]++
			real := w.Effect != 0 && s.Arm == arms[1]
			switch s.Verdict {
			case driftcheck.LaneReproducedSlower:
				if real {
					out.Found++
				} else {
					out.FalseReproduced++
				}
			case driftcheck.LaneReproducedFaster:
				out.FalseReproduced++
			case driftcheck.LaneUndecided:
				out.Undecided++
			}
		}
		for _, co := range rep.Carryover {
			if co.Model == driftcheck.CarryPlace || co.Model == driftcheck.CarryPlaceAndAfter {
				out.Fits++
			}
			if co.Detected {
				out.Detected++
			}
		}
	}
	return out, nil
}

// mirrored returns run i of the schedule as the schedule before designs ran it: in each
// lane group of a pass the arms as listed in odd passes and mirrored in even ones.
func mirrored(runs []receipt.Run, i int, arms []string) receipt.Run {
	r := runs[i]
	pos := r.Position - 1 // the run's slot in its lane group
	if r.Pass%2 == 1 {
		r.Arm, r.Order = arms[pos], driftcheck.OrderForward
	} else {
		r.Arm, r.Order = arms[len(arms)-1-pos], driftcheck.OrderReverse
	}
	return r
}

// CarryMarkdown renders the carryover table of docs/methodology.md.
func CarryMarkdown(results []CarryResult) string {
	var b strings.Builder
	b.WriteString("| world | schedule | trials | lane verdicts | false reproduced | undecided | carryover detected |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		sched := "balanced (Williams, lanes alternating)"
		if r.World.Mirror {
			sched = "mirrored (before designs)"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s |\n", r.World.Name, sched, r.Trials, r.LaneVerdicts,
			pct(Rate{r.FalseReproduced, r.LaneVerdicts}), pct(Rate{r.Undecided, r.LaneVerdicts}), pct(Rate{r.Detected, r.Trials * r.World.Lanes}))
	}
	return b.String()
}

// CarryGrid is the seeded grid of worlds behind the carryover table: 2, 3 and 4 identical
// arms with a 10% first-run cost, 5% arm-tied heat, or both, on a host with 2% sample
// and 1% process noise.
func CarryGrid() []CarryWorld {
	var out []CarryWorld
	for _, k := range []int{2, 3, 4} {
		for _, c := range []struct {
			name        string
			first, heat float64
		}{{"first run +10%", 0.10, 0}, {"heat +5%", 0, 0.05}, {"both", 0.10, 0.05}} {
			out = append(out, CarryWorld{Name: fmt.Sprintf("%d arms, %s", k, c.name), Arms: k, Lanes: 4, Collections: 2, Pairs: 4,
				Samples: 10, Within: 0.02, Between: 0.01, FirstCost: c.first, Heat: c.heat})
		}
	}
	return out
}
