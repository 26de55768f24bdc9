package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/internal/testkit/receipttest"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestFinishAgain checks that a receipt can be finished again when it gains files (an
// incidence report), but not over a change to the run's own files, whose new manifest
// would hide the change.
func TestFinishAgain(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string)
		wantErr string // "" for success
	}{
		{"unchanged", func(t *testing.T, dir string) {}, ""},
		{"a file added", func(t *testing.T, dir string) {
			receipttest.WriteFile(t, filepath.Join(dir, "notes.txt"), "added later\n")
		}, ""},
		{"a derived file edited: rewritten from the run", func(t *testing.T, dir string) {
			receipttest.WriteFile(t, filepath.Join(dir, "cand.bench"), "BenchmarkL 1 1 ns/op\n")
		}, ""},
		{"raw.jsonl edited", func(t *testing.T, dir string) {
			receipttest.Flip(t, filepath.Join(dir, receipt.RawFile))
		}, "raw.jsonl: changed since the run"},
		{"plan.json edited", func(t *testing.T, dir string) {
			receipttest.Flip(t, filepath.Join(dir, receipt.PlanFile))
		}, "plan.json: changed since the run"},
		{"env.json removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, receipt.EnvFile)); err != nil {
				t.Fatal(err)
			}
		}, "env.json: listed in manifest.json but missing"},
		{"superseded.jsonl edited", func(t *testing.T, dir string) {
			receipttest.Flip(t, filepath.Join(dir, receipt.SupersededFile))
		}, "superseded.jsonl: changed since the run"},
		{"superseded.jsonl removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, receipt.SupersededFile)); err != nil {
				t.Fatal(err)
			}
		}, "superseded.jsonl: listed in manifest.json but missing"},
		{"superseded runs added after the run", func(t *testing.T, dir string) {
			receipttest.WriteFile(t, filepath.Join(dir, receipt.SupersededFile), `{"collection":1,"pass":1,"lane":"L","arm":"base"}`+"\n")
		}, "superseded.jsonl: not in manifest.json: added since the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := receipttest.Write(t, receipttest.Default())
			if strings.HasPrefix(tt.name, "superseded.jsonl") {
				// A resumed run: a base run was measured again.
				receipttest.WriteFile(t, filepath.Join(dir, receipt.SupersededFile), `{"collection":1,"pass":1,"lane":"L","arm":"base"}`+"\n")
			}
			md, err := Finish(dir)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			bench, _ := os.ReadFile(filepath.Join(dir, "cand.bench"))
			tt.change(t, dir)
			_, err = Finish(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "refusing to render it again") {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := receipt.VerifyManifest(dir); err != nil {
				t.Errorf("after Finish: %v", err)
			}
			again, _ := os.ReadFile(receipt.PagePath(dir))
			if string(again) != page {
				t.Errorf("the page changed on finishing again")
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "cand.bench")); !bytes.Equal(got, bench) {
				t.Errorf("cand.bench is not what the run says")
			}
		})
	}
}
