package report

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
)

// Roles maps a lane name to its role, for the role column of tables; a lane it does not
// know shows "-".
type Roles map[string]receipt.Role

// PlanRoles returns the roles of the lanes of a run plan.
func PlanRoles(p *receipt.Plan) Roles {
	r := Roles{}
	for _, l := range p.Lanes {
		r[l.Name] = l.Role
	}
	return r
}

// EvidenceTable writes the lane evidence of summaries (one candidate against base, in one
// collection or pooled) as a markdown table: role, the base and candidate values beside
// the effect estimate with its interval, MDE, noise, order effect, pair verdict counts,
// the lane verdict and its reason. Receipts, drift reports and experiment pages all show
// lanes with it. The interval's level is the one it holds at every look of rep's rule
// (driftcheck.Config.LevelOf): one level for every pooled table, another for every
// collection's. vals gives the values (nil: none).
func EvidenceTable(w io.Writer, rep driftcheck.Report, sums []driftcheck.LaneSummary, roles Roles, vals *Values) error {
	base := rep.Base
	rows := make([][]string, 0, len(sums))
	for _, s := range sums {
		rows = append(rows, []string{
			s.Lane, mdtable.OrDash(string(roles[s.Lane])), vals.Change(s.Lane, base, s.Arm, s.Collection), Effect(s), mdeText(s), noiseText(s), orderText(s),
			mdtable.OrDash(driftcheck.PairCounts(s)), string(s.Verdict), s.Reason,
		})
	}
	conf := human.Level(rep.Config.Level())
	if len(sums) > 0 {
		conf = human.Level(rep.Config.LevelOf(sums[0]))
	}
	arm := "candidate"
	if len(sums) > 0 {
		arm = sums[0].Arm
	}
	return mdtable.Write(w, []string{"lane", "role", base + " -> " + arm, "effect [" + conf + " CI]", "MDE", "noise (between / within)", "order effect", "pairs", "verdict", "reason"}, rows)
}

// LevelSentence says once, above a receipt's or a page's evidence tables, at what level
// their intervals hold: at every look of the rule, the pooled ones at one level and each
// collection's (its replication test) at another.
func LevelSentence(rep driftcheck.Report) string {
	return fmt.Sprintf("Every interval holds at every look of the rule at once: the pooled ones at %s, "+
		"each collection's at %s (the level of its replication test).",
		human.Level(rep.Config.Level()), human.Level(rep.Config.CollectionLevel()))
}

// Effect formats a summary's effect estimate with its interval: "-12.1% [-15.0%, -9.1%]",
// or the estimate alone when there is no interval.
func Effect(s driftcheck.LaneSummary) string {
	switch {
	case s.UsablePairs == 0:
		return "-"
	case !s.Bounded:
		return human.Delta(s.EstimatePct) + " (no interval)"
	}
	return human.DeltaCI(s.EstimatePct, s.CILowPct, s.CIHighPct)
}

func mdeText(s driftcheck.LaneSummary) string {
	if !s.Bounded {
		return "-"
	}
	return human.Percent(s.MDEPct)
}

func noiseText(s driftcheck.LaneSummary) string {
	if !s.Bounded {
		return "-"
	}
	return fmt.Sprintf("%s (%s / %s)", human.Percent(s.NoisePct), human.Percent(s.BetweenPct), human.Percent(s.WithinCVPct))
}

func orderText(s driftcheck.LaneSummary) string {
	if !s.Bounded {
		return "-"
	}
	return human.DeltaCI(s.OrderEffectPct, s.OrderLowPct, s.OrderHighPct)
}

// PairDeltas formats a pass pair's two deltas and their mean, "-" for a pass that is not
// usable (and for the mean unless both are).
func PairDeltas(p driftcheck.Pair) (d1, d2, mean string) {
	d1, d2, mean = human.Delta(p.Delta1Pct), human.Delta(p.Delta2Pct), human.Delta(p.MeanPct)
	if !p.Usable1 {
		d1 = "-"
	}
	if !p.Usable2 {
		d2 = "-"
	}
	if !p.Usable1 || !p.Usable2 {
		mean = "-"
	}
	return d1, d2, mean
}

// PairTable writes pass-pair verdicts as a markdown table: lane, (arm,) collection, pair,
// both deltas, the pair mean, the verdict and its reason. Receipts, drift reports and
// experiment pages all show pairs with it.
func PairTable(w io.Writer, pairs []driftcheck.Pair, withArm bool) error {
	rows := make([][]string, 0, len(pairs))
	for _, p := range pairs {
		d1, d2, m := PairDeltas(p)
		row := []string{p.Lane}
		if withArm {
			row = append(row, p.Arm)
		}
		rows = append(rows, append(row, fmt.Sprint(p.Collection), fmt.Sprint(p.Pair), d1, d2, m, string(p.Verdict), p.Reason))
	}
	head := []string{"lane"}
	if withArm {
		head = append(head, "arm")
	}
	return mdtable.Write(w, append(head, "collection", "pair", "Δ forward", "Δ reverse", "pair mean", "verdict", "reason"), rows)
}

// Groups splits lane summaries into runs of the same candidate and collection, keeping
// their order.
func Groups(lanes []driftcheck.LaneSummary) [][]driftcheck.LaneSummary {
	var out [][]driftcheck.LaneSummary
	for i, l := range lanes {
		if i == 0 || l.Arm != lanes[i-1].Arm || l.Collection != lanes[i-1].Collection {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], l)
	}
	return out
}

