package sim

import (
	"strings"
	"testing"
)

// TestBudgetNeverWorse runs the budget table's trials on a few of the rule table's worlds
// through the pipeline's stopping rule: a larger budget never leaves more lanes open for
// the decision rule or wider intervals (beyond BudgetZ standard errors), and the
// smallest budget is spent, not left over.
func TestBudgetNeverWorse(t *testing.T) {
	var cases []RuleCase
	for _, c := range RuleGrid() {
		switch c.Name {
		case "fake lanes, noise 3x in collection 2", "the primary alone, clean",
			"fake lanes, the control 3% slower (its floor), noise 3x in collection 2":
			cases = append(cases, c)
		}
	}
	if len(cases) != 3 {
		t.Fatalf("found %d of the 3 worlds in the rule grid", len(cases))
	}
	results, err := EvaluateBudgetGrid(cases, []int{3, 5, 10, 20}, 10)
	if err != nil {
		t.Fatal(err)
	}
	md := BudgetMarkdown(cases, results)
	t.Log(md)
	for i, r := range results {
		if !r.Monotone(BudgetZ) {
			und, wid := r.Worse()
			t.Errorf("%s: a larger budget did worse: undecided %v, half-width %v", cases[i].Name, und, wid)
		}
		if spent := meanFinite(r.Spent[0]); spent < 0.75 {
			t.Errorf("%s: the smallest budget (%d rounds) was %.0f%% spent", cases[i].Name, r.Budgets[0], 100*spent)
		}
		last := len(r.Budgets) - 1
		if meanOf(r.Undecided[last]) > meanOf(r.Undecided[0]) {
			t.Errorf("%s: %v lanes open at the largest budget, %v at the smallest", cases[i].Name, meanOf(r.Undecided[last]), meanOf(r.Undecided[0]))
		}
	}
	if !strings.Contains(md, "0 of 3.") {
		t.Errorf("the table's summary does not say 0 of 3 worlds:\n%s", md)
	}
}
