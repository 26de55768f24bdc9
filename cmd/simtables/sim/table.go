package sim

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/flipbench/flipbench/driftcheck"
)

// Cell is one row of the error-rate table: a kind of host and a protocol.
type Cell struct {
	Within, Between float64
	DriftKind       DriftKind
	Drift           float64
	Pairs           int
}

// World returns the cell's A/A world: 2 collections of Pairs pairs, 15 samples per run.
func (c Cell) World() World {
	return World{Lanes: 1, Collections: 2, Pairs: c.Pairs, Samples: 15, Within: c.Within, Between: c.Between,
		DriftKind: c.DriftKind, Drift: c.Drift}
}

// Grid returns the cells of the table: within-process noise 2-30%, between-process
// noise 0-15%, no drift, a 20% linear drift, a 10% step and a 10% oscillation, and 2 to 24
// pairs per collection. quick returns a subset that spans the same ranges, for tests.
func Grid(quick bool) []Cell {
	withins, betweens := []float64{0.02, 0.10, 0.30}, []float64{0, 0.05, 0.15}
	drifts := []struct {
		k DriftKind
		d float64
	}{{NoDrift, 0}, {Linear, 0.2}, {Step, 0.1}, {Periodic, 0.1}}
	pairs := []int{2, 6, 12, 24}
	var out []Cell
	for _, d := range drifts {
		for _, w := range withins {
			for _, b := range betweens {
				for _, p := range pairs {
					c := Cell{Within: w, Between: b, DriftKind: d.k, Drift: d.d, Pairs: p}
					if quick && !quickCell(c) {
						continue
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// quickCell picks the quick grid: the extremes of each noise, every drift, 2 and 12 pairs.
func quickCell(c Cell) bool {
	return (c.Pairs == 2 || c.Pairs == 12) && ((c.Within == 0.02 && c.Between == 0) || (c.Within == 0.30 && c.Between == 0.15) ||
		(c.Within == 0.10 && c.Between == 0.05 && c.DriftKind == NoDrift))
}

// Rates are the three methods' rates of one outcome: flipbench, its first-wave rule, and
// naive sequential benchstat.
type Rates struct{ Flip, Legacy, Naive Rate }

// Rate is k events out of n.
type Rate struct{ K, N int }

// Of returns k/n, or 0 when n is 0.
func (r Rate) Of() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.K) / float64(r.N)
}

// WilsonUpper returns the upper end of the two-sided 95% Wilson score interval of the
// rate (1 when n is 0).
func (r Rate) WilsonUpper() float64 { _, hi := r.wilson(); return hi }

// WilsonLower returns the lower end of that interval (0 when n is 0).
func (r Rate) WilsonLower() float64 { lo, _ := r.wilson(); return lo }

func (r Rate) wilson() (lo, hi float64) {
	if r.N == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	n, p := float64(r.N), r.Of()
	centre := p + z*z/(2*n)
	spread := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return max((centre-spread)/(1+z*z/n), 0), min((centre+spread)/(1+z*z/n), 1)
}

func (r *Rate) add(hit bool) {
	r.N++
	if hit {
		r.K++
	}
}

// Result is a cell's error rates, per lane and collection (naive benchstat per lane: it
// has no collections).
type Result struct {
	Cell Cell
	// MDEPct is the median MDE flipbench reported per collection in the A/A trials.
	MDEPct float64
	// FalseFaster and FalseSlower: A/A lanes called reproduced faster or slower.
	FalseFaster, FalseSlower Rates
	// FalseNeutral: lanes with a true effect of exactly the floor (either way) called
	// neutral.
	FalseNeutral Rates
	// PowerEffectPct is twice the larger of the MDE and the floor; Power the share of lanes
	// with that true slowdown called reproduced slower.
	PowerEffectPct float64
	Power          Rates
}

// FloorPct is the effect floor of the simulated experiments (flipbench's default).
const FloorPct = 3.0

// Evaluate runs trials seeded experiments of each kind (A/A, effect at +-floor, effect
// at twice the MDE) for one cell.
func Evaluate(c Cell, trials int, seed uint64) Result {
	res := Result{Cell: c}
	cfg := driftcheck.Config{EffectFloorPct: FloorPct}
	var mdes []float64
	run := func(w World, s uint64, f func(fb, lg []Call, nv Call)) {
		in := w.Input(NewRand(s))
		r, err := driftcheck.Analyze(in, cfg)
		if err != nil {
			panic(err) // the simulator makes only valid input
		}
		for _, l := range r.Lanes {
			mdes = append(mdes, l.MDEPct)
		}
		b, k := w.Naive(NewRand(s ^ 0x9e3779b97f4a7c15))
		name := LaneName(0)
		f(Flipbench(r, name), Legacy(r, name, FloorPct), Naive(b[name], k[name], w.HigherIsBetter))
	}
	aa := c.World()
	for t := range trials {
		run(aa, seed+uint64(t), func(fb, lg []Call, nv Call) {
			for _, x := range fb {
				res.FalseFaster.Flip.add(x == CallFaster)
				res.FalseSlower.Flip.add(x == CallSlower)
			}
			for _, x := range lg {
				res.FalseFaster.Legacy.add(x == CallFaster)
				res.FalseSlower.Legacy.add(x == CallSlower)
			}
			res.FalseFaster.Naive.add(nv == CallFaster)
			res.FalseSlower.Naive.add(nv == CallSlower)
		})
	}
	res.MDEPct = driftcheck.Median(mdes)
	mdes = nil
	for t := range trials {
		w := c.World()
		w.Effect = FloorPct / 100
		if t%2 == 1 {
			w.Effect = 1/(1+FloorPct/100.0) - 1
		}
		run(w, seed+uint64(trials+t), func(fb, lg []Call, nv Call) {
			for _, x := range fb {
				res.FalseNeutral.Flip.add(x == CallNeutral)
			}
			for _, x := range lg {
				res.FalseNeutral.Legacy.add(x == CallNeutral)
			}
			res.FalseNeutral.Naive.add(nv == CallNeutral)
		})
	}
	res.PowerEffectPct = 2 * max(res.MDEPct, FloorPct)
	for t := range trials {
		w := c.World()
		w.Effect = res.PowerEffectPct / 100
		run(w, seed+uint64(2*trials+t), func(fb, lg []Call, nv Call) {
			for _, x := range fb {
				res.Power.Flip.add(x == CallSlower)
			}
			for _, x := range lg {
				res.Power.Legacy.add(x == CallSlower)
			}
			res.Power.Naive.add(nv == CallSlower)
		})
	}
	return res
}

// EvaluateGrid evaluates every cell on all CPUs; results keep the cells' order and do not
// depend on the scheduling (each cell has its own seeds).
func EvaluateGrid(cells []Cell, trials int) []Result {
	out := make([]Result, len(cells))
	parallel(len(cells), func(i int) { out[i] = Evaluate(cells[i], trials, uint64(i)*1_000_003) })
	return out
}

// parallel calls f(0) .. f(n-1) on all CPUs and waits for them.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Markdown renders results as the error-rate table of docs/methodology.md.
func Markdown(results []Result, trials int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeded experiments per cell and outcome, 2 collections, 15 samples per run, floor %g%%. "+
		"Each rate cell reads flipbench / first-wave rule / naive benchstat; flipbench and the first-wave rule are counted per lane and collection, "+
		"benchstat per lane (samples pooled, base runs first).\n\n", trials, FloorPct)
	b.WriteString("| within | between | drift | pairs | MDE | false faster | false slower | false neutral at ±floor | power at 2×MDE |\n")
	b.WriteString("|---:|---:|---|---:|---:|---|---|---|---|\n")
	for _, r := range results {
		c := r.Cell
		drift := string(c.DriftKind)
		if c.DriftKind != NoDrift {
			drift = fmt.Sprintf("%s %.0f%%", c.DriftKind, c.Drift*100)
		}
		fmt.Fprintf(&b, "| %.0f%% | %.0f%% | %s | %d | %.1f%% | %s | %s | %s | %s (%.1f%%) |\n",
			c.Within*100, c.Between*100, drift, c.Pairs, r.MDEPct,
			rates(r.FalseFaster), rates(r.FalseSlower), rates(r.FalseNeutral), rates(r.Power), r.PowerEffectPct)
	}
	return b.String()
}

func rates(r Rates) string {
	return fmt.Sprintf("%s / %s / %s", pct(r.Flip), pct(r.Legacy), pct(r.Naive))
}

func pct(r Rate) string {
	x := r.Of() * 100
	switch {
	case x == 0:
		return "0"
	case x < 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// Worst returns, over results, the largest false-faster and false-slower rates, the
// largest false-neutral rate and the smallest power of flipbench.
func Worst(results []Result) (falseFast, falseSlow, falseNeutral, power Rate) {
	power = Rate{1, 1}
	for _, r := range results {
		if r.FalseFaster.Flip.Of() > falseFast.Of() {
			falseFast = r.FalseFaster.Flip
		}
		if r.FalseSlower.Flip.Of() > falseSlow.Of() {
			falseSlow = r.FalseSlower.Flip
		}
		if r.FalseNeutral.Flip.Of() > falseNeutral.Of() {
			falseNeutral = r.FalseNeutral.Flip
		}
		if r.Power.Flip.Of() < power.Of() {
			power = r.Power.Flip
		}
	}
	return
}
