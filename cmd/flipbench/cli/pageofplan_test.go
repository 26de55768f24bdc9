package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flipbench/flipbench/model/receipt"
)

// A resumed run finds its page from where the receipt lives, not from the working
// directory, so resuming from elsewhere still measures the incidence.
func TestPageOfPlanFromTheReceiptsLedger(t *testing.T) {
	root := t.TempDir()
	page := filepath.Join(root, "experiments", "001-x.md")
	dir := filepath.Join(root, "results", "2026-11-30T00-00-00Z-exp001-full")
	for _, d := range []string{filepath.Dir(page), dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(page, []byte("---\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotRoot, err := pageOfPlan(dir, &receipt.Plan{Experiment: 1, Page: "experiments/001-x.md"})
	if err != nil || got != page || gotRoot != root {
		t.Fatalf("pageOfPlan = %q, %q, %v; want %q, %q", got, gotRoot, err, page, root)
	}
}
