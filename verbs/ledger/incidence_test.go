package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// TestFinalizeReadsReceiptIncidence: an ab receipt that holds incidence.json feeds the
// decision rule's incidence gate, in finalize and so in check's freshness test; an
// incidence results folder next to it is not taken for a receipt.
func TestFinalizeReadsReceiptIncidence(t *testing.T) {
	gate := "incidence: {suite: {kind: gotest, package: ./lanes/release}, total: dispatches, eligible: hits, control: Control, min-share: 0.01}\n---\n## Problem"
	tests := []struct {
		name     string
		eligible float64
		control  float64
		broken   bool   // a suite lane failed every run
		counter  string // the eligible counter measured; "hits", the page's, when empty
		want     string // the rule's summary
	}{
		{name: "too rare", eligible: 0, control: 4, want: "rejected (candA rejected: premise-refuted; candB rejected: premise-refuted, tradeoff)"},
		{name: "frequent enough", eligible: 50, control: 4, want: "accepted (candA)"},
		{name: "control silent", eligible: 50, control: 0, want: "inconclusive (candA inconclusive: incidence; candB rejected: tradeoff)"},
		{name: "too rare, but a suite lane failed", eligible: 0, control: 4, broken: true, want: "inconclusive (candA inconclusive: incidence; candB rejected: tradeoff)"},
		{name: "frequent enough, of another counter", eligible: 50, control: 4, counter: "misses", want: "inconclusive (candA inconclusive: incidence; candB rejected: tradeoff)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyLedger(t)
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "---\n## Problem", gate, 1) })
			dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
			counter := "hits"
			if tt.counter != "" {
				counter = tt.counter
			}
			recs := []receipt.Record{
				{Lane: "Suite", Samples: []float64{1e9}, Unit: "ns/op", Metrics: map[string][]float64{"dispatches": {1000}, counter: {tt.eligible}}},
				{Lane: "Control", Samples: []float64{1e8}, Unit: "ns/op", Metrics: map[string][]float64{"dispatches": {10}, counter: {tt.control}}},
			}
			if tt.broken {
				recs = append(recs, receipt.Record{Lane: "Busy", Exit: 2, Error: "exit status 2"})
			}
			r, err := incidence.Compute(incidence.Input{
				Experiment: 1,
				Gate:       spec.Incidence{Total: "dispatches", Eligible: counter, Control: "Control", MinShare: 0.01},
				Records:    recs,
			})
			if err != nil {
				t.Fatal(err)
			}
			js, err := incidence.JSON(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := receipt.Folder(dir).WriteIncidence(js, nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := receipt.Folder(dir).SealData(); err != nil {
				t.Fatal(err)
			}
			// A standalone incidence folder, newer than the receipt.
			other := filepath.Join(root, "results", "2026-11-30T00-00-00Z-exp001-incidence")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := receipt.Folder(other).WriteIncidence(js, nil, nil); err != nil {
				t.Fatal(err)
			}

			f := finalizeFixture(t, root)
			if got := f.Decision.Summary(); got != tt.want {
				t.Errorf("decision %s, want %s", got, tt.want)
			}
			for _, want := range []string{"### Incidence\n", "from the receipt's incidence.json", "- **Eligible share**: ", "| **suite** (control excluded) |"} {
				if !strings.Contains(string(f.Content), want) {
					t.Errorf("the results block does not show the incidence (%q):\n%s", want, f.Content)
				}
			}
			// check re-finalizes the page from the receipt and must find it fresh.
			problems, err := Check(root, driftcheck.Method{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				if strings.Contains(p.File, "001-fake.md") {
					t.Errorf("check after finalize: %v", p)
				}
			}
		})
	}
}
