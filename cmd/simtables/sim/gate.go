package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/gate"
)

// GateWorld is a CI gate run: Lanes guard lanes, the gate's default protocol and stopping
// rule (2 collections, 10 samples, rounds 2 to MaxPairs) at a threshold, noise within and
// between processes, and a true slowdown Regression (a fraction) of the first lane (0 for
// a no-op change).
type GateWorld struct {
	Name            string
	Lanes           int
	ThresholdPct    float64
	MaxPairs        int
	Within, Between float64
	Regression      float64
	// AR is the AR(1) coefficient of the host's level from one process to the next within
	// a round (0: independent processes, the level's spread Between either way).
	AR float64
	// Contaminated is the share of processes disturbed as in RuleWorld: every sample twice
	// as slow and five times as noisy.
	Contaminated float64
	// Shared makes the collections perfectly correlated: a process of a lane, pass and arm
	// runs at the same level in every collection (only its samples' noise differs). The
	// drift check counts the collections' degrees of freedom as independent, which such a
	// host breaks: these worlds show what that costs (docs/gate.md).
	Shared bool
}

// conditions names what a world adds to its process noise: "5% contaminated, AR(1) 0.7";
// empty for none.
func (w GateWorld) conditions() string {
	var parts []string
	if w.Contaminated > 0 {
		parts = append(parts, fmt.Sprintf("%.3g%% contaminated", 100*w.Contaminated))
	}
	if w.AR > 0 {
		parts = append(parts, fmt.Sprintf("AR(1) %g", w.AR))
	}
	if w.Shared {
		parts = append(parts, "collections perfectly correlated")
	}
	return strings.Join(parts, ", ")
}

// GateResult is what trials of a gate world ended with.
type GateResult struct {
	World                   GateWorld
	Trials                  int
	Pass, Regression, Rerun int
	Rounds                  int     // summed over trials
	MDEMaxPct               float64 // mean over trials of the first lane's MDE at the last look
	StatedCatchPct          float64 // mean stated catch rate of a 2x-threshold regression, over lanes passed at the last look
	stated                  int
}

// EvaluateGate runs trials of w through the real gate: the gate spec's resolved drift
// configuration, driftcheck after every round, gate.Pending to stop the lanes that
// passed or failed, and gate.Evaluate at the end.
func EvaluateGate(w GateWorld, trials int, seed uint64) (GateResult, error) {
	g, err := w.setup(w.MaxPairs)
	if err != nil {
		return GateResult{}, err
	}
	out := GateResult{World: w, Trials: trials}
	rule := gate.Rule{ThresholdPct: w.ThresholdPct}
	for t := range trials {
		rng := NewRand(seed + uint64(t))
		in := g.input(w.MaxPairs)
		rep, r, round, err := g.rounds(&in, rng, w, allLanes(in), 0, w.MaxPairs, rule)
		if err != nil {
			return out, err
		}
		out.Rounds += round
		switch r.Outcome {
		case gate.Pass:
			out.Pass++
		case gate.Regression:
			out.Regression++
		default:
			out.Rerun++
		}
		for _, f := range r.Findings {
			if f.CatchPct > 0 {
				out.StatedCatchPct += f.CatchPct
				out.stated++
			}
		}
		for _, p := range rep.Pooled {
			if p.Lane == in.Lanes[0].Name {
				out.MDEMaxPct += p.MDEMaxPct / float64(trials)
			}
		}
	}
	if out.stated > 0 {
		out.StatedCatchPct /= float64(out.stated)
	}
	return out, nil
}

// simGate is a simulated gate's resolved protocol and drift configuration: the gate
// spec's defaults, as flipbench gate resolves them, for a world's lanes and threshold.
type simGate struct {
	lanes                      []driftcheck.Lane
	samples, collections, minP int
	cfg                        driftcheck.Config // its Design for the rule's last look
}

