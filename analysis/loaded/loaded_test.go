package loaded

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/testkit/receipttest"
	"github.com/flipbench/flipbench/model/receipt"
)

// finishSynth writes a synthetic receipt with what Finish derives from it (analysis.json,
// a page, the manifest), and returns its folder.
func finishSynth(t *testing.T, s receipttest.Synth) string {
	t.Helper()
	return finishSynthIn(t, receipttest.Write(t, s))
}

// TestOpen checks that Open refuses a receipt that does not match its manifest and
// reads the stored analysis of one that does.
func TestOpen(t *testing.T) {
	dir := finishSynth(t, receipttest.Default())
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Analysis.Lanes) != fmt.Sprint(fresh.Analysis.Lanes) || len(d.Records) != 16 || d.Plan.Experiment != 1 {
		t.Errorf("Open and Load disagree")
	}
	receipttest.Flip(t, filepath.Join(dir, receipt.AnalysisFile))
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "does not match its manifest; refusing a changed receipt") {
		t.Errorf("got %v", err)
	}
	if _, err := Open(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("no error for a missing folder")
	}
}

// TestDriftInputBetter checks that the better direction comes from the plan alone, which
// spec.Resolve fills for every lane: a rate unit does not make a lane higher-is-better.
func TestDriftInputBetter(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}},
		Protocol: receipt.Protocol{Collections: 1, Passes: 2},
		Lanes:    []receipt.Lane{{Name: "rate", Better: "higher"}, {Name: "time", Better: "lower"}, {Name: "unset"}}}
	var recs []receipt.Record
	for _, l := range plan.Lanes {
		recs = append(recs, receipt.Record{Collection: 1, Pass: 1, Lane: l.Name, Arm: "base", Samples: []float64{1, 2}, Unit: "ops/s"})
	}
	in := DriftInput(driftcheck.CurrentMethod(""), plan, recs)
	got := map[string]bool{}
	for _, l := range in.Lanes {
		got[l.Name] = l.HigherIsBetter
	}
	want := map[string]bool{"rate": true, "time": false, "unset": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("higher-is-better %v, want %v", got, want)
	}
}

// TestAnalysisDiff checks that a stored analysis that differs from the recomputed one in
// any field is named by its path, and that equal ones agree.
func TestAnalysisDiff(t *testing.T) {
	fresh := driftcheck.Report{SchemaVersion: driftcheck.SchemaVersion, Base: "base", Candidates: []string{"cand"},
		Pooled: []driftcheck.LaneSummary{{Lane: "a", Arm: "cand", EstimatePct: -3.0712, Reason: "effect -0.0%"}}}
	stored := fresh
	stored.Pooled = slices.Clone(fresh.Pooled)
	if d := AnalysisDiff(stored, fresh); d != "" {
		t.Errorf("equal analyses differ: %s", d)
	}
	stored.Pooled[0].EstimatePct = -42
	if d, want := AnalysisDiff(stored, fresh), "pooled[0].estimate_pct: -42 stored, -3.0712 recomputed"; d != want {
		t.Errorf("AnalysisDiff = %q, want %q", d, want)
	}
	stored.Pooled = nil
	if d, want := AnalysisDiff(stored, fresh), "pooled: null stored, [{"; !strings.HasPrefix(d, want) {
		t.Errorf("AnalysisDiff = %q, want it to start %q", d, want)
	}
}

// withMethod rewrites the plan of the receipt in dir to record method m.
func withMethod(t *testing.T, dir string, m driftcheck.Method) {
	t.Helper()
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan.Method = &m
	if err := receipt.Folder(dir).WritePlan(plan); err != nil {
		t.Fatal(err)
	}
}

// A receipt is judged by the method its plan records; one planned before methods were
// recorded by the implied method, and says so; one whose method this code does not
// compute keeps the analysis it stored by that method, and is refused when its stored
// analysis is by another.
func TestOpenByTheReceiptsMethod(t *testing.T) {
	implied := finishSynth(t, receipttest.Default())
	d, err := Open(implied)
	if err != nil {
		t.Fatal(err)
	}
	if !d.MethodImplied || !d.Method.Same(driftcheck.ImpliedMethod()) || d.NotRecomputed != "" {
		t.Errorf("no method recorded: method %v (implied %t, not recomputed %q), want the implied one", d.Method, d.MethodImplied, d.NotRecomputed)
	}

	obf := driftcheck.CurrentMethod("v1")
	obf.Spending = driftcheck.SpendOBrienFleming
	dir := receipttest.Write(t, receipttest.Default())
	withMethod(t, dir, obf)
	dir = finishSynthIn(t, dir)
	if d, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if d.MethodImplied || !d.Method.Same(obf) || d.Analysis.Method == nil || !d.Analysis.Method.Same(obf) || d.Reanalyzed {
		t.Errorf("recorded method: %v (implied %t, analysis by %v, reanalyzed %t), want the plan's, recomputed and equal", d.Method, d.MethodImplied, d.Analysis.Method, d.Reanalyzed)
	}
	by, err := d.ByMethod(driftcheck.CurrentMethod(""))
	if err != nil || !by.Method.Same(driftcheck.CurrentMethod("")) || d.Method != obf {
		t.Errorf("ByMethod: %v, %v; the copy by today's method, the receipt left as it was", by, err)
	}

	future := driftcheck.CurrentMethod("v9")
	future.Schema = driftcheck.SchemaVersion + 1
	dir = receipttest.Write(t, receipttest.Default())
	withMethod(t, dir, future)
	d0, err := Load(implied) // an analysis to store, stamped with the future method
	if err != nil {
		t.Fatal(err)
	}
	d0.Analysis.Method = &future
	if err := receipt.Folder(dir).WriteAnalysis(&d0.Analysis); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Folder(dir).Seal([]byte("# Receipt\n")); err != nil {
		t.Fatal(err)
	}
	if d, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.NotRecomputed, "this flipbench computes schema") || d.Analysis.Method == nil || !d.Analysis.Method.Same(future) {
		t.Errorf("a method this code does not compute: not recomputed %q, analysis by %v; want the stored analysis, said so", d.NotRecomputed, d.Analysis.Method)
	}
	d0.Analysis.Method = nil
	if err := receipt.Folder(dir).WriteAnalysis(&d0.Analysis); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Folder(dir).Seal([]byte("# Receipt\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "finalize --reanalyse") {
		t.Errorf("a stored analysis not by the receipt's uncomputable method: %v, want a refusal naming finalize --reanalyse", err)
	}
}

// finishSynthIn does what finishSynth does for a receipt already written in dir.
func finishSynthIn(t *testing.T, dir string) string {
	t.Helper()
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.Folder(dir).WriteAnalysis(&d.Analysis); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Folder(dir).Seal([]byte("# Receipt\n")); err != nil {
		t.Fatal(err)
	}
	return dir
}
