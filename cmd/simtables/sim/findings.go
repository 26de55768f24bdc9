package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
)

// TableRow is one row of the error-rate table as docs/methodology.md shows it: the cell
// and its rates in percent, each for flipbench, the first-wave rule and naive benchstat.
type TableRow struct {
	Within, Between, Drift string
	Pairs                  int
	MDEPct                 float64
	FalseFaster            [3]float64
	FalseSlower            [3]float64
	FalseNeutral           [3]float64
	Power                  [3]float64
}

// The methods of a TableRow's rates, in order.
const (
	methodFlip = iota
	methodLegacy
	methodNaive
)

// ParseTable reads the rows of an error-rate table that Markdown wrote. Findings reads
// them, so that the sentences about the table state what the table shows.
func ParseTable(table string) ([]TableRow, error) {
	var rows []TableRow
	for i, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 9 || cells[0] == "within" {
			continue
		}
		bad := func(err error) error { return fmt.Errorf("error-rate table line %d: %q: %v", i+1, line, err) }
		r := TableRow{Within: cells[0], Between: cells[1], Drift: cells[2]}
		var err error
		if r.Pairs, err = strconv.Atoi(cells[3]); err != nil {
			return nil, bad(err)
		}
		if r.MDEPct, err = percent(cells[4]); err != nil {
			return nil, bad(err)
		}
		power, _, _ := strings.Cut(cells[8], " (")
		for j, dst := range []*[3]float64{&r.FalseFaster, &r.FalseSlower, &r.FalseNeutral, &r.Power} {
			src := cells[5+j]
			if j == 3 {
				src = power
			}
			parts := strings.Split(src, " / ")
			if len(parts) != 3 {
				return nil, bad(fmt.Errorf("want three rates in %q", src))
			}
			for k, p := range parts {
				if dst[k], err = strconv.ParseFloat(p, 64); err != nil {
					return nil, bad(err)
				}
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no rows in the error-rate table")
	}
	return rows, nil
}

// percent parses "3.3%".
func percent(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
}

// Findings writes the bullets that say what the error-rate table shows, every number
// taken from its rows: flipbench's largest false reproduced and false neutral rates, the
// first-wave rule's false neutral range, naive benchstat's false slower range under
// linear drift, and the smallest power.
func Findings(rows []TableRow) string {
	lo := func(f func(TableRow) float64, keep func(TableRow) bool) (float64, TableRow) {
		best, at := math.Inf(1), TableRow{}
		for _, r := range rows {
			if keep(r) && f(r) < best {
				best, at = f(r), r
			}
		}
		return best, at
	}
	hi := func(f func(TableRow) float64, keep func(TableRow) bool) float64 {
		v, _ := lo(func(r TableRow) float64 { return -f(r) }, keep)
		return -v
	}
	count := func(keep func(TableRow) bool) int {
		n := 0
		for _, r := range rows {
			if keep(r) {
				n++
			}
		}
		return n
	}
	all := func(TableRow) bool { return true }
	drifted := func(r TableRow) bool { return r.Drift != string(NoDrift) }
	linear := func(r TableRow) bool { return strings.HasPrefix(r.Drift, string(Linear)) }

	var b strings.Builder
	ff := hi(func(r TableRow) float64 { return r.FalseFaster[methodFlip] }, all)
	fs := hi(func(r TableRow) float64 { return r.FalseSlower[methodFlip] }, all)
	fmt.Fprintf(&b, "- flipbench's false reproduced rates reach at most %s faster and %s slower over the %d cells, "+
		"against the nominal 2.5%% per direction (the verdict's t interval is exact for normal noise; a rate a few tenths above "+
		"2.5%% would be Monte Carlo error), and are far below it wherever the floor, not the noise, is the binding condition.\n",
		num(ff), num(fs), len(rows))
	fn := hi(func(r TableRow) float64 { return r.FalseNeutral[methodFlip] }, all)
	lfnLo, _ := lo(func(r TableRow) float64 { return r.FalseNeutral[methodLegacy] }, all)
	lfnHi := hi(func(r TableRow) float64 { return r.FalseNeutral[methodLegacy] }, all)
	fmt.Fprintf(&b, "- Its false neutral rate is at most %s: equivalence is only claimed from an interval inside the floor. "+
		"The first-wave rule called a lane neutral whenever its median was within the floor, which at a true effect of exactly "+
		"the floor happened in %s to %s of trials.\n", num(fn), num(lfnLo), num(lfnHi))
	dff := hi(func(r TableRow) float64 { return math.Max(r.FalseFaster[methodFlip], r.FalseSlower[methodFlip]) }, drifted)
	nlo, _ := lo(func(r TableRow) float64 { return r.FalseSlower[methodNaive] }, linear)
	nhi := hi(func(r TableRow) float64 { return r.FalseSlower[methodNaive] }, linear)
	every := count(func(r TableRow) bool { return linear(r) && r.FalseSlower[methodNaive] == 100 })
	fmt.Fprintf(&b, "- Drift does not fool it: linear drift cancels in the pair means; a step or an oscillation widens the "+
		"interval (and the MDE) instead of producing a verdict (false reproduced at most %s in any drifting cell). Naive benchstat "+
		"calls the identical candidate slower in %s to %s of the trials of each linear-drift cell, in every trial in %d of its %d cells.\n",
		num(dff), num(nlo), num(nhi), every, count(linear))
	pw, at := lo(func(r TableRow) float64 { return r.Power[methodFlip] }, all)
	fmt.Fprintf(&b, "- Power at twice the MDE is %s or more in every cell (the lowest: %s within, %s between, %s, %d pairs); "+
		"%d of the %d cells reach 100%%. The price of honesty is the MDE column (%s to %s): on a noisy host with few pairs it is "+
		"far above the floor, and the verdict says `undecided (MDE x%%)` instead of guessing.\n",
		num(pw), at.Within, at.Between, driftText(at.Drift), at.Pairs,
		count(func(r TableRow) bool { return r.Power[methodFlip] == 100 }), len(rows),
		num(lowMDE(rows)), num(hi(func(r TableRow) float64 { return r.MDEPct }, all)))
	return b.String()
}

// lowMDE returns the smallest MDE of the rows.
func lowMDE(rows []TableRow) float64 {
	m := math.Inf(1)
	for _, r := range rows {
		m = math.Min(m, r.MDEPct)
	}
	return m
}

// driftText describes a row's drift in words: "no drift", "linear 20% drift".
func driftText(d string) string {
	if d == string(NoDrift) {
		return "no drift"
	}
	return d + " drift"
}

// num writes a percentage as the table does, with its sign.
func num(x float64) string {
	return strconv.FormatFloat(x, 'f', -1, 64) + "%"
}

// SeqRow is one row of the sequential table as docs/methodology.md shows it.
type SeqRow struct {
	Within, Between, Effect string
	MaxPairs                int
	MeanPairs               float64
	Right, Neutral          float64
	Undecided               float64
	Fixed                   string
}

// ParseSeqTable reads the first table SeqMarkdown wrote, and whether any A/A trial made
// a false reproduced verdict by the last round (the second table's last column).
func ParseSeqTable(table string) ([]SeqRow, bool, error) {
	var rows []SeqRow
	anyFalse, second := false, false
	for i, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) > 2 && cells[0] == "within" {
			second = strings.HasPrefix(cells[2], "by round")
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(cells[0], "---") {
			continue
		}
		bad := func(err error) error { return fmt.Errorf("sequential table line %d: %q: %v", i+1, line, err) }
		switch {
		case !second && len(cells) == 9:
			r := SeqRow{Within: cells[0], Between: cells[1], Effect: cells[2], Fixed: cells[8]}
			var err error
			if r.MaxPairs, err = strconv.Atoi(cells[3]); err != nil {
				return nil, false, bad(err)
			}
			for j, dst := range []*float64{&r.MeanPairs, &r.Right, &r.Neutral, &r.Undecided} {
				if *dst, err = strconv.ParseFloat(cells[4+j], 64); err != nil {
					return nil, false, bad(err)
				}
			}
			rows = append(rows, r)
		case second:
			last := cells[len(cells)-1]
			if last != "-" && last != "0 / 0" {
				anyFalse = true
			}
		}
	}
	if len(rows) == 0 {
		return nil, false, fmt.Errorf("no rows in the sequential table")
	}
	return rows, anyFalse, nil
}

