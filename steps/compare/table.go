package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/texttable"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/report"
)

// Names say what the arms of a comparison are, for the table's first line: "main
// (1a2b3c4d5e6f)", "the working tree (uncommitted changes)".
type Names struct {
	Base, Cand string
}

// Row is one lane of the comparison.
type Row struct {
	Lane string
	// Role is the lane's role in the plan (guard, primary, ...).
	Role receipt.Role
	// Unit is the lane's unit as its runs printed it.
	Unit string
	// Base and Cand are each arm's value: the median over its runs of each run's median,
	// with a 95% interval (Bounded false when there are too few runs for one).
	Base, Cand driftcheck.Summary
	// Effect is the lane's evidence pooled over collections: the effect with its interval,
	// the verdict and its reason.
	Effect driftcheck.LaneSummary
	// Memory holds the medians of the lane's B/op and allocs/op for base and cand, when
	// the lane reported them.
	Memory map[string][2]float64
	// Stopped is set when a look found the lane cannot be decided within the budget at
	// its noise and stopped measuring it (receipt.UndecidableLane), StoppedAfter the
	// round of that look.
	Stopped      *receipt.UndecidableLane
	StoppedAfter int
	// Settled is the lane's state at the look that decided it and stopped measuring it
	// (receipt.LookLane), when a later look took it off the rounds decided; nil when the
	// lane was measured to the end. The table's verdict is the last look's, which judges
	// the lane with the other lanes' noise as it stands then.
	Settled *receipt.LookLane
	// SettledAfter is the round of that look.
	SettledAfter int
}

// Rows computes the comparison of a receipt, one row per lane in plan order: the arms'
// values from their successful runs, the effect from the drift check.
func Rows(d *loaded.Receipt) []Row {
	base, cand := d.Plan.Arms[0].Name, ""
	if len(d.Plan.Arms) > 1 {
		cand = d.Plan.Arms[1].Name
	}
	var rows []Row
	judged := d.JudgedSamples()
	for _, l := range d.Plan.Lanes {
		r := Row{Lane: l.Name, Role: l.Role, Unit: l.Unit, Memory: map[string][2]float64{}}
		meds := map[string][]float64{}
		mem := map[string]map[string][]float64{}
		for i, rec := range d.Records {
			if rec.Lane != l.Name || !rec.OK() || (rec.Arm != base && rec.Arm != cand) {
				continue
			}
			if r.Unit == "" {
				r.Unit = rec.Unit
			}
			meds[rec.Arm] = append(meds[rec.Arm], driftcheck.Median(judged[i]))
			for _, u := range []string{"B/op", "allocs/op"} {
				if vs := rec.Metrics[u]; len(vs) > 0 {
					if mem[u] == nil {
						mem[u] = map[string][]float64{}
					}
					mem[u][rec.Arm] = append(mem[u][rec.Arm], vs...)
				}
			}
		}
		r.Base, r.Cand = summarize(meds[base]), summarize(meds[cand])
		for u, by := range mem {
			r.Memory[u] = [2]float64{driftcheck.Median(by[base]), driftcheck.Median(by[cand])}
		}
		for _, look := range d.Looks {
			for _, u := range look.Undecidable {
				if u.Lane == l.Name && u.Stopped && r.Stopped == nil {
					r.Stopped, r.StoppedAfter = &u, look.Round
				}
			}
		}
		r.Settled, r.SettledAfter = settled(d.Looks, l.Name)
		if i := slices.IndexFunc(d.Analysis.Pooled, func(s driftcheck.LaneSummary) bool { return s.Lane == l.Name && s.Arm == cand }); i >= 0 {
			r.Effect = d.Analysis.Pooled[i]
		} else {
			r.Effect = driftcheck.LaneSummary{Lane: l.Name, Arm: cand, Verdict: driftcheck.LaneInsufficient, Reason: "no pair of runs to compare"}
		}
		rows = append(rows, r)
	}
	return rows
}

// settled returns the lane's state at the look that took it off the rounds decided, with
// that look's round, or nil when the lane was measured until the run stopped.
func settled(looks []receipt.Look, lane string) (*receipt.LookLane, int) {
	for _, look := range looks {
		if look.Stop != "" || slices.Contains(look.Pending, lane) {
			continue
		}
		for _, ll := range look.Lanes {
			if ll.Lane == lane && ll.Verdict.Decided() {
				return &ll, look.Round
			}
		}
		return nil, 0
	}
	return nil, 0
}

// minSpreadRuns is the fewest runs whose median gets a 95% interval (benchmath's
// distribution-free interval needs six); with fewer, the spread is the farthest run.
const minSpreadRuns = 6

