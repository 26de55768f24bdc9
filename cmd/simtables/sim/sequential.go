package sim

import (
	"fmt"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
)

// SeqCell is one row of the sequential table: a host, an effect, and a stopping rule
// (a look after every round from MinPairs to MaxPairs).
type SeqCell struct {
	Within, Between    float64
	Effect             float64 // true relative change of the candidate's time
	MinPairs, MaxPairs int
}

// SeqResult is what a sequential cell's trials did, per lane and collection.
type SeqResult struct {
	Cell SeqCell
	// FalseFasterBy and FalseSlowerBy count, for each round r (index r), the trials that
	// had stopped with a collection reproduced the wrong way by round r (A/A only).
	FalseFasterBy, FalseSlowerBy []int
	// Right counts trials whose every collection reproduced the true direction at the
	// stop; Neutral those shown neutral; Undecided the rest.
	Right, Neutral, Undecided int
	// MeanPairs is the mean number of rounds run.
	MeanPairs float64
	// FixedRight is the share of trials in which a fixed protocol of FixedPairs rounds
	// (one look at alpha) reproduced the true direction in every collection, and
	// FixedPairs is the smallest fixed protocol of the candidate sizes that reaches the
	// sequential rule's power.
	FixedRight int
	FixedPairs int
	Trials     int
}

// prefix keeps the observations of the first r rounds (pairs) of every collection.
func prefix(in driftcheck.Input, r int) driftcheck.Input {
	out := in
	out.Observations = nil
	for _, o := range in.Observations {
		if (o.Pass+1)/2 <= r {
			out.Observations = append(out.Observations, o)
		}
	}
	return out
}

// settled reports whether a lane's pooled summary decides it: reproduced one way (in every
// collection, the estimate past the floor) or shown neutral; it returns the call.
func settled(r driftcheck.Report, lane string) (Call, bool) {
	calls := Flipbench(r, lane)
	if len(calls) == 0 || calls[0] == CallUndecided {
		return CallUndecided, false
	}
	return calls[0], true
}

// EvaluateSeq runs trials of one sequential cell: each trial draws MaxPairs rounds and
// looks after every round from MinPairs (errors spent over the looks), stopping the lane when it is
// settled; a fixed protocol of FixedPairs rounds (one look at alpha) is judged on the same
// data.
func EvaluateSeq(c SeqCell, trials int, seed uint64) SeqResult {
	res := SeqResult{Cell: c, FalseFasterBy: make([]int, c.MaxPairs+1), FalseSlowerBy: make([]int, c.MaxPairs+1), Trials: trials}
	w := World{Lanes: 1, Collections: 2, Pairs: c.MaxPairs, Samples: 15, Within: c.Within, Between: c.Between, Effect: c.Effect}
	seqCfg := driftcheck.Config{EffectFloorPct: FloorPct, MinPairs: c.MinPairs, MaxPairs: c.MaxPairs}
	lane := LaneName(0)
	truth := CallNeutral
	switch {
	case c.Effect > 0:
		truth = CallSlower
	case c.Effect < 0:
		truth = CallFaster
	}
	var fixedAt = map[int]int{}
	candidates := fixedSizes(c.MaxPairs)
	pairs := 0
	for t := range trials {
		in := w.Input(NewRand(seed + uint64(t)))
		call, stop := CallUndecided, c.MaxPairs
		for r := c.MinPairs; r <= c.MaxPairs; r++ {
			rep, err := driftcheck.Analyze(prefix(in, r), seqCfg)
			if err != nil {
				panic(err)
			}
			if got, ok := settled(rep, lane); ok {
				call, stop = got, r
				break
			}
		}
		pairs += stop
		if c.Effect == 0 {
			for r := stop; r <= c.MaxPairs; r++ {
				switch call {
				case CallFaster:
					res.FalseFasterBy[r]++
				case CallSlower:
					res.FalseSlowerBy[r]++
				}
			}
		}
		switch {
		case call == truth && truth != CallNeutral:
			res.Right++
		case call == CallNeutral:
			res.Neutral++
		default:
			res.Undecided++
		}
		for _, k := range candidates {
			rep, err := driftcheck.Analyze(prefix(in, k), driftcheck.Config{EffectFloorPct: FloorPct})
			if err != nil {
				panic(err)
			}
			if got, _ := settled(rep, lane); got == truth && truth != CallNeutral {
				fixedAt[k]++
			}
		}
	}
	res.MeanPairs = float64(pairs) / float64(trials)
	res.FixedPairs = c.MaxPairs
	res.FixedRight = fixedAt[c.MaxPairs]
	for _, k := range candidates {
		if fixedAt[k] >= res.Right {
			res.FixedPairs, res.FixedRight = k, fixedAt[k]
			break
		}
	}
	return res
}