// SeqFindings writes what the sequential table shows, every number taken from its rows:
// per host, the pairs the A/A lane and the real effects used and how they ended, and
// whether any A/A trial produced a false reproduced verdict.
func SeqFindings(rows []SeqRow, anyFalse bool) string {
	var b strings.Builder
	b.WriteString("What the table shows:")
	for _, r := range rows {
		switch r.Effect {
		case "+0%":
			fmt.Fprintf(&b, " with %s within and %s between, the A/A lane used %.1f of at most %d pairs on average, shown neutral in %s of trials and undecided in %s;",
				r.Within, r.Between, r.MeanPairs, r.MaxPairs, num(r.Neutral), num(r.Undecided))
		default:
			fmt.Fprintf(&b, " at %s it reproduced the effect in %s of trials with %.1f pairs on average (the fixed protocol with the same power: %s);",
				r.Effect, num(r.Right), r.MeanPairs, r.Fixed)
		}
	}
	if anyFalse {
		b.WriteString(" some A/A trials produced a false reproduced verdict (the second table counts them).\n")
	} else {
		b.WriteString(" no A/A trial produced a reproduced verdict at any look.\n")
	}
	return b.String()
}

// Sentences rewrites the generated sentences that state the numbers of a methodology
// page's tables (each statement's blocks, from its table) and the gate-level sentence
// (block gate-findings) from the gate table of gate, the gate page's text, so that prose
// about a table says what it shows. simtables calls it after writing the tables; the
// tests check that docs/methodology.md is what it writes.
func Sentences(text, gate string) (string, error) {
	for _, st := range statements() {
		page := text
		if st.gate {
			page = gate
		}
		table, err := Block(page, st.table)
		if err != nil {
			if st.gate {
				err = fmt.Errorf("the gate page: %w", err)
			}
			return "", err
		}
		blocks, err := st.write(table)
		if err != nil {
			return "", err
		}
		for _, b := range blocks {
			if text, err = Splice(text, b.name, b.text); err != nil {
				return "", err
			}
		}
	}
	return text, nil
}