// summarize returns the median of xs with its 95% interval (benchmath's, with no
// assumption about the distribution), or with fewer than minSpreadRuns values the range
// of xs, so that ± says how far the farthest run is.
func summarize(xs []float64) driftcheck.Summary {
	if len(xs) == 0 {
		return driftcheck.Summary{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), 0.95)
	out := driftcheck.Summary{N: len(xs), Median: s.Center, Confidence: s.Confidence}
	if len(xs) >= minSpreadRuns && !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) {
		out.Lo, out.Hi, out.Bounded = s.Lo, s.Hi, true
	} else if len(xs) >= 2 {
		out.Lo, out.Hi, out.Bounded = slices.Min(xs), slices.Max(xs), true
	}
	return out
}

// ProfileLines is how many functions of each profile difference the table names.
const ProfileLines = 3

// Table writes the comparison of a finished receipt for a terminal, at most width columns
// wide: a line saying what was compared and how, a line stating the interval's level and
// what the columns are, then one row per lane with its role (when the lanes have more than
// one), the base and candidate values (median over runs of each run's median ± its
// spread, see Spread), the change with its interval (from the pair means of order-flipped
// passes), the verdict (for an undecided lane with what it rules out, see RuledOut) and a
// note where the row needs one (an undecided lane's reason, medians that disagree with
// the effect's sign); then the one-line Summary, and the lanes' memory per operation when
// they reported it; then, for every profiled lane, where its CPU time and
// allocations changed (profdiff.Lines: the top ProfileLines functions by flat difference per
// operation).
func Table(w io.Writer, d *loaded.Receipt, names Names, width int) error {
	ew := report.NewErrWriter(w)
	p := d.Plan
	rows := Rows(d)
	fmt.Fprintln(ew, wrap(fmt.Sprintf("%s against %s", names.Cand, names.Base), width))
	fmt.Fprintln(ew, wrap(protocolLine(d), width))
	fmt.Fprintln(ew, wrap(legend(Level(d.Analysis), d.OnCPULanes(), len(d.Plan.Lanes)), width))
	fmt.Fprintln(ew)
	roles := showRoles(rows)
	header := []string{"lane"}
	if roles {
		header = append(header, "role")
	}
	header = append(header, p.Arms[0].Name, p.Arms[len(p.Arms)-1].Name, "change ["+Level(d.Analysis)+" CI]", "verdict", "")
	var cells [][]string
	for _, r := range rows {
		row := []string{r.Lane}
		if roles {
			row = append(row, string(r.Role))
		}
		cells = append(cells, append(row, value(r.Base, r.Unit), value(r.Cand, r.Unit), Change(r.Effect), Verdict(r), Note(r)))
	}
	if err := texttable.Write(ew, header, cells, width); err != nil {
		return err
	}
	fmt.Fprintf(ew, "\n%s\n", wrap(Summary(rows), width))
	if mem := memoryRows(rows); len(mem) > 0 {
		fmt.Fprintf(ew, "\nMemory per operation, median over every sample (go test -benchmem):\n\n")
		if err := texttable.Write(ew, []string{"lane", "B/op", "allocs/op"}, mem, width); err != nil {
			return err
		}
	}
	if err := profdiff.Lines(ew, d.Profiles, ProfileLines); err != nil {
		return err
	}
	return ew.Err()
}

// Markdown writes the comparison as Table does, as markdown for a pull-request comment:
// a heading with the Summary, what was compared and how, one table (lane, role when there
// are several, base, candidate, change, verdict, note), and the memory table.
func Markdown(w io.Writer, d *loaded.Receipt, names Names) error {
	ew := report.NewErrWriter(w)
	p := d.Plan
	rows := Rows(d)
	fmt.Fprintf(ew, "## flipbench compare: %s\n\n", Summary(rows))
	fmt.Fprintf(ew, "%s against %s. %s %s\n\n", names.Cand, names.Base, protocolLine(d), legend(Level(d.Analysis), d.OnCPULanes(), len(d.Plan.Lanes)))
	roles := showRoles(rows)
	header := []string{"lane"}
	if roles {
		header = append(header, "role")
	}
	header = append(header, p.Arms[0].Name, p.Arms[len(p.Arms)-1].Name, "change ["+Level(d.Analysis)+" CI]", "verdict", "note")
	var cells [][]string
	for _, r := range rows {
		row := []string{"`" + r.Lane + "`"}
		if roles {
			row = append(row, string(r.Role))
		}
		cells = append(cells, append(row, value(r.Base, r.Unit), value(r.Cand, r.Unit), Change(r.Effect), Verdict(r), Note(r)))
	}
	if err := mdtable.Write(ew, header, cells); err != nil {
		return err
	}
	if mem := memoryRows(rows); len(mem) > 0 {
		fmt.Fprintf(ew, "\nMemory per operation, median over every sample (go test -benchmem):\n\n")
		if err := mdtable.Write(ew, []string{"lane", "B/op", "allocs/op"}, mem); err != nil {
			return err
		}
	}
	return ew.Err()
}

