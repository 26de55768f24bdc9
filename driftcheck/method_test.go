package driftcheck

import (
	"strings"
	"testing"
)

func TestMethodStringParses(t *testing.T) {
	for _, m := range []Method{CurrentMethod("v1"), ImpliedMethod(), {Schema: 14, Spending: SpendHSD, Moderation: "x", SetAside: "y", CollectionNoiseP: 0.001, Family: "holm"}} {
		got, err := ParseMethod(m.String())
		if err != nil {
			t.Fatalf("ParseMethod(%q): %v", m, err)
		}
		if !got.Same(m) {
			t.Errorf("ParseMethod(%q) = %+v, want %+v", m, got, m)
		}
	}
	if s := ImpliedMethod().String(); s != "schema=13 spending=pocock moderation=empirical-bayes set-aside=hampel-5 collection-noise-p=0.01 family=per-lane" {
		t.Errorf("ImpliedMethod().String() = %q", s)
	}
}

func TestParseMethodErrors(t *testing.T) {
	full := CurrentMethod("").String()
	for _, tc := range []struct{ in, want string }{
		{"", "want all six parts"},
		{strings.Replace(full, "family=per-lane", "", 1), "want all six parts"},
		{full + " family=holm", "family given twice"},
		{full + " colour=red", `unknown part "colour"`},
		{strings.Replace(full, "schema=13", "schema=x", 1), "schema: strconv.Atoi"},
		{strings.Replace(full, "schema=13", "schema", 1), `"schema" is not key=value`},
	} {
		if _, err := ParseMethod(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseMethod(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

// The method this code computes is the current one and every spending function; a method
// of another schema or with a part the code does not implement is refused with the part
// named, and AnalyzeBy refuses to compute it.
func TestMethodComputable(t *testing.T) {
	cur := CurrentMethod("")
	if err := cur.Computable(); err != nil {
		t.Fatal(err)
	}
	if err := ImpliedMethod().Computable(); err != nil {
		t.Errorf("the implied method of receipts made before methods were recorded: %v", err)
	}
	for _, sp := range Spendings() {
		m := cur
		m.Spending = sp
		if err := m.Computable(); err != nil {
			t.Errorf("spending %s: %v", sp, err)
		}
	}
	for name, tc := range map[string]struct {
		edit func(*Method)
		want string
	}{
		"schema":     {func(m *Method) { m.Schema = SchemaVersion + 1 }, "analysis schema"},
		"spending":   {func(m *Method) { m.Spending = "wild" }, `spending "wild"`},
		"moderation": {func(m *Method) { m.Moderation = "none" }, `moderation "none"`},
		"set-aside":  {func(m *Method) { m.SetAside = "none" }, `set-aside "none"`},
		"collection": {func(m *Method) { m.CollectionNoiseP = 0.05 }, "collection noise p 0.05"},
		"family":     {func(m *Method) { m.Family = "holm" }, `family "holm"`},
	} {
		m := cur
		tc.edit(&m)
		if err := m.Computable(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Computable = %v, want %q", name, err, tc.want)
		}
		if _, err := AnalyzeBy(m, Input{}, DefaultConfig()); err == nil {
			t.Errorf("%s: AnalyzeBy computed a method this code does not", name)
		}
	}
}

// The page's own spending function wins over the method's default; the report records
// the method and the spending used.
func TestAnalyzeByRecordsTheMethod(t *testing.T) {
	in := Input{Base: "base", Candidates: []string{"cand"}, Lanes: []Lane{{Name: "a"}}, Collections: 1, Passes: 2}
	for p := 1; p <= 2; p++ {
		for _, arm := range []string{"base", "cand"} {
			in.Observations = append(in.Observations, Observation{Collection: 1, Pass: p, Lane: "a", Arm: arm, Order: OrderOf(p), Samples: []float64{1, 1.01, 0.99}})
		}
	}
	m := CurrentMethod("v9")
	m.Spending = SpendOBrienFleming
	cfg := DefaultConfig()
	cfg.MinPairs, cfg.MaxPairs = 1, 4
	rep, err := AnalyzeBy(m, in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Method == nil || *rep.Method != m || rep.Config.Spending != SpendOBrienFleming {
		t.Fatalf("method %+v, spending %s; want %+v and the method's spending", rep.Method, rep.Config.Spending, m)
	}
	cfg.Spending = SpendHSD
	if rep, err = AnalyzeBy(m, in, cfg); err != nil || rep.Config.Spending != SpendHSD {
		t.Fatalf("spending %s, %v; want the page's hsd", rep.Config.Spending, err)
	}
}
