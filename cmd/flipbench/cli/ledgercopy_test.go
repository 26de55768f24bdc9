package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// page275 is the ledger page the copy tests edit: its incidence gate tests candA only.
const page275 = "experiments/275-admission-priority.md"

// TestLedgerCopy275 edits a copy of the repository's own experiment 275 (its page and its
// newest receipt, the receipt's plan.json given the rule a run of this flipbench freezes in
// it, since the committed run predates plan.json schema 3) the two ways the ledger must
// catch:
//
//   - deleting arms: [candA] from the incidence gate after the run: finalize reports
//     spec-changed naming incidence.arms on stderr and in the status, never a silent change
//     of status, and check fails naming the field;
//   - a copy of the receipt under a later name with an estimate in analysis.json set to
//     -42% and its manifest recomputed: finalize refuses it, and a page that lists it
//     anyway fails check with a one-line reason naming the field.
func TestLedgerCopy275(t *testing.T) {
	root := copy275(t)
	t.Chdir(root)
	run := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errs})
		return code, out.String(), errs.String()
	}
	if code, out, errs := run("finalize", "275"); code != 0 || !strings.Contains(out, "rejected (candA rejected: premise-refuted") {
		t.Fatalf("finalize of the copy: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run("check"); code != 0 {
		t.Fatalf("check of the finalized copy: exit %d\n%s%s", code, out, errs)
	}
	pristine := read(t, page275)

	t.Run("incidence.arms deleted", func(t *testing.T) {
		edited := strings.Replace(pristine, "  arms: [candA]\n", "", 1)
		if edited == pristine {
			t.Fatal("page 275 has no line '  arms: [candA]'")
		}
		write(t, page275, edited)
		defer write(t, page275, pristine)
		code, out, errs := run("finalize", "275")
		if code != 0 {
			t.Fatalf("finalize: exit %d\n%s", code, errs)
		}
		if want := "candA inconclusive: spec-changed"; !strings.Contains(out, want) || strings.Contains(out, "rejected") {
			t.Errorf("finalize says %q, want %q and no rejection", out, want)
		}
		t.Logf("finalize: %s%s", out, errs)
		if want := "spec-changed: incidence.arms: every candidate on the page, [candA] when the run started"; !strings.Contains(errs, want) {
			t.Errorf("finalize's stderr lacks %q:\n%s", want, errs)
		}
		code, out, _ = run("check")
		t.Logf("check: %s", out)
		if code == 0 || !regexp.MustCompile(`(?m)^experiments/275-admission-priority\.md:\d+: spec-changed: incidence\.arms: `).MatchString(out) {
			t.Errorf("check: exit %d, want a spec-changed problem naming incidence.arms:\n%s", code, out)
		}
	})

	t.Run("forged analysis", func(t *testing.T) {
		dir, _, err := ledger.NewestReceipt(".", 275)
		if err != nil {
			t.Fatal(err)
		}
		forged := filepath.Join(ledger.ResultsDir, "2099-01-01T00-00-00Z-exp275-quick")
		copyTree(t, dir, forged)
		copyFile(t, dir+".md", forged+".md")
		analysis, manifest := read(t, filepath.Join(forged, receipt.AnalysisFile)), read(t, filepath.Join(forged, receipt.ManifestFile))
		forge(t, forged)
		code, _, errs := run("finalize", "275", "--receipt", forged)
		reason := regexp.MustCompile(`analysis\.json is not the drift check of its raw\.jsonl \(pooled\[0\]\.estimate_pct: -42 stored, -?[0-9.]+ recomputed\)`)
		if code == 0 || !reason.MatchString(errs) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("finalize from the forged receipt: exit %d, want a one-line refusal naming pooled[0].estimate_pct:\n%s", code, errs)
		}
		// The honest copy finalizes and the page lists it; then it is forged, and the
		// listing follows the forged manifest (as a finalize that trusted analysis.json
		// would have written it).
		write(t, filepath.Join(forged, receipt.AnalysisFile), analysis)
		write(t, filepath.Join(forged, receipt.ManifestFile), manifest)
		if code, _, errs := run("finalize", "275", "--receipt", forged); code != 0 {
			t.Fatalf("finalize from the honest copy: exit %d\n%s", code, errs)
		}
		forge(t, forged)
		oldSum := listedManifest(t, read(t, page275), forged)
		newSum, err := receipt.HashFile(filepath.Join(forged, receipt.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		// A page that lists the forged receipt (as finalize did before it recomputed the
		// analysis) fails check on one line.
		write(t, page275, strings.Replace(read(t, page275), oldSum, newSum, 1))
		code, out, _ := run("check")
		var hits []string
		for _, line := range strings.Split(out, "\n") {
			if reason.MatchString(line) {
				hits = append(hits, line)
			}
		}
		t.Logf("check: %s", strings.Join(hits, "\n"))
		if code == 0 || len(hits) != 1 || !strings.HasPrefix(hits[0], page275+":") {
			t.Errorf("check: exit %d, want one line %s:N: ... naming pooled[0].estimate_pct:\n%s", code, page275, out)
		}
	})
}

// copy275 copies page 275, the registry of directions and the receipts the page links to
// into a temporary ledger, and gives the newest receipt's plan the rule that a run of this
// flipbench freezes in it (rendering the receipt again with a new manifest, and dropping
// the page's listing of the old one). It returns the ledger's root.
func copy275(t *testing.T) string {
	t.Helper()
	src, root := filepath.Join("..", "..", ".."), t.TempDir()
	copyFile(t, filepath.Join(src, page275), filepath.Join(root, page275))
	copyFile(t, filepath.Join(src, "experiments", "directions.yaml"), filepath.Join(root, "experiments", "directions.yaml"))
	pages, _ := filepath.Glob(filepath.Join(src, ledger.ResultsDir, "*-exp275-*.md"))
	for _, p := range pages {
		copyFile(t, p, filepath.Join(root, ledger.ResultsDir, filepath.Base(p)))
	}
	dir, _, err := ledger.NewestReceipt(src, 275)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(root, ledger.ResultsDir, filepath.Base(dir))
	copyTree(t, dir, to)

	p, err := ledger.ReadPage(filepath.Join(root, page275))
	if err != nil || p.Spec == nil {
		t.Fatalf("page 275: %v", err)
	}
	plan, err := receipt.ReadPlan(to)
	if err != nil {
		t.Fatal(err)
	}
	plan.SchemaVersion, plan.Rule = receipt.PlanSchema, decide.RuleOf(p.Spec)
	if err := receipt.Folder(to).WritePlan(plan); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(to, receipt.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Finish(to); err != nil {
		t.Fatal(err)
	}
	page := regexp.MustCompile(`(?m)^receipts:\n(  - .*\n)*`).ReplaceAllString(read(t, filepath.Join(root, page275)), "")
	write(t, filepath.Join(root, page275), page)
	return root
}

// forge sets the first pooled estimate of a receipt's analysis.json to -42% and
// recomputes its manifest, keeping the receipt page's hash.
func forge(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, receipt.AnalysisFile)
	var doc map[string]any
	if err := json.Unmarshal([]byte(read(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	doc["pooled"].([]any)[0].(map[string]any)["estimate_pct"] = -42
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(data))
	old, err := receipt.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := receipt.Folder(dir).SealData()
	if err != nil {
		t.Fatal(err)
	}
	m.Page = old.Page
	if err := atomicfile.WriteJSON(filepath.Join(dir, receipt.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
}

// listedManifest returns the SHA-256 the page lists for dir's manifest.
func listedManifest(t *testing.T, page, dir string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(filepath.Base(dir)) + `/manifest\.json, sha256: ([0-9a-f]{64})`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page does not list %s/manifest.json", dir)
	}
	return m[1]
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}

// copyTree copies the regular files under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		copyFile(t, path, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