// ConfigText states the thresholds and error rates a drift check used: "Effect floor 3%;
// a false reproduced verdict at most 2.5% each way (each of 2 collections' replication test
// at 15.8% one-sided), neutral and no-regression bounds from one-sided tests at 5%, over 1
// look; MDE at 80% power; ...".
func ConfigText(r driftcheck.Report) string {
	c, collections := r.Config, r.Collections
	looks := "over 1 look"
	if n := c.Looks(); n > 1 {
		sp := c.Spending
		if sp == "" {
			sp = driftcheck.DefaultSpending
		}
		looks = fmt.Sprintf("spent over %d looks (rounds %d to %d) by %s spending", n, max(c.MinPairs, 1), c.MaxPairs, sp)
	}
	coll := c.Alpha / 2
	each := fmt.Sprintf("each of %d collections' replication test", max(collections, 1))
	if collections <= 1 {
		each = "the collection's replication test"
	}
	return fmt.Sprintf("Effect floor %s%%; a false reproduced verdict at most %s%% each way (%s at %s%% one-sided), neutral and no-regression bounds from one-sided tests at %s%%, %s; "+
		"MDE at %s%% power; a pass is contaminated above a clean CV of %s%% with %sx asymmetry, and a run is set aside when its CV is above that and %sx its lane's typical CV.",
		human.Num(c.EffectFloorPct), human.Num(c.Alpha*50), each, human.Sig(coll*100), human.Num(c.Alpha*100), looks,
		human.Num(c.Power*100), human.Num(c.CleanCVPct), human.Num(c.CVAsymmetry), human.Num(c.CVAsymmetry))
}

// Stopped returns a sequential receipt's last look when it says the run stopped (every
// lane decided, max-pairs, or the budget), and false for a fixed protocol or a sequential
// run cut short, whose missing runs a resume would measure.
func Stopped(d *loaded.Receipt) (receipt.Look, bool) {
	if len(d.Looks) == 0 {
		return receipt.Look{}, false
	}
	last := d.Looks[len(d.Looks)-1]
	return last, last.Stop != ""
}

// LooksTable writes a sequential run's stopping rule and its looks: per round, the
// measured time, how many lanes were decided, the lanes the next round ran, and why the
// run stopped.
func LooksTable(w io.Writer, d *loaded.Receipt) error {
	ew := NewErrWriter(w)
	if s := d.Plan.Protocol.Sequential; s != nil {
		fmt.Fprintf(ew, "Stopping rule: a look after every round (one pass pair in each collection) from round %d, "+
			"each at alpha / %d; stop when every lane the decision needs is decided, after %d rounds, or before a round would end past %s.\n\n",
			s.MinPairs, s.MaxPairs-s.MinPairs+1, s.MaxPairs, s.Budget)
	}
	rows := make([][]string, 0, len(d.Looks))
	for _, l := range d.Looks {
		decided := 0
		lanes := map[string]bool{}
		for _, ll := range l.Lanes {
			lanes[ll.Lane] = true
		}
		for name := range lanes {
			if !slices.Contains(l.Pending, name) {
				decided++
			}
		}
		next := strings.Join(l.Pending, ", ")
		if l.Stop != "" {
			next = "stop: " + l.Stop
		}
		rows = append(rows, []string{fmt.Sprint(l.Round), l.Elapsed.Round(time.Second).String(), fmt.Sprintf("%d of %d", decided, len(lanes)), mdtable.OrDash(next)})
	}
	if err := mdtable.Write(ew, []string{"round", "measured", "lanes not pending", "next round runs"}, rows); err != nil {
		return err
	}
	if _, ok := Stopped(d); !ok {
		fmt.Fprintf(ew, "\nThe run was cut short after its last look; flipbench ab --resume %s goes on.\n", filepath.Base(d.Dir))
	}
	return ew.Err()
}

// Values are what the tables show beside a delta: each lane's unit, and each arm's value
// in it, the median over the arm's successful runs of each run's median, per collection
// and over all of them. A nil *Values shows plain numbers and no values.
type Values struct {
	units map[string]string
	meds  map[valueKey][]float64
}

// valueKey is one lane of one arm in one collection (0: all of them).
type valueKey struct {
	lane, arm  string
	collection int
}

// DataValues returns the values of a receipt's runs: each run's median of the samples its
// analysis judged (loaded.Receipt.JudgedSamples), so a lane measured by its on-CPU time
// shows its on-CPU time per operation, the metric of its verdict.
func DataValues(d *loaded.Receipt) *Values {
	v := &Values{units: map[string]string{}, meds: map[valueKey][]float64{}}
	judged := d.JudgedSamples()
	for i, r := range d.Records {
		if !r.OK() || len(judged[i]) == 0 {
			continue
		}
		if v.units[r.Lane] == "" {
			v.units[r.Lane] = r.Unit
		}
		m := driftcheck.Median(judged[i])
		for _, c := range []int{r.Collection, 0} {
			k := valueKey{r.Lane, r.Arm, c}
			v.meds[k] = append(v.meds[k], m)
		}
	}
	for _, l := range d.Plan.Lanes {
		if v.units[l.Name] == "" {
			v.units[l.Name] = l.Unit
		}
	}
	return v
}

// Unit returns a lane's unit, "" when unknown.
func (v *Values) Unit(lane string) string {
	if v == nil {
		return ""
	}
	return v.units[lane]
}

// Change formats the base's and a candidate's values of a lane in a collection (0: all)
// as "1.01ms -> 806.5µs", or "-" when either has no successful run.
func (v *Values) Change(lane, base, arm string, collection int) string {
	if v == nil {
		return "-"
	}
	b, c := v.meds[valueKey{lane, base, collection}], v.meds[valueKey{lane, arm, collection}]
	if len(b) == 0 || len(c) == 0 {
		return "-"
	}
	u := v.units[lane]
	return human.Value(driftcheck.Median(b), u) + " -> " + human.Value(driftcheck.Median(c), u)
}
