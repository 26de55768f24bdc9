package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/verbs/ledger"
)

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		expr string
		name string
		top  bool
		full bool
	}{
		{"", "BenchmarkGet/size=10", true, true},
		{"Get", "BenchmarkGet", true, true},
		{"Get", "BenchmarkGetAll/size=10", true, true},
		{"^Get", "BenchmarkGet", false, false},
		{"^BenchmarkGet$", "BenchmarkGet", true, true},
		{"^BenchmarkGet$", "BenchmarkGetAll", false, false},
		{"Get/size=10$", "BenchmarkGet/size=10", true, true},
		{"Get/size=10$", "BenchmarkGet/size=100", true, false},
		{"Get/size=10$", "BenchmarkGet", true, true}, // no second level to refuse
		{"Put|Get", "BenchmarkPut/n=1", true, true},
		{"Get(/|x)", "BenchmarkGetx", true, true}, // a slash inside parentheses is not a level
	} {
		m, err := Matcher(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		top, _, _ := strings.Cut(c.name, "/")
		if got := m.Top(top); got != c.top {
			t.Errorf("Matcher(%q).Top(%q) = %v, want %v", c.expr, top, got, c.top)
		}
		if got := m.Full(c.name); got != c.full {
			t.Errorf("Matcher(%q).Full(%q) = %v, want %v", c.expr, c.name, got, c.full)
		}
	}
	if _, err := Matcher("Get("); err == nil {
		t.Error("Matcher accepted an invalid expression")
	}
}

func TestIsPackageArg(t *testing.T) {
	for arg, want := range map[string]bool{
		".": true, "./btree": true, "../x": true, "./...": true, "/abs/pkg": true, "example.com/x/...": true,
		"main": false, "origin/main": false, "v1.2.0": false, "HEAD~3": false, "WORKTREE": false,
	} {
		if got := IsPackageArg(arg); got != want {
			t.Errorf("IsPackageArg(%q) = %v, want %v", arg, got, want)
		}
	}
}

func TestPending(t *testing.T) {
	rep := driftcheck.Report{Pooled: []driftcheck.LaneSummary{
		{Lane: "a", Verdict: driftcheck.LaneReproducedSlower},
		{Lane: "b", Verdict: driftcheck.LaneUndecided},
		{Lane: "c", Verdict: driftcheck.LaneNeutral},
		{Lane: "d", Verdict: driftcheck.LaneInsufficient},
		{Lane: "e", Verdict: driftcheck.LaneOrderDependent},
	}}
	if got, want := Pending(rep), []string{"b", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("Pending = %v, want %v", got, want)
	}
}

// TestPage checks that a saved comparison's page parses as an experiment page with the
// protocol the run used, every lane a primary expected faster, and the sections and
// markers flipbench check and finalize need.
func TestPage(t *testing.T) {
	e := Experiment(Options{ID: 12, Title: `compare ./btree: the working tree against main`, Package: "./btree",
		Base: strings.Repeat("ab", 20), Candidate: "WORKTREE", Date: "2026-12-01"})
	e.Lanes = []spec.Lane{{Name: "Get/size=10", Role: spec.RolePrimary, Expect: spec.ExpectFaster}, {Name: "Put", Role: spec.RolePrimary, Expect: spec.ExpectFaster}}
	maxPairs := 5
	res, err := e.Resolve(spec.Overrides{MaxPairs: &maxPairs})
	if err != nil {
		t.Fatal(err)
	}
	data := Page(e, res, PageInput{Command: "flipbench compare main --save 12", Names: Names{Base: "main (abababababab)", Cand: "the working tree"}})
	p, err := ledger.ParsePage("experiments/012-compare.md", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if p.SpecErr != nil {
		t.Fatalf("%v\n%s", p.SpecErr, data)
	}
	got := p.Spec
	back, err := got.Resolve(spec.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if *back.Protocol.Sequential != *res.Protocol.Sequential || back.Protocol.Samples != res.Protocol.Samples || back.Protocol.Collections != res.Protocol.Collections {
		t.Errorf("the page's protocol %+v is not the run's %+v", back.Protocol, res.Protocol)
	}
	if len(got.Lanes) != 2 || got.Lanes[0].Name != "Get/size=10" || got.Lanes[1].Role != spec.RolePrimary || got.Lanes[1].Expect != spec.ExpectFaster {
		t.Errorf("lanes %+v", got.Lanes)
	}
	if got.Harness.Benchtime != DefaultBenchtime || got.Arms[1].Ref != "WORKTREE" {
		t.Errorf("harness %+v, arms %+v", got.Harness, got.Arms)
	}
	for _, s := range ledger.RequiredSections() {
		if _, ok := p.Sections[s]; !ok {
			t.Errorf("no section %s", s)
		}
	}
	if p.MarkerProblem != "" || len(p.Placeholders()) > 0 {
		t.Errorf("markers %q, placeholders %v", p.MarkerProblem, p.Placeholders())
	}
}