// statement is how the sentences about one generated table are written: the table's
// block (on the gate page when gate is set) and the sentence blocks made from it.
type statement struct {
	table string
	gate  bool
	write func(table string) ([]sentence, error)
}

// sentence is the text of one generated sentence block.
type sentence struct{ name, text string }

// statements lists every table whose numbers a page states in generated sentences.
func statements() []statement {
	return []statement{
		{table: "error-rates", write: func(table string) ([]sentence, error) {
			rows, err := ParseTable(table)
			if err != nil {
				return nil, err
			}
			return []sentence{{"error-findings", Findings(rows)}}, nil
		}},
		{table: "sequential", write: func(table string) ([]sentence, error) {
			seq, anyFalse, err := ParseSeqTable(table)
			if err != nil {
				return nil, err
			}
			return []sentence{{"sequential-findings", SeqFindings(seq, anyFalse)}}, nil
		}},
		{table: "rule", write: func(table string) ([]sentence, error) {
			rule, err := ParseRuleTable(table)
			if err != nil {
				return nil, err
			}
			return []sentence{{"rule-findings", RuleFindings(rule)}, {"decision-findings", DecisionFindings(rule)},
				{"previous-findings", PreviousFindings(rule)}}, nil
		}},
		{table: "mde", write: func(table string) ([]sentence, error) {
			mde, err := ParseMDETable(table)
			if err != nil {
				return nil, err
			}
			return []sentence{{"mde-findings", MDEFindings(mde)}}, nil
		}},
		{table: "gate", gate: true, write: func(table string) ([]sentence, error) {
			noop, err := ParseGateNoOps(table)
			if err != nil {
				return nil, err
			}
			return []sentence{{"gate-findings", GateFindings(noop)}}, nil
		}},
	}
}

// RuleRow is the part of a row of the decision rule's table (RuleMarkdown) that
// RuleFindings states.
type RuleRow struct {
	World      string
	Trials     int
	MeanRounds float64
	// MedianRounds is the median rounds of a run; MeanPrimary the mean rounds to decide
	// the primary lane.
	MedianRounds, MeanPrimary float64
	// Decided is the percent of trials that stopped decided, Accepted the percent the
	// rule accepted; NaN where not measured.
	Decided, Accepted float64
	// FalseSlower and FalseFaster are the decision-level columns: the percent of trials
	// with a lane of no true effect reproduced slower (faster); NaN in a row of the
	// previous rule (PreviousPrefix), whose program did not measure them.
	FalseSlower, FalseFaster float64
}