// memoryRows are the rows of the memory table: per lane that reported B/op or
// allocs/op, base -> candidate (change).
func memoryRows(rows []Row) [][]string {
	var mem [][]string
	for _, r := range rows {
		if len(r.Memory) == 0 {
			continue
		}
		row := []string{r.Lane}
		for _, u := range []string{"B/op", "allocs/op"} {
			v, ok := r.Memory[u]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%s -> %s (%s)", human.Quantity(v[0], u), human.Quantity(v[1], u), change(v[0], v[1])))
		}
		mem = append(mem, row)
	}
	return mem
}

// showRoles reports whether the lanes have more than one role (a table of guards only,
// compare's default, leaves the column out).
func showRoles(rows []Row) bool {
	for _, r := range rows[min(1, len(rows)):] {
		if r.Role != rows[0].Role {
			return true
		}
	}
	return false
}

// Level is the level of a comparison's intervals, the same for every lane and stated
// once, in the header: "90%", the pooled intervals' level valid at every look
// (driftcheck.Config.Level). Each look's own level is in the JSON (look_confidence).
func Level(rep driftcheck.Report) string { return human.Level(rep.Config.Level()) }

// legend says once what the columns hold, the intervals' level with it, and which lanes'
// values are on-CPU time (onCPU of lanes).
func legend(level string, onCPU []string, lanes int) string {
	s := fmt.Sprintf("Values are the median over processes of each process's median, ± the half-width of its 95%% interval "+
		"(± the farthest process from it with fewer than %d processes); the change is the mean of the pair means of "+
		"order-flipped passes, with its %s interval, valid at every look of the sequential rule.", minSpreadRuns, level)
	switch {
	case len(onCPU) == 0:
		return s
	case len(onCPU) == lanes:
		return s + " No lane blocked (on a lock, I/O or a timer), so values and changes are on-CPU time per operation: time a neighbour took the CPU is not counted."
	case len(onCPU) <= 3:
		return s + fmt.Sprintf(" %s never blocked (on a lock, I/O or a timer), so their values and changes are on-CPU time per operation: time a neighbour took the CPU is not counted.", strings.Join(onCPU, ", "))
	}
	return s + fmt.Sprintf(" %d of the %d lanes never blocked (on a lock, I/O or a timer), so their values and changes are on-CPU time per operation: time a neighbour took the CPU is not counted (the JSON's interference says which).", len(onCPU), lanes)
}

// Change formats a lane's effect with its interval: "-52.2% [-55.0%, -49.0%] (2.09x
// faster)"; "+4.5% (needs more pairs)" when the interval says nothing; "-" without pairs.
func Change(s driftcheck.LaneSummary) string { return report.Effect(s) }

// RuledOutLimit is the widest regression an undecided lane's verdict states as ruled
// out: an upper bound beyond it rules out nothing a reader would act on.
const RuledOutLimit = 50.0

// RuledOut says what an undecided lane's interval rules out: "no regression beyond
// +2.8%" (its upper end, when a bounded interval's upper end is below RuledOutLimit), or
// "" when it rules out nothing worth saying.
func RuledOut(s driftcheck.LaneSummary) string {
	hi, ok := upper(s)
	if !ok {
		return ""
	}
	if hi <= 0 {
		return "no regression"
	}
	return "no regression beyond " + human.Pct(hi)
}

// upper is the upper end of a lane's interval when it is bounded and below
// RuledOutLimit.
func upper(s driftcheck.LaneSummary) (float64, bool) {
	if s.UsablePairs == 0 || !s.Bounded || !human.Bounded(s.CILowPct, s.CIHighPct) || s.CIHighPct >= RuledOutLimit {
		return 0, false
	}
	return s.CIHighPct, true
}

// Verdict is a row's verdict: the lane's, and for an undecided lane what it rules out
// ("undecided: no regression beyond +2.8%") or that it needs more pairs.
func Verdict(r Row) string {
	v := r.Effect.Verdict
	if v != driftcheck.LaneUndecided {
		return string(v)
	}
	if ro := RuledOut(r.Effect); ro != "" {
		return string(v) + ": " + ro
	}
	return string(v) + ": needs more pairs"
}

