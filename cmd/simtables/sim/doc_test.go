package sim_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
)

// methodology is the page whose tables and sentences simtables writes.
const methodology = "../../../docs/methodology.md"

// TestMethodologySentences checks that the sentences of docs/methodology.md that state
// the numbers of its error-rate, sequential and decision-rule tables and of docs/gate.md's
// gate table are what simtables writes from those tables: a number edited in a sentence or a table, or a table regenerated without its
// sentences, fails here (go run ./cmd/simtables -sentences rewrites them).
func TestMethodologySentences(t *testing.T) {
	doc := readDoc(t)
	gate, err := os.ReadFile("../../../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.Sentences(doc, string(gate))
	if err != nil {
		t.Fatal(err)
	}
	if want != doc {
		for _, name := range []string{"error-findings", "sequential-findings", "rule-findings", "decision-findings", "previous-findings", "mde-findings", "gate-findings"} {
			got, _ := sim.Block(doc, name)
			exp, _ := sim.Block(want, name)
			if got != exp {
				t.Errorf("docs/methodology.md's %s block is stale; run go run ./cmd/simtables -sentences\nhave:\n%s\nwant:\n%s", name, got, exp)
			}
		}
	}
}

// TestMethodologyRows recomputes rows of the page's tables with the seeds and trial
// counts simtables used and checks that the page shows them: a change to the simulation
// or to the drift check that moves its numbers fails here until make sim rewrites the
// page. It recomputes the cheapest rows (the quiet host with 2 pairs, without and with
// linear drift) to stay fast; a row of the sequential table takes a minute and a half.
func TestMethodologyRows(t *testing.T) {
	doc := readDoc(t)
	table, err := sim.Block(doc, "error-rates")
	if err != nil {
		t.Fatal(err)
	}
	trials := leadingCount(t, table, `^(\d+) seeded experiments per cell`)
	rows := tableLines(table)
	cells := sim.Grid(false)
	if len(rows) != len(cells) {
		t.Fatalf("the error-rate table has %d rows, the grid %d cells", len(rows), len(cells))
	}
	for i, c := range cells {
		if c.Within != 0.02 || c.Between != 0 || c.Pairs != 2 || (c.DriftKind != sim.NoDrift && c.DriftKind != sim.Linear) {
			continue
		}
		r := sim.Evaluate(c, trials, uint64(i)*1_000_003) // the seed EvaluateGrid gives cell i
		if got := lastLine(sim.Markdown([]sim.Result{r}, trials)); got != rows[i] {
			t.Errorf("error-rate row %d is stale; run make sim TRIALS=%d\npage:       %s\nrecomputed: %s", i+1, trials, rows[i], got)
		}
	}

}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(methodology)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leadingCount reads the count a generated block starts with.
func leadingCount(t *testing.T, block, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(block)
	if m == nil {
		t.Fatalf("the block does not start with %s", pattern)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// tableLines returns the body rows of the first markdown table in text.
func tableLines(text string) []string {
	var rows []string
	inTable := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "|---"):
			inTable = true
		case inTable && strings.HasPrefix(l, "| "):
			rows = append(rows, l)
		case inTable:
			return rows
		}
	}
	return rows
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestContinuedRows recomputes the cheapest rows of docs/gate.md's table of continued gates
// (one lane at 2% process noise, a no-op and a regression) with the seeds and trial count
// simtables used, and checks that the page shows them.
func TestContinuedRows(t *testing.T) {
	b, err := os.ReadFile("../../../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := sim.Block(string(b), "continued")
	if err != nil {
		t.Fatal(err)
	}
	trials := leadingCount(t, table, `^(\d+) seeded gates per row`)
	rows := tableLines(table)
	worlds := sim.ContinuedGrid()
	if len(rows) != len(worlds) {
		t.Fatalf("the continued-gate table has %d rows, the grid %d worlds", len(rows), len(worlds))
	}
	for i, w := range worlds[:2] {
		r, err := sim.EvaluateContinuedGate(w, 3, 3, trials, uint64(i)*3_000_017+11) // simtables' seed for row i
		if err != nil {
			t.Fatal(err)
		}
		if got := lastLine(sim.ContinuedMarkdown([]sim.ContinuedResult{r})); got != rows[i] {
			t.Errorf("continued-gate row %d is stale; run make sim\npage:       %s\nrecomputed: %s", i+1, rows[i], got)
		}
	}
}

// TestGateFindingsApart: rows whose collections are perfectly correlated, which the gate's
// bound does not assume, are stated apart and do not decide whether the gate is within
// its stated rate.
func TestGateFindingsApart(t *testing.T) {
	rows := []sim.GateNoOp{
		{Lanes: 5, Noise: "2%", Trials: 200},
		{Lanes: 20, Noise: "11%", Trials: 200, RegressionPct: 0.5},
		{Lanes: 5, Noise: "11%, collections perfectly correlated", Trials: 200, RegressionPct: 10},
	}
	got := sim.GateFindings(rows)
	for _, want := range []string{"in at most 0.5% of the runs of a row (20 lanes at 11% process noise), 1 of its 400 no-op runs in all: within the stated 2.5%",
		"no-ops failed it in 20 of 200 runs with 5 lanes (10%)."} {
		if !strings.Contains(got, want) {
			t.Errorf("GateFindings lacks %q:\n%s", want, got)
		}
	}
}