// setup resolves the gate spec of w (its lanes, threshold and max-pairs) and designs its
// rule for a last look at round maxPairs.
func (w GateWorld) setup(maxPairs int) (*simGate, error) {
	var page strings.Builder
	fmt.Fprintf(&page, "harness: {kind: exec, build: [go, build, -o, \"{out}\", ./lane], command: [\"{bin}\", \"{lane}\"]}\nthreshold-pct: %g\nprotocol:\n  sequential: {min-pairs: 2, max-pairs: %d, budget: 10h}\nlanes:\n", w.ThresholdPct, w.MaxPairs)
	g := &simGate{}
	for i := range w.Lanes {
		fmt.Fprintf(&page, "  - name: %s\n", LaneName(i))
		g.lanes = append(g.lanes, driftcheck.Lane{Name: LaneName(i)})
	}
	gs, err := spec.ParseGate("sim-gate.yaml", []byte(page.String()))
	if err != nil {
		return nil, err
	}
	res, err := gs.Experiment("base", "cand").Resolve(spec.Overrides{})
	if err != nil {
		return nil, err
	}
	g.samples, g.collections, g.cfg = res.Protocol.Samples, res.Protocol.Collections, res.Drift
	g.minP = g.cfg.MinPairs
	return g, g.design(maxPairs)
}

// design sets the rule's last look at round maxPairs.
func (g *simGate) design(maxPairs int) error {
	g.cfg.MaxPairs = maxPairs
	d, err := driftcheck.NewDesign(g.cfg, g.collections)
	g.cfg.Design = d
	return err
}

// input is an empty drift check input for rounds up to maxPairs.
func (g *simGate) input(maxPairs int) driftcheck.Input {
	return driftcheck.Input{Base: Base, Candidates: []string{Cand}, Lanes: g.lanes, Collections: g.collections, Passes: 2 * maxPairs}
}

// allLanes is every lane of in, all running.
func allLanes(in driftcheck.Input) map[string]bool {
	out := map[string]bool{}
	for _, l := range in.Lanes {
		out[l.Name] = true
	}
	return out
}

// rounds measures rounds from+1 to to of the running lanes of world w into in, with a
// look from the rule's first look on (or from from+1, for a continued run, whose earlier
// rounds looked already), until no lane is pending; it returns the last look's analysis
// and decision, and the rounds measured in all.
func (g *simGate) rounds(in *driftcheck.Input, rng *rand.Rand, w GateWorld, running map[string]bool, from, to int, rule gate.Rule) (driftcheck.Report, gate.Result, int, error) {
	var rep driftcheck.Report
	var res gate.Result
	round := from
	for round < to && len(running) > 0 {
		round++
		w.measureRound(in, rng, running, round, g.samples)
		if from == 0 && round < g.minP {
			continue
		}
		var err error
		if rep, err = driftcheck.Analyze(*in, g.cfg); err != nil {
			return rep, res, round, err
		}
		res = gate.Evaluate(rep, nil, rule)
		running = map[string]bool{}
		for _, l := range res.Pending() {
			running[l] = true
		}
	}
	return rep, res, round, nil
}

// measureRound appends one round of pass pairs, in every collection, of the running lanes
// to in: each process at a level drawn from the noise between processes (the first lane's
// candidate slower by Regression), each sample with the noise within.
func (w GateWorld) measureRound(in *driftcheck.Input, rng *rand.Rand, running map[string]bool, round, samples int) {
	host := 0.0 // the AR(1) host level, carried from process to process
	innov := w.Between * math.Sqrt(1-w.AR*w.AR)
	type proc struct {
		lane, pass int
		arm        string
	}
	type state struct{ level, within float64 }
	var shared map[proc]state // a Shared world's processes, drawn in collection 1
	if w.Shared {
		shared = map[proc]state{}
	}
	for c := 1; c <= in.Collections; c++ {
		for i, l := range in.Lanes {
			if !running[l.Name] {
				continue
			}
			for _, p := range []int{2*round - 1, 2 * round} {
				for _, arm := range []string{Base, Cand} {
					st, ok := shared[proc{i, p, arm}]
					if !ok {
						host = w.AR*host + innov*rng.NormFloat64()
						st = state{math.Exp(host), w.Within}
						// Only a world with contaminated processes draws for them, so the
						// others keep their random numbers.
						if w.Contaminated > 0 && rng.Float64() < w.Contaminated {
							st = state{ContaminatedSlowdown * st.level, ContaminatedNoisier * st.within}
						}
						if shared != nil {
							shared[proc{i, p, arm}] = st
						}
					}
					level, within := st.level, st.within
					if arm == Cand && i == 0 {
						level *= 1 + w.Regression
					}
					xs := make([]float64, samples)
					for j := range xs {
						xs[j] = math.Max(100*level*(1+within*rng.NormFloat64()), 1e-3)
					}
					in.Observations = append(in.Observations, driftcheck.Observation{Collection: c, Pass: p, Lane: l.Name, Arm: arm, Samples: xs})
				}
			}
		}
	}
}