// Note is what a row says beyond its cells: that a lane was stopped as undecidable,
// why a lane is not decided (its reason), and when the medians and the effect disagree
// in sign, why.
func Note(r Row) string {
	var parts []string
	if u := r.Stopped; u != nil && !r.Effect.Verdict.Decided() {
		within := fmt.Sprintf("max-pairs (%d rounds)", u.MaxPairs)
		if u.Reach < u.MaxPairs {
			within = fmt.Sprintf("the budget (%s)", human.Count(u.Reach, "round", "rounds"))
		}
		parts = append(parts, fmt.Sprintf("measured no more after round %d: it cannot be decided within %s at this noise (MDE %s there, floor %s)",
			r.StoppedAfter, within, mdeText(u.MDEPct), human.Num(u.FloorPct)+"%"))
	}
	switch u := r.Settled; {
	case u != nil && !r.Effect.Verdict.Decided():
		// Its reason would ask for more pairs the run chose not to measure.
		parts = append(parts, fmt.Sprintf("%s at round %d (%s) and measured no more; at the last look, judged with the other lanes' noise as it stood then, its interval no longer decides it",
			u.Verdict, r.SettledAfter, human.DeltaCI(u.EstimatePct, u.CILowPct, u.CIHighPct)))
	case !r.Effect.Verdict.Decided() && r.Effect.Reason != "":
		parts = append(parts, human.Tidy(briefReason(withoutEffect(r.Effect.Reason))))
	}
	if d, ok := medianDisagrees(r); ok {
		how := "differ the other way"
		if e := r.Effect.EstimatePct; (d > 0) == (e > 0) || math.Abs(e) < 0.05 {
			how = "differ by more than the interval allows"
		}
		parts = append(parts, fmt.Sprintf("the medians %s (%s): the change is from pair means, each pass's candidate against the base measured beside it, which drift between passes and the arms' code layouts do not move", how, human.Delta(d)))
	}
	return strings.Join(parts, "; ")
}

// briefReason shortens an undecided lane's reason for a table row, leaving to the receipt
// the pair verdict counts ("; pairs: 1 drift-suspected, 16 one-sided, 19 neutral of 36")
// and why the layouts' share is a lower bound (driftcheck.LayoutShareWhy). On google/uuid
// this took an undecided row's note from 4-5 lines to 2-3.
func briefReason(reason string) string {
	if i := strings.Index(reason, "; pairs: "); i >= 0 {
		rest := reason[i+len("; pairs: "):]
		if j := strings.Index(rest, "; "); j >= 0 {
			reason = reason[:i] + rest[j:]
		} else {
			reason = reason[:i]
		}
	}
	return strings.Replace(reason, driftcheck.LayoutShareWhy, ", carried by the interval", 1)
}

// withoutEffect drops a reason's leading "effect +1.2% [-0.4%, +2.9%]: ", which the row's
// change cell shows already, so that the note says each thing once.
func withoutEffect(reason string) string {
	if rest, ok := strings.CutPrefix(reason, "effect "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			return after
		}
	}
	return reason
}