// ParseRuleTable reads the rows of a table RuleMarkdown wrote.
func ParseRuleTable(table string) ([]RuleRow, error) {
	var out []RuleRow
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
		f := strings.Split(strings.Trim(line, "|"), "|")
		if len(f) != 10 {
			return nil, fmt.Errorf("rule table row %q: want 10 cells", line)
		}
		r := RuleRow{World: strings.TrimSpace(f[0])}
		var err error
		if r.Trials, err = strconv.Atoi(strings.TrimSpace(f[1])); err != nil {
			return nil, fmt.Errorf("rule table row %q: trials: %w", line, err)
		}
		// cell reads a number, or "-" (not measured) as NaN.
		cell := func(i int, what string, to *float64) {
			s := strings.TrimSpace(f[i])
			if err != nil || s == "-" {
				*to = math.NaN()
				return
			}
			if *to, err = strconv.ParseFloat(s, 64); err != nil {
				err = fmt.Errorf("rule table row %q: %s: %w", line, what, err)
			}
		}
		cell(2, "stopped decided", &r.Decided)
		cell(3, "accepted", &r.Accepted)
		cell(4, "median rounds", &r.MedianRounds)
		cell(5, "mean rounds", &r.MeanRounds)
		cell(6, "mean rounds, primary", &r.MeanPrimary)
		cell(8, "decisions reproduced slower", &r.FalseSlower)
		cell(9, "decisions reproduced faster", &r.FalseFaster)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RuleFindings states what the decision rule's table says of the spending functions: the
// mean rounds of the fake-lane experiment with 3% of its processes contaminated under each,
// and, for Hwang-Shih-DeCani, the clean experiment and the A/A beside Pocock's.
func RuleFindings(rows []RuleRow) string {
	row := byWorld(rows)
	c3 := func(sp string) RuleRow { return row["fake lanes, 3% contaminated, "+sp+" spending"] }
	clean, aa := "fake lanes, clean", "A/A, a primary expected neutral and 9 guards, 5% contaminated"
	hsd := func(world string) RuleRow { return row[world+", hsd spending"] }
	return fmt.Sprintf("in the decision rule's simulation below the fake-lane experiment with 3%% of its processes\ncontaminated needs a mean of %.1f rounds under Pocock, %.1f under the power family, %.1f\nunder O'Brien-Fleming and %.1f under Hwang-Shih-DeCani (%d trials each); clean, %.1f under Pocock\nand %.1f under Hwang-Shih-DeCani, and the A/A %.1f and %.1f, with %s and %s of its decisions\nreproducing a lane slower, %s and %s faster.\n",
		c3("pocock").MeanRounds, c3("power").MeanRounds, c3("obrien-fleming").MeanRounds, c3("hsd").MeanRounds, c3("pocock").Trials,
		row[clean].MeanRounds, hsd(clean).MeanRounds, row[aa].MeanRounds, hsd(aa).MeanRounds,
		num(row[aa].FalseSlower), num(hsd(aa).FalseSlower), num(row[aa].FalseFaster), num(hsd(aa).FalseFaster))
}

// byWorld indexes rule table rows by their world's name.
func byWorld(rows []RuleRow) map[string]RuleRow {
	out := make(map[string]RuleRow, len(rows))
	for _, r := range rows {
		out[r.World] = r
	}
	return out
}

// statedPct is the stated false reproduced rate per direction, in percent: alpha/2 at the
// default alpha of 0.05.
const statedPct = 2.5

// DecisionFindings states the decision-level columns of the decision rule's table: the
// largest share of decisions with a lane of no true effect reproduced slower, and faster,
// over its worlds, and every world where either passes the stated rate.
func DecisionFindings(rows []RuleRow) string {
	all := rows
	rows = slices.DeleteFunc(slices.Clone(rows), func(r RuleRow) bool {
		return strings.HasPrefix(r.World, PreviousPrefix) || strings.HasPrefix(r.World, KnownPrefix) || strings.HasSuffix(r.World, NotSeated)
	})
	worst := func(f func(RuleRow) float64) (float64, string) {
		best, at := -1.0, ""
		for _, r := range rows {
			if f(r) > best {
				best, at = f(r), r.World
			}
		}
		return best, at
	}
	slow, slowAt := worst(func(r RuleRow) float64 { return r.FalseSlower })
	fast, fastAt := worst(func(r RuleRow) float64 { return r.FalseFaster })
	var over []string
	for _, r := range rows {
		if r.FalseSlower > statedPct || r.FalseFaster > statedPct {
			over = append(over, fmt.Sprintf("%s (%s slower, %s faster)", r.World, num(r.FalseSlower), num(r.FalseFaster)))
		}
	}
	trials := 0
	if len(rows) > 0 {
		trials = rows[0].Trials
	}
	var b strings.Builder
	fmt.Fprintf(&b, "At the decision level (a whole run, %d trials per world), the share of runs that ended with at least one lane of no true effect reproduced slower is at most %s (the world \"%s\"), and reproduced faster at most %s (\"%s\"), over the table's %d worlds. The %s per direction that flipbench states is each lane's, not a run's: a run of many no-effect lanes is held to no family-wise rate (see \"Many lanes\"), so these shares are what the rule did, not a bound it keeps",
		trials, num(slow), slowAt, num(fast), fastAt, len(rows), num(statedPct))
	if len(over) == 0 {
		b.WriteString("; no world's share exceeds even the per-lane rate.\n")
	} else {
		fmt.Fprintf(&b, "; %d worlds' shares exceed the per-lane rate: %s.\n", len(over), strings.Join(over, "; "))
	}
	b.WriteString(seatingFindings(all))
	b.WriteString(calibrationFindings(all))
	b.WriteString(collectionFindings(all))
	return b.String()
}

// collectionFindings states the rows whose second collection is three times as noisy
// beside the same worlds with equal noise: the rounds the fake-lane experiment and the A/A
// take, and how often a control changed by exactly its floor is shown neutral.
func collectionFindings(rows []RuleRow) string {
	row := byWorld(rows)
	fake, aa := "fake lanes", "A/A, a primary expected neutral and 9 guards"
	worlds := []string{fake + ", clean", fake + NoisierCollection, aa + ", 5% contaminated", aa + NoisierCollection + ", 5% contaminated", FloorControl, FloorControl + NoisierCollection}
	for _, w := range worlds {
		if _, ok := row[w]; !ok {
			return ""
		}
	}
	return fmt.Sprintf("With the second collection three times as noisy as the first (each collection judged with its own noise, the pooled estimate weighted by their precision), the fake-lane experiment takes a mean of %.1f rounds (%.1f with equal noise) and the A/A of ten lanes %.1f (%.1f); a control changed by exactly its 3%% floor is shown neutral in %s of the runs with equal noise and %s with the noisier collection, against the 5%% the equivalence test states.\n",
		row[worlds[1]].MeanRounds, row[worlds[0]].MeanRounds, row[worlds[3]].MeanRounds, row[worlds[2]].MeanRounds, num(row[worlds[4]].Accepted), num(row[worlds[5]].Accepted))
}

// PrimaryAlone names the decision-rule table row of the fake-lane primary with no other
// lane to share its noise with, clean.
const PrimaryAlone = "the primary alone, clean"

// CalibrationMark is in the name of every decision-rule table row whose lanes are lent a
// host calibration of their noise (RuleWorld.Calibration).
const CalibrationMark = "calibration lent"

// calibrationFindings compares the rows of a lane alone lent a host calibration with the
// primary alone without one.
func calibrationFindings(rows []RuleRow) string {
	i := slices.IndexFunc(rows, func(r RuleRow) bool { return r.World == PrimaryAlone })
	var parts []string
	for _, r := range rows {
		if strings.Contains(r.World, CalibrationMark) {
			parts = append(parts, fmt.Sprintf("\"%s\" %.1f (a no-effect lane reproduced slower in %s and faster in %s of the runs)", r.World, r.MeanRounds, num(r.FalseSlower), num(r.FalseFaster)))
		}
	}
	if i < 0 || len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("A lane alone lent a host calibration of its noise: \"%s\" takes a mean of %.1f rounds; %s.\n", rows[i].World, rows[i].MeanRounds, strings.Join(parts, "; "))
}

// NotSeated ends the name of a decision-rule table row whose lanes ran in a random order
// instead of seated (RuleWorld.Unseated): the schedule without its alternation, shown
// beside the same world seated and left out of the rule's rates.
const NotSeated = ", lanes in a random order (not seated)"

// seatingFindings compares every row run without seating with the same world seated.
func seatingFindings(rows []RuleRow) string {
	var b strings.Builder
	for _, r := range rows {
		name, ok := strings.CutSuffix(r.World, NotSeated)
		if !ok {
			continue
		}
		i := slices.IndexFunc(rows, func(s RuleRow) bool { return s.World == name })
		if i < 0 {
			continue
		}
		s := rows[i]
		fmt.Fprintf(&b, "The world \"%s\" with its lanes seated (the schedule's alternation) stopped decided in %s of its runs, a no-effect lane reproduced slower in %s and faster in %s of them, the primary decided after %.1f rounds; with the lanes of each pass in a random order (left out of the rates above), %s, %s, %s and %.1f.\n",
			name, num(s.Decided), num(s.FalseSlower), num(s.FalseFaster), s.MeanPrimary, num(r.Decided), num(r.FalseSlower), num(r.FalseFaster), r.MeanPrimary)
	}
	return b.String()
}

// GateNoOp is a no-op row of the gate table (GateMarkdown): its lanes and process noise,
// trials, and the percent that failed the gate (regression, exit 3).
type GateNoOp struct {
	Lanes         int
	Noise         string
	Trials        int
	RegressionPct float64
}

// ParseGateNoOps reads the no-op rows of a gate table GateMarkdown wrote.
func ParseGateNoOps(table string) ([]GateNoOp, error) {
	var out []GateNoOp
	for _, line := range strings.Split(table, "\n") {
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(f) != 10 || f[3] != "no-op" {
			continue
		}
		r := GateNoOp{Noise: f[1]}
		var err error
		if r.Lanes, err = strconv.Atoi(f[0]); err != nil {
			return nil, fmt.Errorf("gate table row %q: lanes: %w", line, err)
		}
		if r.Trials, err = strconv.Atoi(f[4]); err != nil {
			return nil, fmt.Errorf("gate table row %q: trials: %w", line, err)
		}
		if r.RegressionPct, err = strconv.ParseFloat(f[6], 64); err != nil {
			return nil, fmt.Errorf("gate table row %q: regression: %w", line, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no no-op rows in the gate table")
	}
	return out, nil
}

// correlatedWorld is how the gate table names a world whose collections are perfectly
// correlated (GateWorld.Shared), which the gate's family bound does not assume.
const correlatedWorld = "collections perfectly correlated"

// GateFindings states the gate level's no-op failure rate: over the gate table's rows of
// the worlds the bound assumes, the largest share of no-op runs that failed the gate and
// the failures in all; then, apart, each row whose collections are perfectly correlated.
func GateFindings(rows []GateNoOp) string {
	worst, at := -1.0, GateNoOp{}
	failed, runs, n := 0.0, 0, 0
	lanes := map[int]bool{}
	var correlated []string
	for _, r := range rows {
		if strings.Contains(r.Noise, correlatedWorld) {
			correlated = append(correlated, fmt.Sprintf("%.0f of %d runs with %s (%s)", math.Round(r.RegressionPct/100*float64(r.Trials)), r.Trials,
				human.Count(r.Lanes, "lane", "lanes"), num(r.RegressionPct)))
			continue
		}
		if r.RegressionPct > worst {
			worst, at = r.RegressionPct, r
		}
		failed += r.RegressionPct / 100 * float64(r.Trials)
		runs += r.Trials
		n++
		lanes[r.Lanes] = true
	}
	within := "within"
	if worst > statedPct {
		within = "beyond"
	}
	var b strings.Builder
	b.WriteString("At the gate level ([gate.md](gate.md)'s simulation of the gate's real code), ")
	if worst == 0 {
		fmt.Fprintf(&b, "no no-op change failed the gate (a regression, exit 3): 0 of its %d no-op runs over %d rows (%d lane counts, each at several process noises, some with contaminated processes or an AR(1) host)", runs, n, len(lanes))
	} else {
		fmt.Fprintf(&b, "a no-op change failed the gate (a regression, exit 3) in at most %s of the runs of a row (%d lanes at %s process noise), %.0f of its %d no-op runs in all", num(worst), at.Lanes, at.Noise, math.Round(failed), runs)
	}
	fmt.Fprintf(&b, ": %s the stated %s for the whole gate, whatever its number of lanes.", within, num(statedPct))
	if len(correlated) > 0 {
		fmt.Fprintf(&b, " Where every process of a lane ran at the same level in both collections, which the bound does not assume (gate.md, \"What the bound assumes\"), no-ops failed it in %s.", strings.Join(correlated, " and "))
	}
	b.WriteString("\n")
	return b.String()
}

// markers returns the begin and end markers of generated block name.
func markers(name string) (string, string) {
	return "<!-- generated by simtables: " + name + " begin -->\n", "<!-- generated by simtables: " + name + " end -->\n"
}

// Block returns the text between the markers of generated block name.
func Block(text, name string) (string, error) {
	begin, end := markers(name)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q block", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return text[i+len(begin) : j], nil
}

// Splice replaces the text between the markers of generated block name.
func Splice(text, name, content string) (string, error) {
	begin, end := markers(name)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q block", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return text[:i+len(begin)] + content + text[j:], nil
}