// ContinuedResult is what trials of a gate cut short and then continued ended with.
type ContinuedResult struct {
	World GateWorld
	// Cut is the rounds of the first run (its budget's), Continuations the most reruns
	// that continue it, each of up to World.MaxPairs rounds.
	Cut, Continuations, Trials int
	// FirstRerun counts the first runs that ended undecided; Pass, Regression and Rerun
	// the final outcomes over the first run and its continuations.
	FirstRerun              int
	Pass, Regression, Rerun int
	// Rounds is the mean rounds in all, over trials.
	Rounds float64
}

// EvaluateContinuedGate runs trials of a gate whose first run is cut short after cut
// rounds (a budget spent early), then continued (flipbench gate --continue) up to
// continuations times, each continuation adding up to w.MaxPairs rounds and judging all
// the data with the real gate code under gate.Anytime, until a run ends pass or fail.
func EvaluateContinuedGate(w GateWorld, cut, continuations, trials int, seed uint64) (ContinuedResult, error) {
	out := ContinuedResult{World: w, Cut: cut, Continuations: continuations, Trials: trials}
	g, err := w.setup(w.MaxPairs)
	if err != nil {
		return out, err
	}
	totalRounds := 0
	for t := range trials {
		rng := NewRand(seed + uint64(t))
		// The first run: the gate's rule to w.MaxPairs, cut after cut rounds.
		if err := g.design(w.MaxPairs); err != nil {
			return out, err
		}
		in := g.input(w.MaxPairs)
		_, res, round, err := g.rounds(&in, rng, w, allLanes(in), 0, cut, gate.Rule{ThresholdPct: w.ThresholdPct})
		if err != nil {
			return out, err
		}
		if len(res.Pending()) > 0 {
			out.FirstRerun++
		}
		// Continuations, each up to w.MaxPairs more rounds of every lane, judged by
		// confidence sequences over all the data.
		// The sequences are tuned once, at the first continuation (pipeline.Prior.TuneFor).
		tuned := round + w.MaxPairs
		for k := 0; k < continuations && len(res.Pending()) > 0; k++ {
			prior := round
			if err := g.design(prior + w.MaxPairs); err != nil {
				return out, err
			}
			in.Passes = 2 * (prior + w.MaxPairs)
			anytime := gate.Rule{ThresholdPct: w.ThresholdPct, Anytime: &gate.Anytime{PriorRounds: prior, TunedRounds: tuned}}
			if _, res, round, err = g.rounds(&in, rng, w, allLanes(in), prior, prior+w.MaxPairs, anytime); err != nil {
				return out, err
			}
		}
		totalRounds += round
		switch res.Outcome {
		case gate.Pass:
			out.Pass++
		case gate.Regression:
			out.Regression++
		default:
			out.Rerun++
		}
	}
	out.Rounds = float64(totalRounds) / float64(max(trials, 1))
	return out, nil
}

