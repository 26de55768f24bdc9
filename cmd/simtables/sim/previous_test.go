package sim_test

import (
	"os"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
)

// TestPreviousRows checks that the previous rule's rows of docs/methodology.md's rule table
// are what its program printed (testdata/previous_rule.out), so that the comparison the
// page states cannot drift from the measurement behind it.
func TestPreviousRows(t *testing.T) {
	out, err := os.ReadFile("testdata/previous_rule.out")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sim.ParsePrevious(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Errorf("%d worlds of the previous rule, want the rule table's first 4", len(rows))
	}
	table, err := sim.Block(readDoc(t), "rule")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(sim.PreviousMarkdown(rows)), "\n") {
		if !strings.Contains(table, line+"\n") {
			t.Errorf("the rule table lacks the previous rule's row\n%s\n(make sim rewrites it from testdata/previous_rule.out)", line)
		}
	}
}

// TestParsePrevious reads the program's lines among go test's and refuses an output without
// any.
func TestParsePrevious(t *testing.T) {
	rows, err := sim.ParsePrevious("=== RUN   TestPreviousRule\n| fake lanes, clean | 200 | accepted 200 | mean rounds 6.4 | mean rounds, primary 3.8 | false 0 of 600 |\n--- PASS: TestPreviousRule (9.00s)\n")
	if err != nil || len(rows) != 1 {
		t.Fatalf("ParsePrevious = %+v, %v", rows, err)
	}
	if r := rows[0]; r.World != "fake lanes, clean" || r.Trials != 200 || r.Accepted != 200 || r.MeanRounds != 6.4 || r.MeanPrimary != 3.8 || r.False != 0 || r.Decisions != 600 {
		t.Errorf("row %+v", r)
	}
	if _, err := sim.ParsePrevious("ok  \tgithub.com/flipbench/flipbench/cmd/simtables/sim\n"); err == nil {
		t.Error("an output without a result line was accepted")
	}
	got := sim.PreviousFindings([]sim.RuleRow{{World: "fake lanes, clean", MeanPrimary: 2.7}, {World: sim.PreviousPrefix + "fake lanes, clean", MeanPrimary: 3.8}})
	if !strings.Contains(got, "fake lanes, clean: 2.7 rounds against 3.8 (71%)") {
		t.Errorf("PreviousFindings = %q", got)
	}
}

// TestMDERow recomputes the first row of docs/methodology.md's MDE table with the seed and
// trials simtables used (make sim: 200 a row) and checks that the page shows it.
func TestMDERow(t *testing.T) {
	r, err := sim.EvaluateMDE(sim.MDEGrid()[0], 200, 9)
	if err != nil {
		t.Fatal(err)
	}
	table, err := sim.Block(readDoc(t), "mde")
	if err != nil {
		t.Fatal(err)
	}
	row := strings.Split(strings.TrimSpace(sim.MDEMarkdown([]sim.MDEResult{r})), "\n")[2]
	if !strings.Contains(table, row+"\n") {
		t.Errorf("the MDE table lacks the recomputed row\n%s\n(make sim rewrites it)", row)
	}
}
