package ledger

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
)

// fixturePage is the fixture experiment page, relative to the ledger root.
const fixturePage = "experiments/001-fake.md"

// copyLedger copies testdata/ledger into a temporary folder and returns its path.
func copyLedger(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "ledger")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// edit rewrites a file of the ledger at root with fn.
func edit(t *testing.T, root, rel string, fn func(string) string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := fn(string(data))
	if out == string(data) {
		t.Fatalf("edit of %s changed nothing", rel)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// finalizeFixture finalizes the fixture page in root and writes it.
func finalizeFixture(t *testing.T, root string) *Finalized {
	t.Helper()
	page := filepath.Join(root, filepath.FromSlash(fixturePage))
	f, err := Finalize(page, FinalizeOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, f.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFinalizeGolden(t *testing.T) {
	tests := []struct {
		name   string
		status string      // replaces the page's status line when set
		want   spec.Status // the status after finalize
		hand   bool
	}{
		{name: "rule", want: spec.StatusAccepted},
		{name: "handset-disagrees", status: "status: rejected", want: spec.StatusRejected, hand: true},
		{name: "handset-agrees", status: "status: accepted", want: spec.StatusAccepted, hand: true},
		{name: "rule-refinalized", status: "status: rejected\nstatus-by: rule", want: spec.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyLedger(t)
			if tt.status != "" {
				edit(t, root, fixturePage, func(s string) string {
					return strings.Replace(s, "status: planned            # finalize sets it from the decision rule", tt.status, 1)
				})
			}
			before, _ := os.ReadFile(filepath.Join(root, fixturePage))
			f := finalizeFixture(t, root)
			if !f.Changed || f.Status != tt.want || f.ByHand != tt.hand || f.Decision.Status != spec.StatusAccepted {
				t.Errorf("changed %t, status %s, by hand %t, rule %s", f.Changed, f.Status, f.ByHand, f.Decision.Summary())
			}
			golden(t, "finalize-"+tt.name+".md", f.Content)

			// Only the results block, status, status-by and receipts change.
			assertOnlyGeneratedChanged(t, before, f.Content)

			// Finalizing again changes nothing.
			again := finalizeFixture(t, root)
			if again.Changed {
				t.Errorf("second finalize changed the page:\n%s", cmp.Diff(string(f.Content), string(again.Content)))
			}
		})
	}
}

// assertOnlyGeneratedChanged checks that every line of before outside the results block
// and the status, status-by and receipts fields is still in after, in order.
func assertOnlyGeneratedChanged(t *testing.T, before, after []byte) {
	t.Helper()
	strip := func(data []byte) []string {
		var out []string
		inBlock, inReceipts := false, false
		for _, l := range strings.Split(string(data), "\n") {
			switch {
			case l == BeginMarker:
				inBlock = true
			case l == EndMarker:
				inBlock = false
			case inBlock:
				continue
			case strings.HasPrefix(l, "receipts:"):
				inReceipts = true
				continue
			case inReceipts && strings.HasPrefix(l, "  - "):
				continue
			case strings.HasPrefix(l, "status:"), strings.HasPrefix(l, "status-by:"):
				// The status value changes; a comment after it stays.
				if _, c, ok := strings.Cut(l, "#"); ok {
					out = append(out, "#"+c)
				}
				continue
			}
			inReceipts = false
			out = append(out, l)
		}
		return out
	}
	if diff := cmp.Diff(strip(before), strip(after)); diff != "" {
		t.Errorf("finalize changed more than the generated parts:\n%s", diff)
	}
}

func TestFinalizeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"no markers", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				return strings.Replace(strings.Replace(s, BeginMarker+"\n", "", 1), EndMarker+"\n", "", 1)
			})
		}, "no results markers: add the line <!-- flipbench:results:begin --> and, below it, the line <!-- flipbench:results:end -->"},
		{"markers swapped", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				s = strings.Replace(s, BeginMarker, "@@", 1)
				s = strings.Replace(s, EndMarker, BeginMarker, 1)
				return strings.Replace(s, "@@", EndMarker, 1)
			})
		}, "comes before"},
		{"tampered receipt", func(t *testing.T, root string) {
			flipByte(t, filepath.Join(root, fixtureReceipt, "raw.jsonl"))
		}, "does not match its manifest; refusing a changed receipt"},
		{"invalid spec", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "category: measurement", "category: moonshoot", 1) })
		}, "category: must be one of"},
		{"no receipt", func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, "results")); err != nil {
				t.Fatal(err)
			}
		}, "experiment 1 has no receipt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyLedger(t)
			tt.setup(t, root)
			_, err := Finalize(filepath.Join(root, fixturePage), FinalizeOptions{Root: root})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// flipByte changes one byte in the middle of a file.
func flipByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := len(data) / 2
	data[i] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// soundLedger returns a copy of the fixture ledger with the page finalized and the index
// written: a ledger that Check passes.
func soundLedger(t *testing.T) string {
	t.Helper()
	root := copyLedger(t)
	finalizeFixture(t, root)
	if _, err := WriteIndex(root); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCheckSound(t *testing.T) {
	root := soundLedger(t)
	problems, err := Check(root, driftcheck.Method{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("unexpected problem: %v", p)
	}
	index, _ := os.ReadFile(filepath.Join(root, IndexFile))
	golden(t, "README.md", index)
}

func TestCheckCatches(t *testing.T) {
	receiptMD := fixtureReceipt + ".md"
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string // a problem line, with the ledger root as "ROOT"
	}{
		{"missing field", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "category: measurement\n", "", 1) })
		}, "ROOT/experiments/001-fake.md:2: category: is required; one of moonshot"},
		{"unknown status", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "status: accepted", "status: shipped", 1) })
		}, `ROOT/experiments/001-fake.md:5: status: must be one of planned, running, accepted, rejected, inconclusive, superseded; got "shipped"`},
		{"unknown direction", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "directions: [demo]", "directions: [demo, demos]", 1) })
		}, `ROOT/experiments/001-fake.md:8: directions[1]: unknown direction "demos"; add it to experiments/directions.yaml with a one-line description (or did you mean demo?)`},
		{"template placeholder", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				return strings.Replace(s, "Take candA: the same gain", "<what we decided and why>: the same gain", 1)
			})
		}, "ROOT/experiments/001-fake.md:200: template placeholder <what we decided and why>: replace it with the real text"},
		{"template placeholder in the front matter", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				return strings.Replace(s, "title: a fake lane", "title: <the question> a fake lane", 1)
			})
		}, "ROOT/experiments/001-fake.md:3: template placeholder <the question>: replace it with the real text"},
		{"broken link", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				return strings.Replace(s, "(../method.md#pass-pairs)", "(../methods.md#pass-pairs)", 1)
			})
		}, "ROOT/experiments/001-fake.md:26: broken link ../methods.md#pass-pairs: no such file or folder"},
		{"missing receipt", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, receiptMD)); err != nil {
				t.Fatal(err)
			}
		}, "ROOT/experiments/001-fake.md:21: receipts[0]: receipt ../" + receiptMD + " is missing"},
		{"tampered raw data", func(t *testing.T, root string) {
			flipByte(t, filepath.Join(root, fixtureReceipt, "raw.jsonl"))
		}, "ROOT/experiments/001-fake.md:21: receipt data ../" + fixtureReceipt + "/raw.jsonl: changed since the run"},
		{"tampered plot", func(t *testing.T, root string) {
			flipByte(t, filepath.Join(root, fixtureReceipt, "plot-candA-alpha.svg"))
		}, "ROOT/experiments/001-fake.md:21: receipt data ../" + fixtureReceipt + "/plot-candA-alpha.svg: changed since the run"},
		{"tampered receipt page", func(t *testing.T, root string) {
			flipByte(t, filepath.Join(root, receiptMD))
		}, "ROOT/experiments/001-fake.md:21: receipts[0]: receipt ../" + receiptMD + " changed since it was listed"},
		{"tampered manifest", func(t *testing.T, root string) {
			edit(t, root, fixtureReceipt+"/manifest.json", func(s string) string { return strings.Replace(s, `"env.json": "`, `"env.json": "0`, 1)[:len(s)] + "\n" })
		}, "ROOT/experiments/001-fake.md:22: receipts[1]: receipt ../" + fixtureReceipt + "/manifest.json changed since it was listed"},
		{"file added to a receipt", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, fixtureReceipt, "extra.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ROOT/experiments/001-fake.md:21: receipt data ../" + fixtureReceipt + "/extra.txt: not in manifest.json"},
		{"number retyped in the results block", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string {
				return strings.Replace(s, "| 2 REPRODUCED faster ", "| 3 REPRODUCED faster ", 1)
			})
		}, "the results block, status or receipts differ from what finalize makes from receipt " + filepath.Base(fixtureReceipt)},
		{"status by rule edited", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "status: accepted", "status: rejected", 1) })
		}, "ROOT/experiments/001-fake.md:5: the results block, status or receipts differ"},
		{"missing section", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "## Hypothesis", "## Guess", 1) })
		}, "ROOT/experiments/001-fake.md:24: missing section ## Hypothesis"},
		{"missing markers", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, EndMarker+"\n", "", 1) })
		}, "ROOT/experiments/001-fake.md:24: <!-- flipbench:results:begin --> has no <!-- flipbench:results:end --> after it"},
		{"id does not match the file name", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "id: 1\n", "id: 2\n", 1) })
		}, "ROOT/experiments/001-fake.md:2: id: 2 does not match the number 1 in the file name"},
		{"number taken twice", func(t *testing.T, root string) {
			data, _ := os.ReadFile(filepath.Join(root, fixturePage))
			if err := os.WriteFile(filepath.Join(root, "experiments", "001-again.md"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ROOT/experiments/001-fake.md:1: experiment number 1 is also used by 001-again.md"},
		{"index out of date", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "title: a fake lane", "title: one fake lane", 1) })
		}, "ROOT/experiments/README.md:5: out of date; run flipbench ledger"},
		{"index missing", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, IndexFile)); err != nil {
				t.Fatal(err)
			}
		}, "ROOT/experiments/README.md: missing; run flipbench ledger"},
		{"no directions registry", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, DirectionsFile)); err != nil {
				t.Fatal(err)
			}
		}, "ROOT/experiments/directions.yaml: missing, but ROOT/experiments/001-fake.md names directions: create it"},
		{"bad directions registry", func(t *testing.T, root string) {
			edit(t, root, DirectionsFile, func(s string) string { return s + "Bad Name: x\nempty: \"\"\n" })
		}, `ROOT/experiments/directions.yaml:3: direction "Bad Name": invalid name`},
		{"an unknown direction", func(t *testing.T, root string) {
			edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "directions: [demo]", "directions: [dmeo]", 1) })
		}, `ROOT/experiments/001-fake.md:8: directions[0]: unknown direction "dmeo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := soundLedger(t)
			tt.setup(t, root)
			problems, err := Check(root, driftcheck.Method{})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, p := range problems {
				lines = append(lines, strings.ReplaceAll(p.Error(), root, "ROOT"))
			}
			if !containsPrefix(lines, tt.want) {
				t.Errorf("no problem %q in:\n%s", tt.want, strings.Join(lines, "\n"))
			}
			for _, l := range lines {
				if !regexp.MustCompile(`^ROOT/\S+?(:\d+)?: \S`).MatchString(l) || strings.Contains(l, "\n") {
					t.Errorf("problem not in file:line: message form: %q", l)
				}
			}
		})
	}
}

// containsPrefix reports whether some line contains want (a prefix, or any part when
// want does not start with ROOT).
func containsPrefix(lines []string, want string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, want) || (!strings.HasPrefix(want, "ROOT") && strings.Contains(l, want)) {
			return true
		}
	}
	return false
}

func TestNewPage(t *testing.T) {
	root := soundLedger(t)
	date := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	path, err := NewPage(root, 2, "Does batching: the writes help?", "exec", date)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "experiments", "002-does-batching-the-writes-help.md"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	data, _ := os.ReadFile(path)
	golden(t, "new.md", bytes.ReplaceAll(data, []byte(root), []byte("ROOT")))

	// The new page parses up to its placeholders, and check lists each of them.
	p, err := ParsePage(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if p.MarkerProblem != "" || len(p.Sections) != 4 {
		t.Errorf("markers %q, sections %v", p.MarkerProblem, p.Sections)
	}
	problems, err := Check(root, driftcheck.Method{})
	if err != nil {
		t.Fatal(err)
	}
	placeholders := 0
	for _, pr := range problems {
		if strings.Contains(pr.Msg, "template placeholder") {
			placeholders++
		}
		if strings.Contains(pr.Msg, "id:") || strings.Contains(pr.Msg, "title:") || strings.Contains(pr.Msg, "date:") {
			t.Errorf("new left id, title or date unfilled: %v", pr)
		}
	}
	if placeholders < 8 {
		t.Errorf("got %d placeholder problems, want every placeholder of the template:\n%v", placeholders, problems)
	}

	// A taken number is refused, naming the page that has it.
	_, err = NewPage(root, 1, "again", "", date)
	if err == nil || !strings.Contains(err.Error(), "experiment 1 is taken by") || !strings.Contains(err.Error(), "001-fake.md") ||
		!strings.Contains(err.Error(), "the next free number is 3") {
		t.Errorf("got %v", err)
	}
}

// TestNewGotestPage scaffolds a page from the Go benchmark template: a gotest harness and
// arms from git refs, with only its placeholders left for check to list, and none of
// them in the id, title or date.
func TestNewGotestPage(t *testing.T) {
	root := soundLedger(t)
	path, err := NewPage(root, 2, "a bigger node", "gotest", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"harness: {kind: gotest, package: ./<package with the benchmarks>, benchtime: 100ms}", "  base: {ref: <",
		"id: 2\n", "seed: 2,"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the page lacks %q:\n%s", want, data)
		}
	}
	problems, err := Check(root, driftcheck.Method{})
	if err != nil {
		t.Fatal(err)
	}
	placeholders := 0
	for _, pr := range problems {
		if !strings.Contains(pr.File, "002-") {
			continue
		}
		if !strings.Contains(pr.Msg, "template placeholder") {
			t.Errorf("not a placeholder problem: %v", pr)
		}
		placeholders++
	}
	if placeholders < 8 {
		t.Errorf("got %d placeholder problems:\n%v", placeholders, problems)
	}
	// With the placeholders filled in, the page is a valid gotest experiment.
	filled := regexp.MustCompile(`<[^>\n]*>`).ReplaceAllStringFunc(string(data), func(p string) string {
		switch {
		case strings.Contains(p, "moonshot"):
			return "measurement"
		case strings.Contains(p, "package"):
			return "lanes"
		case strings.Contains(p, "Benchmark"):
			return strings.Trim(p, "<>")
		case strings.HasPrefix(p, "<!--"):
			return p
		}
		return "main"
	})
	if _, err := spec.Parse(path, []byte(filled)); err != nil {
		t.Errorf("the filled-in template does not parse: %v\n%s", err, filled)
	}
	if _, err := NewPage(root, 3, "x", "rust", time.Now()); err == nil {
		t.Error("NewPage accepted an unknown template")
	}
}

// TestTemplateInSync keeps the repository's experiments/TEMPLATE.md and
// TEMPLATE-gotest.md and the built-in templates the same.
func TestTemplateInSync(t *testing.T) {
	for file, builtin := range map[string][]byte{TemplateFile: DefaultTemplate(), GotestTemplateFile: GotestTemplate()} {
		repo, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(builtin), string(repo)); diff != "" {
			t.Errorf("%s differs from the built-in template in ledger/; copy one over the other:\n%s", file, diff)
		}
	}
}

// TestRepositoryLedger runs check on the repository's own ledger.
func TestRepositoryLedger(t *testing.T) {
	problems, err := Check(filepath.Join("..", ".."), driftcheck.Method{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckDirectionsOptional checks that directions are optional, as docs/spec.md says:
// a page without any, in a ledger without a registry, is sound.
func TestCheckDirectionsOptional(t *testing.T) {
	root := soundLedger(t)
	edit(t, root, fixturePage, func(s string) string { return strings.Replace(s, "directions: [demo]\n", "", 1) })
	if err := os.Remove(filepath.Join(root, DirectionsFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteIndex(root); err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, driftcheck.Method{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"does pre-sizing the index map make building it faster": "does-pre-sizing-the-index-map-make-building-it",
		"  Ünïcode & CAPS!! ":                                   "n-code-caps",
		"???":                                                   "experiment",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFrontEdit(t *testing.T) {
	refs := []spec.ReceiptRef{{Path: "../results/a.md", SHA256: strings.Repeat("a", 64)}, {Path: "../results/my dir/manifest.json", SHA256: strings.Repeat("b", 64)}}
	tests := []struct {
		name, in, want string
		edit           frontEdit
	}{
		{
			name: "insert status-by and receipts; comments and block values stay",
			in:   "---\nid: 1\nstatus: 'planned'   # a comment\ndate: 2026-01-01\nprofiles:\n  quick: {samples: 3}\n\n# trailing comment\nshape:\n  decay: [a, b]\n---\nbody\n",
			edit: frontEdit{status: "accepted", statusBy: "rule", receipts: refs},
			want: "---\nid: 1\nstatus: accepted   # a comment\nstatus-by: rule\ndate: 2026-01-01\nprofiles:\n  quick: {samples: 3}\n\n# trailing comment\nshape:\n  decay: [a, b]\n" +
				"receipts:\n  - {path: ../results/a.md, sha256: " + strings.Repeat("a", 64) + "}\n  - {path: \"../results/my dir/manifest.json\", sha256: " + strings.Repeat("b", 64) + "}\n---\nbody\n",
		},
		{
			name: "replace status-by and a receipts block in the middle",
			in:   "---\nstatus: rejected\nstatus-by: \"\"\nreceipts:\n  - path: x\n    sha256: y\n\n# about lanes\nlanes: []\n---\n",
			edit: frontEdit{status: "inconclusive", statusBy: "rule", receipts: refs[:1]},
			want: "---\nstatus: inconclusive\nstatus-by: rule\nreceipts:\n  - {path: ../results/a.md, sha256: " + strings.Repeat("a", 64) + "}\n\n# about lanes\nlanes: []\n---\n",
		},
		{
			name: "only receipts, CRLF page",
			in:   "---\r\nstatus: rejected\r\nlanes: []\r\n---\r\nbody\r\n",
			edit: frontEdit{receipts: refs[:1]},
			want: "---\r\nstatus: rejected\r\nlanes: []\r\nreceipts:\r\n  - {path: ../results/a.md, sha256: " + strings.Repeat("a", 64) + "}\r\n---\r\nbody\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.edit.apply([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			again, err := tt.edit.apply(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %v\n%s", err, cmp.Diff(string(got), string(again)))
			}
		})
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestRenderIndexWriteError checks that a failing writer is reported, in the table too,
// whose writer swallows write errors.
func TestRenderIndexWriteError(t *testing.T) {
	entries := []IndexEntry{{ID: 1, Title: "one", Status: "accepted", Page: "experiments/001-one.md"},
		{ID: 2, Page: "experiments/002-two.md", Invalid: true}}
	link := func(page string) string { return filepath.Base(page) }
	var full bytes.Buffer
	if err := RenderIndex(&full, entries, link); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, full.Len() / 2, full.Len() - 5} {
		if err := RenderIndex(&failWriter{n: n}, entries, link); err == nil {
			t.Errorf("writer failing after %d of %d bytes: no error", n, full.Len())
		}
	}
	if err := RenderIndex(&failWriter{}, nil, link); err == nil {
		t.Errorf("no entries, failing writer: no error")
	}
}
