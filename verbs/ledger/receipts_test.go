package ledger

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// addFixtureReceipt writes a synthetic receipt of experiment 1 into root/results under
// the name <fr.stamp>-exp001-<fr.label> and returns its data folder.
func addFixtureReceipt(t *testing.T, root string, fr fixtureRun) string {
	t.Helper()
	dir := filepath.Join(root, ResultsDir, fr.stamp+"-exp001-"+fr.label)
	if err := writeFixture(dir, fr); err != nil {
		t.Fatal(err)
	}
	return dir
}

// finalizeFrom finalizes the fixture page in root from the receipt in dir.
func finalizeFrom(t *testing.T, root, dir string) *Finalized {
	t.Helper()
	f, err := Finalize(filepath.Join(root, filepath.FromSlash(fixturePage)), FinalizeOptions{Root: root, Receipt: dir})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// armReasons returns an arm's decision as "status: code, code".
func armReasons(f *Finalized, arm string) string {
	for _, a := range f.Decision.Arms {
		if a.Arm == arm {
			var codes []string
			for _, r := range a.Reasons {
				codes = append(codes, r.Code)
			}
			return string(a.Status) + ": " + strings.Join(codes, ", ")
		}
	}
	return "no arm " + arm
}

// TestFinalizeUnderPowered is the reviewer's case: a run with --collections 1 --passes 2
// --samples 3 of an experiment whose quick profile asks for more was finalized accepted.
func TestFinalizeUnderPowered(t *testing.T) {
	root := copyLedger(t)
	edit(t, root, fixturePage, func(s string) string {
		return strings.Replace(s, "protocol: {samples: 6, warmup: 1, passes: 4, collections: 2, seed: 7}\n",
			"protocol: {samples: 6, warmup: 1, passes: 4, collections: 2, seed: 7}\nprofiles: {quick: {samples: 4, passes: 4}}\n", 1)
	})
	fr := defaultFixtureRun()
	fr.stamp, fr.label, fr.profile = "2026-11-30T10-00-00Z", "quick", "quick"
	fr.protocol = receipt.Protocol{Samples: 3, Warmup: 1, Passes: 4, Collections: 1, Seed: 7}
	dir := addFixtureReceipt(t, root, fr)

	f := finalizeFrom(t, root, dir)
	// Without the power check candA is accepted: alpha reproduces in its one collection.
	d, err := LoadReceipt(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Analysis.Lanes {
		if s.Arm == "candA" && s.Lane == "alpha" && s.Verdict != driftcheck.LaneReproducedFaster {
			t.Fatalf("fixture: candA alpha is %s, want reproduced-faster so that only the power check stands in the way", s.Verdict)
		}
	}
	if f.Status != spec.StatusInconclusive || f.Decision.Status != spec.StatusInconclusive {
		t.Errorf("status %s, rule %s, want inconclusive", f.Status, f.Decision.Summary())
	}
	want := "under-powered: 1 collection x 4 passes x 3 samples, the spec's quick profile asks for 2 x 4 x 4"
	for _, a := range f.Decision.Arms {
		if a.Status != spec.StatusInconclusive || !slices.ContainsFunc(a.Reasons, func(r decide.Reason) bool { return strings.HasPrefix(r.String(), want) }) {
			t.Errorf("arm %s: %s %v, want inconclusive with %q", a.Arm, a.Status, a.Reasons, want)
		}
	}
	if !strings.Contains(string(f.Content), "- **under-powered**: 1 collection x 4 passes x 3 samples, the spec's quick profile asks for 2 x 4 x 4") {
		t.Errorf("the results block does not say why:\n%s", f.Content)
	}

	// The same profile run in full decides.
	fr.stamp, fr.protocol = "2026-11-30T11-00-00Z", receipt.Protocol{Samples: 4, Warmup: 1, Passes: 4, Collections: 2, Seed: 7}
	full := finalizeFrom(t, root, addFixtureReceipt(t, root, fr))
	if got := armReasons(full, "candA"); got != "accepted: " {
		t.Errorf("candA at the quick profile's protocol: %s, want accepted", got)
	}
}

// TestFinalizeForeignReceipt checks that finalize refuses a receipt of another
// experiment, even one whose manifest is consistent, and a renamed receipt.
func TestFinalizeForeignReceipt(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string // returns the receipt to finalize from
		want  string
	}{
		{"plan of another experiment, manifest rewritten", func(t *testing.T, root string) string {
			dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
			plan, err := receipt.ReadPlan(dir)
			if err != nil {
				t.Fatal(err)
			}
			plan.Experiment = 2
			if err := receipt.Folder(dir).WritePlan(plan); err != nil {
				t.Fatal(err)
			}
			if _, err := receipt.Folder(dir).SealData(); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "is of experiment 2 (its plan.json says so), not 1"},
		{"renamed from another experiment", func(t *testing.T, root string) string {
			dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
			to := filepath.Join(root, ResultsDir, "2026-11-29T10-00-00Z-exp002-full")
			if err := os.Rename(dir, to); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir+".md", to+".md"); err != nil {
				t.Fatal(err)
			}
			return to
		}, "is named for experiment 2, not 1"},
		{"analysis edited", func(t *testing.T, root string) string {
			dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
			edit(t, root, fixtureReceipt+"/"+receipt.AnalysisFile, func(s string) string {
				return strings.Replace(s, `"verdict": "reproduced-slower"`, `"verdict": "neutral"`, 1)
			})
			return dir
		}, "analysis.json: changed since the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyLedger(t)
			dir := tt.setup(t, root)
			_, err := Finalize(filepath.Join(root, filepath.FromSlash(fixturePage)), FinalizeOptions{Root: root, Receipt: dir})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestFinalizeReceiptShapes finalizes receipts of unusual shape (failed runs, one
// collection, lanes filtered by --lanes, three arms) and checks the rule's decision and
// the results block.
func TestFinalizeReceiptShapes(t *testing.T) {
	crashCandAAlpha2 := func(r receipt.Run) bool { return r.Arm == "candA" && r.Lane == "alpha" && r.Collection == 2 }
	onlyAlpha := fixtureLanes()[:1]
	tests := []struct {
		name     string
		page     func(string) string // edits the page's front matter, or nil
		run      func(fr *fixtureRun)
		decision map[string]string // arm -> "status: codes"
		block    []string          // in the results block
		notBlock []string          // not in the results block
	}{
		{
			name: "three arms, the spec's protocol",
			run:  func(fr *fixtureRun) {},
			decision: map[string]string{
				"candA": "accepted: ",
				"candB": "rejected: tradeoff",
			},
			block: []string{"### candA vs base: accepted", "### candB vs base: rejected", "| lane  | base    | candB   | Δ                  |",
				"**Status: accepted**, set by the decision rule: accepted (candA)."},
		},
		{
			name: "failed runs: candA's alpha crashed in all of collection 2",
			run:  func(fr *fixtureRun) { fr.fail = crashCandAAlpha2 },
			decision: map[string]string{
				"candA": "inconclusive: insufficient",
				"candB": "rejected: tradeoff",
			},
			block: []string{
				"- 4 runs failed; their errors are in the receipt; fix the lane and rerun",
				"| alpha | 2          | 1    | -         | -         | -         | insufficient |",
				// The crashes' small peak RSS does not pull candA's median down.
				"Median over the successful runs of each process's peak resident set size; failed runs are left out.",
				"| alpha | 10.0MiB | 20.0MiB | +100% (2.00x more) |",
				"**Status: inconclusive**",
			},
			notBlock: []string{"| alpha | 10.0MiB | 10.5MiB |"},
		},
		{
			name: "one collection, as the spec asks",
			page: func(s string) string {
				return strings.Replace(s, "passes: 4, collections: 2, seed: 7", "passes: 8, collections: 1, seed: 7", 1)
			},
			run: func(fr *fixtureRun) { fr.protocol.Collections, fr.protocol.Passes = 1, 8 },
			decision: map[string]string{
				"candA": "accepted: ",
				"candB": "rejected: tradeoff",
			},
			block:    []string{"Protocol: 1 collection × 8 passes", "#### Collection 1"},
			notBlock: []string{"#### Collection 2", "collection 2"},
		},
		{
			name: "one collection, the spec asks for two",
			run:  func(fr *fixtureRun) { fr.protocol.Collections = 1 },
			decision: map[string]string{
				"candA": "inconclusive: under-powered",
				"candB": "inconclusive: under-powered, tradeoff",
			},
			block: []string{"1 collection x 4 passes x 6 samples, the spec's protocol asks for 2 x 4 x 6",
				"(not a rejection from an under-powered receipt)"},
		},
		{
			name: "lanes filtered by --lanes: only the primary lane ran",
			run:  func(fr *fixtureRun) { fr.lanes = onlyAlpha },
			decision: map[string]string{
				"candA": "inconclusive: not-measured, not-measured",
				"candB": "inconclusive: not-measured, not-measured",
			},
			block: []string{
				"guard lane beta was not run: the receipt's run selected only lanes alpha (--lanes)",
				"control lane gamma was not run",
				"| alpha | 10.0MiB | 20.0MiB | +100% (2.00x more) |",
				"primary lane alpha reproduced faster in every collection",
			},
			notBlock: []string{"| beta ", "| gamma "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyLedger(t)
			if tt.page != nil {
				edit(t, root, fixturePage, tt.page)
			}
			fr := defaultFixtureRun()
			fr.stamp, fr.label = "2026-11-30T10-00-00Z", "shape"
			tt.run(&fr)
			f := finalizeFrom(t, root, addFixtureReceipt(t, root, fr))
			for arm, want := range tt.decision {
				if got := armReasons(f, arm); got != want {
					t.Errorf("%s: %s, want %s\n%v", arm, got, want, f.Decision.Arms)
				}
			}
			block := string(f.Content)
			for _, s := range tt.block {
				if !strings.Contains(block, s) {
					t.Errorf("the results block lacks %q", s)
				}
			}
			for _, s := range tt.notBlock {
				if strings.Contains(block, s) {
					t.Errorf("the results block has %q", s)
				}
			}
			if t.Failed() || os.Getenv("SHOWBLOCK") != "" {
				t.Logf("results block:\n%s", block)
			}
			// Finalize's output is a valid page, and finalizing it again changes nothing.
			page := filepath.Join(root, filepath.FromSlash(fixturePage))
			if err := os.WriteFile(page, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			if again := finalizeFrom(t, root, f.Receipt); again.Changed {
				t.Errorf("finalize is not idempotent on this receipt")
			}
			// The decision is data a script can read.
			if _, err := json.Marshal(f.Decision); err != nil {
				t.Error(err)
			}
		})
	}
}