// fixedSizes are the fixed protocols the sequential rule is compared with: 2, 3, 4, 6, 8,
// 12, ... rounds up to max.
func fixedSizes(maxPairs int) []int {
	var out []int
	for _, k := range []int{2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40} {
		if k <= maxPairs {
			out = append(out, k)
		}
	}
	if len(out) == 0 || out[len(out)-1] != maxPairs {
		out = append(out, maxPairs)
	}
	return out
}

// SeqGrid returns the cells of the sequential table: A/A and two effects, on a quiet and
// a noisy host, with a look after every pair up to 40. quick keeps the noisy host and 20
// pairs, for tests.
func SeqGrid(quick bool) []SeqCell {
	var out []SeqCell
	hosts := []struct{ w, b float64 }{{0.02, 0.01}, {0.10, 0.05}}
	maxPairs := 40
	if quick {
		hosts, maxPairs = hosts[1:], 20
	}
	for _, h := range hosts {
		for _, e := range []float64{0, -0.05, -0.15} {
			out = append(out, SeqCell{Within: h.w, Between: h.b, Effect: e, MinPairs: 2, MaxPairs: maxPairs})
		}
	}
	return out
}

// EvaluateSeqGrid evaluates every sequential cell on all CPUs, each with its own seeds.
func EvaluateSeqGrid(cells []SeqCell, trials int) []SeqResult {
	out := make([]SeqResult, len(cells))
	parallel(len(cells), func(i int) { out[i] = EvaluateSeq(cells[i], trials, uint64(i)*7_000_003+11) })
	return out
}

// SeqMarkdown renders the sequential results as the table of docs/methodology.md.
func SeqMarkdown(results []SeqResult) string {
	var b strings.Builder
	b.WriteString("| within | between | true effect | max pairs | mean pairs used | reproduced the true way | shown neutral | undecided | fixed protocol with the same power |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		c := r.Cell
		fixed := "-"
		if c.Effect != 0 {
			fixed = fmt.Sprintf("%d pairs (%s)", r.FixedPairs, pct(Rate{r.FixedRight, r.Trials}))
		}
		fmt.Fprintf(&b, "| %.0f%% | %.0f%% | %+.0f%% | %d | %.1f | %s | %s | %s | %s |\n", c.Within*100, c.Between*100, c.Effect*100, c.MaxPairs,
			r.MeanPairs, pct(Rate{r.Right, r.Trials}), pct(Rate{r.Neutral, r.Trials}), pct(Rate{r.Undecided, r.Trials}), fixed)
	}
	b.WriteString("\nFalse reproduced verdicts in the A/A rows, counted by the round the run stopped at (cumulative; errors spent over the looks):\n\n")
	b.WriteString("| within | between | by round 2 | 4 | 8 | 16 | 24 | 32 | 40 |\n|---:|---:|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		c := r.Cell
		if c.Effect != 0 {
			continue
		}
		fmt.Fprintf(&b, "| %.0f%% | %.0f%% |", c.Within*100, c.Between*100)
		for _, k := range []int{2, 4, 8, 16, 24, 32, 40} {
			if k > c.MaxPairs {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(&b, " %s / %s |", pct(Rate{r.FalseFasterBy[k], r.Trials}), pct(Rate{r.FalseSlowerBy[k], r.Trials}))
		}
		b.WriteString("\n")
	}
	return b.String()
}
