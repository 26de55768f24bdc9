package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
)

// MDEResult is whether the minimum detectable effect the drift check states is what the
// rule delivers, in one world of a fixed protocol: the median MDE the no-effect trials
// stated for their first lane, and the share of trials with that effect (the first lane
// slower by it) whose first lane the rule reproduced slower. At a true MDE that share is
// the configured power (80% by default).
type MDEResult struct {
	World  World
	Trials int
	// StatedPct is the median over the no-effect trials of the first lane's stated MDE.
	StatedPct float64
	// Reproduced counts the trials with the effect StatedPct whose first lane ended
	// reproduced slower.
	Reproduced int
	// Power is the configured power the MDE is stated at.
	Power float64
}

// EvaluateMDE runs trials of w without an effect to read the MDE the drift check states
// (driftcheck.Analyze at its default configuration, a fixed protocol: one look), then
// trials with the first lane's candidate slower by that MDE, and counts how often the
// rule reproduced it.
func EvaluateMDE(w World, trials int, seed uint64) (MDEResult, error) {
	cfg := driftcheck.DefaultConfig()
	out := MDEResult{World: w, Trials: trials, Power: cfg.Power}
	first := LaneName(0)
	var stated []float64
	aa := w
	aa.Effect = 0
	for t := range trials {
		rep, err := driftcheck.Analyze(aa.Input(NewRand(seed+uint64(t))), cfg)
		if err != nil {
			return out, err
		}
		for _, s := range rep.Pooled {
			if s.Lane == first && s.MDEPct > 0 {
				stated = append(stated, s.MDEPct)
			}
		}
	}
	if len(stated) == 0 {
		return out, fmt.Errorf("no trial of %+v stated an MDE", w)
	}
	slices.Sort(stated)
	out.StatedPct = stated[len(stated)/2]
	effect := w
	effect.Effect = out.StatedPct / 100
	for t := range trials {
		rep, err := driftcheck.Analyze(effect.Input(NewRand(seed+1_000_003+uint64(t))), cfg)
		if err != nil {
			return out, err
		}
		for _, s := range rep.Pooled {
			if s.Lane == first && s.Verdict == driftcheck.LaneReproducedSlower {
				out.Reproduced++
			}
		}
	}
	return out, nil
}

// MDEGrid is the seeded grid behind docs/methodology.md's MDE table: 4 lanes (so each
// lane's noise is moderated with the others', as in a run), 2 collections, 10 samples per
// run, 2% noise within a process, 1%, 2% and 4% between processes, at 3, 6 and 12 pairs
// per collection.
func MDEGrid() []World {
	var out []World
	for _, between := range []float64{0.01, 0.02, 0.04} {
		for _, pairs := range []int{3, 6, 12} {
			out = append(out, World{Lanes: 4, Collections: 2, Pairs: pairs, Samples: 10, Within: 0.02, Between: between, DriftKind: NoDrift})
		}
	}
	return out
}

// MDEMarkdown renders the MDE table: per world the stated MDE and the share of trials at
// that effect the rule reproduced.
func MDEMarkdown(results []MDEResult) string {
	var b strings.Builder
	b.WriteString("| process noise | pairs per collection | stated MDE (median) | trials | reproduced at that effect (%) |\n|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %.3g%% | %d | %.1f%% | %d | %s |\n", 100*r.World.Between, r.World.Pairs, r.StatedPct, r.Trials, pct(Rate{r.Reproduced, r.Trials}))
	}
	return b.String()
}

// MDERow is a row of the MDE table (MDEMarkdown) as MDEFindings reads it.
type MDERow struct {
	Noise         string
	Pairs, Trials int
	StatedPct     float64
	ReproducedPct float64
}

// ParseMDETable reads the rows of a table MDEMarkdown wrote.
func ParseMDETable(table string) ([]MDERow, error) {
	var out []MDERow
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("MDE table: no rows")
	}
	for _, line := range lines[2:] {
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if len(f) != 5 {
			return nil, fmt.Errorf("MDE table row %q: want 5 cells", line)
		}
		r := MDERow{Noise: f[0]}
		_, err := fmt.Sscanf(f[1]+" "+strings.TrimSuffix(f[2], "%")+" "+f[3]+" "+f[4], "%d %g %d %g", &r.Pairs, &r.StatedPct, &r.Trials, &r.ReproducedPct)
		if err != nil {
			return nil, fmt.Errorf("MDE table row %q: %w", line, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// MDEFindings states the MDE table: the range of the shares reproduced at the stated MDE
// against the power it is stated at.
func MDEFindings(rows []MDERow) string {
	if len(rows) == 0 {
		return "The MDE table has no rows.\n"
	}
	lo, hi := rows[0].ReproducedPct, rows[0].ReproducedPct
	for _, r := range rows {
		lo, hi = min(lo, r.ReproducedPct), max(hi, r.ReproducedPct)
	}
	return fmt.Sprintf("At the MDE it states, the rule reproduced the effect in %s to %s of the trials of each world (%d trials each, %d worlds), against the stated %s power.\n",
		num(lo), num(hi), rows[0].Trials, len(rows), num(math.Round(100*driftcheck.DefaultConfig().Power)))
}
