package ledger

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// TestFinalizeProfiles checks that the results block shows a receipt's profile
// difference, with its tables and the bar chart linked from the page's folder.
func TestFinalizeProfiles(t *testing.T) {
	root := copyLedger(t)
	dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
	rep := &profdiff.Report{Selection: profdiff.SelectReproduced, Base: "base", Lanes: []profdiff.Lane{{
		Lane: "alpha", Arm: "candA", Verdict: "reproduced-faster",
		Runs: []profdiff.Run{{Arm: "base", Kind: profdiff.CPU, File: "profiles/base-alpha.cpu.pprof", Operations: 10},
			{Arm: "candA", Kind: profdiff.CPU, File: "profiles/candA-alpha.cpu.pprof", Operations: 10}},
		Diffs: []profdiff.Diff{{Kind: profdiff.CPU, SampleType: "cpu/nanoseconds", Unit: "ns/op", BaseOps: 10, CandOps: 10,
			Total:  profdiff.Values{Base: 1e6, Cand: 0.8e6, Delta: -0.2e6},
			Top:    []profdiff.Entry{{Function: "example.com/fake.prepare", Flat: profdiff.Values{Base: 0.3e6, Cand: 0.1e6, Delta: -0.2e6}, FlatNoise: 1e4}},
			TopCum: []profdiff.Entry{{Function: "example.com/fake.prepare", Cum: profdiff.Values{Base: 0.3e6, Cand: 0.1e6, Delta: -0.2e6}}}}},
	}}}
	rep.SchemaVersion = profdiff.SchemaVersion
	if err := receipt.Folder(dir).WriteProfiles(rep); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Finish(dir); err != nil {
		t.Fatal(err)
	}
	f := finalizeFixture(t, root)
	block := string(f.Content)
	for _, want := range []string{
		"### Profile difference\n",
		"#### alpha, candA vs base (reproduced-faster)\n",
		"| `example.com/fake.prepare`    | 300.0µs/op | 100.0µs/op | -200.0µs/op | 10.0µs/op  |",
		"![alpha: CPU time per operation by function, candA vs base](../" + fixtureReceipt + "/profile-candA-alpha-cpu.svg)",
		"[profiles/base-alpha.cpu.pprof](../" + fixtureReceipt + "/profiles/base-alpha.cpu.pprof)",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("the results block lacks %q", want)
		}
	}
	// A receipt without profiles has no such section (the golden pages).
	if strings.Count(block, "### Profile difference") != 1 {
		t.Errorf("%d profile sections", strings.Count(block, "### Profile difference"))
	}
}
