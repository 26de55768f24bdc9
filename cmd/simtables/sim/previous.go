package sim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// PreviousCommit is the commit of the decision rule this wave's rule replaced: alpha/looks
// over the looks, every collection at the full alpha, the wrong-way veto, each lane's own
// noise, nothing set aside or measured again.
const PreviousCommit = "d7a71ed"

// PreviousPrefix leads the name of a decision-rule table row measured with the previous
// rule (RuleMarkdown).
const PreviousPrefix = "previous rule (" + PreviousCommit + "): "

// PreviousRow is one world of the previous rule as its program measured it
// (cmd/simtables/sim/testdata/previous_rule_test.go.txt, run in a worktree of PreviousCommit,
// whose output is kept in cmd/simtables/sim/testdata/previous_rule.out).
type PreviousRow struct {
	World            string
	Trials, Accepted int
	MeanRounds       float64
	MeanPrimary      float64
	False, Decisions int
}

// previousLine is a line the previous rule's program prints: "| fake lanes, clean | 200 |
// accepted 200 | mean rounds 6.4 | mean rounds, primary 3.8 | false 0 of 600 |".
var previousLine = regexp.MustCompile(`^\| (.+) \| (\d+) \| accepted (\d+) \| mean rounds ([0-9.]+) \| mean rounds, primary ([0-9.]+) \| false (\d+) of (\d+) \|$`)

// ParsePrevious reads the previous rule's program output: its table lines, every other
// line (go test's) ignored. It is an error when there is no such line.
func ParsePrevious(out string) ([]PreviousRow, error) {
	var rows []PreviousRow
	for i, line := range strings.Split(out, "\n") {
		m := previousLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		r := PreviousRow{World: m[1]}
		var errs [6]error
		r.Trials, errs[0] = strconv.Atoi(m[2])
		r.Accepted, errs[1] = strconv.Atoi(m[3])
		r.MeanRounds, errs[2] = strconv.ParseFloat(m[4], 64)
		r.MeanPrimary, errs[3] = strconv.ParseFloat(m[5], 64)
		r.False, errs[4] = strconv.Atoi(m[6])
		r.Decisions, errs[5] = strconv.Atoi(m[7])
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no result line of the previous rule's program")
	}
	return rows, nil
}

// PreviousMarkdown renders the previous rule's rows in the decision rule's table: the
// columns its program measured, "-" for the others.
func PreviousMarkdown(rows []PreviousRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s%s | %d | - | %s | - | %.1f | %.1f | %s | - | - |\n", PreviousPrefix, r.World, r.Trials,
			pct(Rate{r.Accepted, r.Trials}), r.MeanRounds, r.MeanPrimary, pct(Rate{r.False, r.Decisions}))
	}
	return b.String()
}

// PreviousFindings compares the rule with the previous one on the worlds both measured:
// the mean rounds to decide the primary (an effect of twice the floor) now and then, and
// what the now is of the then.
func PreviousFindings(rows []RuleRow) string {
	now := map[string]RuleRow{}
	for _, r := range rows {
		if !strings.HasPrefix(r.World, PreviousPrefix) && !strings.HasPrefix(r.World, KnownPrefix) {
			now[r.World] = r
		}
	}
	var parts []string
	worst, nowSum, thenSum := 0.0, 0.0, 0.0
	for _, p := range rows {
		world, ok := strings.CutPrefix(p.World, PreviousPrefix)
		n, found := now[world]
		if !ok || !found || p.MeanPrimary <= 0 {
			continue
		}
		ratio := n.MeanPrimary / p.MeanPrimary
		worst = max(worst, ratio)
		nowSum, thenSum = nowSum+n.MeanPrimary, thenSum+p.MeanPrimary
		parts = append(parts, fmt.Sprintf("%s: %.1f rounds against %.1f (%.0f%%)", world, n.MeanPrimary, p.MeanPrimary, 100*ratio))
	}
	if len(parts) == 0 {
		return "The table has no world of the previous rule to compare with.\n"
	}
	n := float64(len(parts))
	out := fmt.Sprintf("Mean rounds to decide the primary (an effect of twice the floor), today against the previous rule (%s) on the same worlds, seeds and page: %s. Today's rule takes at most %.0f%% of the previous rule's rounds in any of these worlds, and %.0f%% over them together (a mean of %.2f rounds against %.2f).\n",
		PreviousCommit, strings.Join(parts, "; "), 100*worst, 100*nowSum/thenSum, nowSum/n, thenSum/n)
	return out + knownFindings(rows, now)
}

// knownFindings states the rows judged with the noise known (KnownPrefix): the rounds the
// rule's tests need when no noise is estimated, against today's and half the previous
// rule's on the same world.
func knownFindings(rows []RuleRow, now map[string]RuleRow) string {
	var b strings.Builder
	for _, k := range rows {
		world, ok := strings.CutPrefix(k.World, KnownPrefix)
		if !ok {
			continue
		}
		n := now[world]
		fmt.Fprintf(&b, "With its noise known exactly (no estimate at all), the world \"%s\" has its primary decided after %.1f rounds on average at the same looks and tails, and every lane after a median of %.1f (today's rule: %.1f and %.1f)", world, k.MeanPrimary, k.MedianRounds, n.MeanPrimary, n.MedianRounds)
		if i := slices.IndexFunc(rows, func(r RuleRow) bool { return r.World == PreviousPrefix+world }); i >= 0 {
			fmt.Fprintf(&b, "; half the previous rule's rounds would be %.1f", rows[i].MeanPrimary/2)
		}
		b.WriteString(".\n")
	}
	return b.String()
}
