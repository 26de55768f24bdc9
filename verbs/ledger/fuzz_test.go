package ledger

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/internal/testkit/seeds"
	"github.com/flipbench/flipbench/model/spec"
)

// addSeeds adds every file of the testscripts that keep accepts, and the files matching
// the glob patterns, to the seed corpus of f.
func addSeeds(f *testing.F, keep func(string) bool, globs ...string) {
	f.Helper()
	files, err := seeds.ScriptFiles(seeds.ScriptDir, keep)
	if err != nil {
		f.Fatal(err)
	}
	for _, g := range globs {
		more, err := seeds.Files(g)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, more...)
	}
	for _, b := range files {
		f.Add(b)
	}
}

// FuzzParsePage feeds experiment pages to the ledger's page parser and to finalize's page
// edit: nothing may crash them, every problem is placed on a line of the page, and on a
// page whose front matter is sound the edit finalize makes (results block, status,
// receipts) keeps the rest of the page and yields a front matter that parses again.
func FuzzParsePage(f *testing.F) {
	addSeeds(f, func(name string) bool {
		return strings.HasSuffix(name, ".md") && path.Base(path.Dir(name)) == ExperimentsDir
	}, seeds.Repo("experiments/[0-9]*.md"), seeds.Repo("experiments/TEMPLATE.md"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePage("experiments/001-x.md", data)
		if err != nil {
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, pr := range p.Placeholders() {
			if pr.Line < 0 || pr.Line > lines {
				t.Fatalf("placeholder problem on line %d of %d: %v", pr.Line, lines, pr)
			}
		}
		for _, l := range p.Links {
			if l.Line < 1 || l.Line > lines {
				t.Fatalf("link %q on line %d of %d", l.Dest, l.Line, lines)
			}
		}
		if p.Spec == nil || p.MarkerProblem != "" {
			return
		}
		out := spliceBlock(p, []byte("| lane | verdict |\n|---|---|\n| alpha | faster |\n"))
		edit := frontEdit{status: string(spec.StatusAccepted), statusBy: spec.StatusByRule,
			receipts: []spec.ReceiptRef{{Path: "../results/x.md", SHA256: strings.Repeat("a", 64)}}}
		out, err = edit.apply(out)
		if err != nil {
			return // a status written in a form finalize cannot replace is refused, not garbled
		}
		e, err := spec.Parse("experiments/001-x.md", out)
		if err != nil {
			t.Fatalf("finalize's edit made an invalid front matter: %v\n%s", err, out)
		}
		if e.Status != spec.StatusAccepted || len(e.Receipts) != 1 {
			t.Fatalf("after the edit: status %q, %d receipts", e.Status, len(e.Receipts))
		}
	})
}

// FuzzParseDirections feeds directions registries to ParseDirections: nothing may crash
// it, and every direction it accepts has a name and a one-line description.
func FuzzParseDirections(f *testing.F) {
	addSeeds(f, func(name string) bool {
		return path.Base(name) == DirectionsFile || strings.HasSuffix(name, "/directions.yaml")
	},
		seeds.Repo("experiments/directions.yaml"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dirs, err := ParseDirections("experiments/directions.yaml", data)
		if err != nil {
			return
		}
		for _, d := range dirs {
			if d.Name == "" || strings.Contains(d.Description, "\n") {
				t.Fatalf("direction %+v", d)
			}
		}
	})
}
