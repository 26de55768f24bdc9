package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// BudgetRounds are the budgets of the budget table, in rounds of every lane: a budget of
// 5 buys five rounds of all the world's lanes, or more rounds of fewer once some are
// decided. A budget at the world's max-pairs or above never binds.
var BudgetRounds = []int{3, 5, 10, 20, 40}

// BudgetResult is what trials of one rule world did at each budget (index i of Budgets),
// trial t seeded alike at every budget (common random numbers), so that a budget's
// difference from another is measured on the same hosts.
type BudgetResult struct {
	World   RuleWorld
	Trials  int
	Budgets []int
	// Undecided[i][t] counts the lanes trial t left open for the decision rule
	// (decide.Pending: a primary neither reproduced nor shown neutral, a guard neither
	// cleared nor reproduced slower); HalfWidth[i][t] is the mean half-width of
	// its bounded intervals, in percent; Rounds[i][t] the rounds it ran; Spent[i][t] the
	// share of the budget it spent.
	Undecided [][]int
	HalfWidth [][]float64
	Rounds    [][]int
	Spent     [][]float64
}

// EvaluateBudget runs trials of a rule world at each budget of budgets (in rounds of every
// lane, BudgetRounds) through the pipeline's own stopping rule, pipeline.NextStep, as a
// compare runs it (undecidable lanes go on being measured while the budget lasts, the
// last round measures the lanes a pair buys the most): every lane's round costs the same,
// a pass measured again its share of one.
func EvaluateBudget(w RuleWorld, budgets []int, trials int, seed uint64) (BudgetResult, error) {
	if w.Slowdown == 0 {
		w.Slowdown = ContaminatedSlowdown
	}
	if w.Noisier == 0 {
		w.Noisier = ContaminatedNoisier
	}
	out := BudgetResult{World: w, Trials: trials, Budgets: budgets}
	for _, b := range budgets {
		rg, err := newRuleRig(w)
		if err != nil {
			return BudgetResult{}, err
		}
		rg.budget = time.Duration(b*len(w.Lanes)) * laneCost
		rg.plan.Protocol.Sequential.Budget = rg.budget
		und, hw, rounds, spent := make([]int, trials), make([]float64, trials), make([]int, trials), make([]float64, trials)
		for t := range trials {
			tr, err := rg.trial(NewRand(seed + uint64(t)))
			if err != nil {
				return BudgetResult{}, err
			}
			und[t] = len(decide.Pending(decide.Input{Spec: rg.e, Plan: rg.plan, Analysis: tr.rep}))
			hw[t] = meanHalfWidth(tr.rep)
			rounds[t], spent[t] = tr.rounds, tr.elapsed.Seconds()/rg.budget.Seconds()
		}
		out.Undecided = append(out.Undecided, und)
		out.HalfWidth = append(out.HalfWidth, hw)
		out.Rounds = append(out.Rounds, rounds)
		out.Spent = append(out.Spent, spent)
	}
	return out, nil
}

// budgetStep applies the pipeline's stopping rule after a budget trial's round: it
// charges the round, keeps running the lanes the step measures next, and says whether
// the trial stops.
func (rg *ruleRig) budgetStep(tr *ruleTrial, running *[]RuleLane, pending []string) bool {
	tr.elapsed += time.Duration(len(*running)) * laneCost
	var names []string
	for _, l := range *running {
		if slices.Contains(pending, l.Name) {
			names = append(names, l.Name)
		}
	}
	st := pipeline.NextStep(pipeline.StepInput{Plan: rg.plan, Rep: tr.rep, Round: tr.rounds, Pending: names, Elapsed: tr.elapsed,
		RoundTime: func(lanes []string) time.Duration { return time.Duration(len(lanes)) * laneCost }})
	*running = slices.DeleteFunc(*running, func(l RuleLane) bool { return !slices.Contains(st.Pending, l.Name) })
	if st.Stop == "" {
		return false
	}
	tr.decided = st.Stop == receipt.StopDecided
	return true
}

// meanHalfWidth returns the mean half-width of a report's bounded intervals (percent; NaN
// when none is bounded).
func meanHalfWidth(rep driftcheck.Report) float64 {
	var hws []float64
	for _, s := range rep.Pooled {
		if s.Bounded {
			hws = append(hws, (s.CIHighPct-s.CILowPct)/2)
		}
	}
	return meanFinite(hws)
}

// Paired is the mean of paired differences and its standard error.
type Paired struct{ Mean, SE float64 }

// pairedDiff returns the mean and standard error of a[t]-b[t] over the trials where both
// are numbers.
func pairedDiff(a, b []float64) Paired {
	var ds []float64
	for t := range a {
		if d := a[t] - b[t]; !math.IsNaN(d) {
			ds = append(ds, d)
		}
	}
	if len(ds) < 2 {
		return Paired{Mean: math.NaN(), SE: math.NaN()}
	}
	var m float64
	for _, d := range ds {
		m += d
	}
	m /= float64(len(ds))
	var v float64
	for _, d := range ds {
		v += (d - m) * (d - m)
	}
	return Paired{Mean: m, SE: math.Sqrt(v / float64(len(ds)-1) / float64(len(ds)))}
}