// GateGrid is the seeded grid behind docs/gate.md's table: 1, 5 and 20 lanes at a 3%
// threshold, the process noise chosen so that the MDE at the last look (20 rounds) runs
// from the floor (the MDE includes it, so at a 3% threshold the ratio cannot fall below
// about 1: the quietest row stands for every ratio under it) to three times the threshold,
// each with a no-op change and with the first lane twice the threshold slower.
func GateGrid() []GateWorld {
	out := gateWorlds([]int{1, 5, 20}, []float64{0.005, 0.01, 0.02, 0.04, 0.06, 0.09, 0.11})
	// Then 5 and 20 lanes at 2% process noise with 5% of the processes contaminated, on an
	// independent and on an AR(1) 0.7 host (the rule table's hard worlds).
	for _, ar := range []float64{0, 0.7} {
		for _, w := range gateWorlds([]int{5, 20}, []float64{0.02}) {
			w.Contaminated, w.AR = 0.05, ar
			out = append(out, w)
		}
	}
	// Then 1 and 5 lanes whose collections' processes are identical (Shared), at 11%
	// process noise: what the family bound's design assumes away (docs/gate.md).
	for _, w := range gateWorlds([]int{1, 5}, []float64{0.11}) {
		w.Shared = true
		out = append(out, w)
	}
	return out
}

// gateWorlds is every combination of lanes and process noise at a 3% threshold, 2% sample
// noise and 20 rounds, each a no-op and with the first lane twice the threshold slower.
func gateWorlds(lanes []int, betweens []float64) []GateWorld {
	var out []GateWorld
	for _, n := range lanes {
		for _, between := range betweens {
			for _, reg := range []float64{0, 0.06} {
				name := "no-op"
				if reg > 0 {
					name = "first lane +6%"
				}
				out = append(out, GateWorld{Name: name, Lanes: n, ThresholdPct: 3, MaxPairs: 20, Within: 0.02, Between: between, Regression: reg})
			}
		}
	}
	return out
}

// GateMarkdown renders the gate table: for every world its realised MDE / threshold ratio,
// the outcomes and the mean rounds; for a no-op world the catch rate the gate stated for a
// 2x-threshold regression, beside the rate the matching regression world measured.
func GateMarkdown(results []GateResult) string {
	var b strings.Builder
	b.WriteString("| lanes | process noise | MDE / threshold | change | trials | pass | regression (exit 3) | rerun (exit 4) | mean rounds | stated catch at 2x |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		stated := "-"
		if r.World.Regression == 0 && r.StatedCatchPct > 0 {
			stated = fmt.Sprintf("%.0f%%", r.StatedCatchPct)
		}
		noise := fmt.Sprintf("%.3g%%", 100*r.World.Between)
		if c := r.World.conditions(); c != "" {
			noise += ", " + c
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f | %s | %d | %s | %s | %s | %.1f | %s |\n", r.World.Lanes, noise,
			r.MDEMaxPct/r.World.ThresholdPct, r.World.Name, r.Trials, pct(Rate{r.Pass, r.Trials}), pct(Rate{r.Regression, r.Trials}),
			pct(Rate{r.Rerun, r.Trials}), float64(r.Rounds)/float64(r.Trials), stated)
	}
	return b.String()
}

// ContinuedGrid is the seeded grid behind docs/gate.md's table of continued gates: 1 and 5
// lanes at a 3% threshold, 2% and 4% process noise, each a no-op and with the first lane
// twice the threshold slower, every first run cut after 3 of 20 rounds.
func ContinuedGrid() []GateWorld {
	return gateWorlds([]int{1, 5}, []float64{0.02, 0.04})
}

// ContinuedMarkdown renders continued gates as a markdown table.
func ContinuedMarkdown(results []ContinuedResult) string {
	var b strings.Builder
	b.WriteString("| lanes | process noise | change | trials | first run undecided | pass | regression (exit 3) | rerun (exit 4) | mean rounds in all |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %d | %.0f%% | %s | %d | %s | %s | %s | %s | %.1f |\n", r.World.Lanes, 100*r.World.Between, r.World.Name, r.Trials,
			pct(Rate{r.FirstRerun, r.Trials}), pct(Rate{r.Pass, r.Trials}), pct(Rate{r.Regression, r.Trials}), pct(Rate{r.Rerun, r.Trials}), r.Rounds)
	}
	return b.String()
}