// mdeText writes an MDE: "12.1%", "above 100%" beyond it.
func mdeText(pct float64) string {
	if pct > 100 || math.IsInf(pct, 0) || math.IsNaN(pct) {
		return "above 100%"
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// medianDisagrees returns the change of the medians when it contradicts the effect: when
// it lies outside the effect's interval.
func medianDisagrees(r Row) (float64, bool) {
	if r.Base.N == 0 || r.Cand.N == 0 || r.Base.Median == 0 || r.Effect.UsablePairs == 0 {
		return 0, false
	}
	d := (r.Cand.Median - r.Base.Median) / r.Base.Median * 100
	if r.Effect.HigherIsBetter {
		d = -d
	}
	if math.Abs(d) < 0.05 {
		return 0, false
	}
	// Medians of the other sign inside the interval say nothing the interval does not
	// (google/uuid's MarshalJSON: -0.1% [-2.5%, +2.5%] beside medians +0.9%); outside
	// it, of either sign, they contradict the row.
	outside := r.Effect.Bounded && human.Bounded(r.Effect.CILowPct, r.Effect.CIHighPct) && (d < r.Effect.CILowPct || d > r.Effect.CIHighPct)
	return d, outside
}

// Summary is the comparison in one line: "1 faster, 3 slower, 28 unchanged within 3%, 5
// undecided: no regression beyond +4.8%". Undecided lanes rule out the largest of their
// upper ends; those whose interval rules out nothing are counted as needing more pairs.
func Summary(rows []Row) string {
	var faster, slower, neutral, undecided, open, other int
	var worst float64
	floors := map[float64]bool{}
	for _, r := range rows {
		switch r.Effect.Verdict {
		case driftcheck.LaneReproducedFaster:
			faster++
		case driftcheck.LaneReproducedSlower:
			slower++
		case driftcheck.LaneNeutral:
			neutral++
			floors[r.Effect.FloorPct] = true
		case driftcheck.LaneUndecided:
			undecided++
			if hi, ok := upper(r.Effect); ok {
				worst = math.Max(worst, hi)
			} else {
				open++
			}
		default:
			other++
		}
	}
	var parts []string
	if faster > 0 {
		parts = append(parts, fmt.Sprintf("%d faster", faster))
	}
	if slower > 0 {
		parts = append(parts, fmt.Sprintf("%d slower", slower))
	}
	if neutral > 0 {
		within := "within the floor"
		if len(floors) == 1 {
			for f := range floors {
				within = "within " + human.Num(f) + "%"
			}
		}
		parts = append(parts, fmt.Sprintf("%d unchanged %s", neutral, within))
	}
	if undecided > 0 {
		s := fmt.Sprintf("%d undecided", undecided)
		switch {
		case open == undecided:
			s += ": they need more pairs"
		case open > 0:
			need := "need"
			if open == 1 {
				need = "needs"
			}
			s += fmt.Sprintf(": no regression beyond %s (%d %s more pairs)", human.Pct(worst), open, need)
		default:
			s += ": no regression beyond " + human.Pct(worst)
		}
		parts = append(parts, s)
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d order-dependent or without pairs", other))
	}
	if len(parts) == 0 {
		return "no lanes"
	}
	return strings.Join(parts, ", ")
}

// protocolLine says how the comparison was measured: "benchtime 100ms; 6 samples per
// process; 2 collections; stopped after 3 rounds (every lane decided); 96 processes in
// 1m10s."
func protocolLine(d *loaded.Receipt) string {
	p := d.Plan
	bt := "-"
	if len(p.Arms) > 0 {
		if k, err := lanekind.Lookup(p.Arms[0].Kind); err == nil {
			if v, ok := k.Benchtime(p.Arms[0].Command); ok {
				bt = v
			}
		}
	}
	s := fmt.Sprintf("benchtime %s; %s per process after %d warmup; %s", bt, human.Count(p.Protocol.Samples, "sample", "samples"),
		p.Protocol.Warmup, human.Count(p.Protocol.Collections, "collection", "collections"))
	if last, ok := report.Stopped(d); ok {
		if sq := p.Protocol.Sequential; sq != nil && sq.MaxPairs > 0 {
			s += fmt.Sprintf("; %d of at most %s ran (stopped: %s)", last.Round, human.Count(sq.MaxPairs, "round", "rounds"), stopWhy(d, last.Stop))
		} else {
			s += fmt.Sprintf("; stopped after %s (%s)", human.Count(last.Round, "round", "rounds"), stopWhy(d, last.Stop))
		}
	}
	return s + fmt.Sprintf("; %s.", human.Count(len(d.Records), "process", "processes"))
}

// stopWhy says why a sequential comparison stopped.
func stopWhy(d *loaded.Receipt, stop string) string {
	switch stop {
	case receipt.StopDecided:
		return "every lane decided"
	case receipt.StopMaxPairs:
		return "max-pairs reached"
	case receipt.StopBudget:
		if b := d.Plan.Protocol.Sequential; b != nil && b.Budget > 0 {
			return "the " + b.Budget.String() + " budget would be spent by another round"
		}
		return "budget spent"
	case receipt.StopUndecidable:
		return "the lanes left cannot be decided within the budget at their noise"
	}
	return stop
}

// value formats an arm's value: "1.20ms ±2%", "-" without runs.
func value(s driftcheck.Summary, unit string) string {
	if s.N == 0 {
		return "-"
	}
	return human.Spread(s.Median, s.Lo, s.Hi, unit, s.Bounded)
}

// change formats the change from a to b in percent of a: "+33.3%", "x2.00", "0.0%".
func change(a, b float64) string {
	switch {
	case a == b:
		return "0.0%"
	case a == 0:
		return "from 0"
	}
	return human.Amount((b - a) / a * 100)
}

// wrap folds a line of text to width.
func wrap(s string, width int) string {
	lines := texttable.Wrap(s, width)
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n"
		}
		out += l
	}
	return out
}