// floats returns ns as float64s.
func floats(ns []int) []float64 {
	out := make([]float64, len(ns))
	for i, n := range ns {
		out[i] = float64(n)
	}
	return out
}

// Worse returns, for each budget after the first, how much more the larger budget left
// undecided (lanes) and how much wider its intervals were (points of percent) than the
// budget before it, as paired differences over the trials: a larger budget is no worse
// when neither mean exceeds its standard error's Monte Carlo reach.
func (r BudgetResult) Worse() (undecided, wider []Paired) {
	for i := 1; i < len(r.Budgets); i++ {
		undecided = append(undecided, pairedDiff(floats(r.Undecided[i]), floats(r.Undecided[i-1])))
		wider = append(wider, pairedDiff(r.HalfWidth[i], r.HalfWidth[i-1]))
	}
	return undecided, wider
}

// Monotone reports whether no larger budget left more lanes undecided or wider intervals
// than the budget before it, beyond z standard errors of the paired difference.
func (r BudgetResult) Monotone(z float64) bool {
	und, wid := r.Worse()
	for i := range und {
		for _, p := range []Paired{und[i], wid[i]} {
			if !math.IsNaN(p.Mean) && p.Mean > z*p.SE+1e-9 {
				return false
			}
		}
	}
	return true
}

// EvaluateBudgetGrid evaluates every rule case at budgets (BudgetRounds) on all CPUs.
func EvaluateBudgetGrid(cases []RuleCase, budgets []int, trials int) ([]BudgetResult, error) {
	out := make([]BudgetResult, len(cases))
	errs := make([]error, len(cases))
	parallel(len(cases), func(i int) {
		out[i], errs[i] = EvaluateBudget(cases[i].World, budgets, trials, uint64(i)*4_000_037+13)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BudgetZ is how many standard errors of the paired difference a larger budget may leave
// more undecided or wider before the table says it did worse.
const BudgetZ = 3

// BudgetMarkdown renders the budget table of docs/sequential.md: per world, at each
// budget, the mean undecided lane verdicts and the mean half-width of the intervals, and
// whether a larger budget ever did worse beyond Monte Carlo error.
func BudgetMarkdown(cases []RuleCase, results []BudgetResult) string {
	var b strings.Builder
	if len(results) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "%d seeded trials per world and budget, the same seeds at every budget. A budget is in rounds of every lane; each cell is the mean number of lanes the decision rule left open / the median half-width of the intervals (percent) / the mean share of the budget spent.\n\n", results[0].Trials)
	b.WriteString("| world | lanes")
	for _, n := range results[0].Budgets {
		fmt.Fprintf(&b, " | budget %d", n)
	}
	b.WriteString(" | a larger budget never worse |\n|---|---:")
	for range results[0].Budgets {
		b.WriteString("|---:")
	}
	b.WriteString("|---|\n")
	worse := 0
	for i, r := range results {
		fmt.Fprintf(&b, "| %s | %d", cases[i].Name, len(r.World.Lanes))
		for j := range r.Budgets {
			fmt.Fprintf(&b, " | %.2f / %s / %.0f%%", meanOf(r.Undecided[j]), halfWidthCell(medianFinite(r.HalfWidth[j])), 100*meanFinite(r.Spent[j]))
		}
		ok := "yes"
		if !r.Monotone(BudgetZ) {
			ok, worse = "**no**", worse+1
		}
		fmt.Fprintf(&b, " | %s |\n", ok)
	}
	fmt.Fprintf(&b, "\nWorlds where a larger budget left more undecided or wider intervals beyond %d standard errors of the paired difference: %d of %d.\n", BudgetZ, worse, len(results))
	return b.String()
}

// halfWidthCell formats a median half-width (percent) for the budget table: "unbounded"
// past 1000%, where a lane's interval spans no useful range (a lane with too few pairs
// for its looks' spending).
func halfWidthCell(pct float64) string {
	if pct > 1000 {
		return "unbounded"
	}
	return fmt.Sprintf("%.2f", pct)
}

// meanFinite returns the mean of the numbers in xs that are finite (NaN for none).
func meanFinite(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// medianFinite returns the median of the numbers in xs that are finite (NaN for none).
func medianFinite(xs []float64) float64 {
	fs := slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
	if len(fs) == 0 {
		return math.NaN()
	}
	slices.Sort(fs)
	if n := len(fs); n%2 == 0 {
		return (fs[n/2-1] + fs[n/2]) / 2
	}
	return fs[len(fs)/2]
}
