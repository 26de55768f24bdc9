package spec

import (
	"bytes"
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/internal/testkit/seeds"
)

// addSeeds adds every file of the testscripts that keep accepts, and the extra files
// matching the glob patterns, to the seed corpus of f.
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

// checkErrors checks that every problem in err is a spec *Error placed on a line of the
// document (or on none), so a message always points somewhere real.
func checkErrors(t *testing.T, data []byte, err error) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n")) + 1
	errs := Errors(err)
	if len(errs) == 0 {
		t.Fatalf("error %q holds no *Error", err)
	}
	for _, e := range errs {
		if e.Line < 0 || e.Line > lines {
			t.Fatalf("problem on line %d of a %d-line document: %v", e.Line, lines, e)
		}
		if e.Msg == "" || strings.Contains(e.Msg, "\n") {
			t.Fatalf("problem without a one-line message: %q", e.Msg)
		}
	}
}

// checkResolved checks the bounds every resolved protocol keeps.
func checkResolved(t *testing.T, e *Experiment, r Resolved) {
	t.Helper()
	p := r.Protocol
	switch {
	case p.Samples < 1 || p.Samples > MaxSamples, p.Warmup < 0 || p.Warmup > MaxWarmup,
		p.Passes < 2 || p.Passes > MaxPasses || p.Passes%2 != 0, p.Collections < 1 || p.Collections > MaxCollections,
		p.Timeout <= 0 || time.Duration(p.Timeout) > MaxTimeout:
		t.Fatalf("resolved protocol out of bounds: %+v", p)
	}
	if runs := int64(p.Collections) * int64(p.Passes) * int64(len(r.Lanes)) * int64(max(len(e.Arms), 1)); runs > MaxRuns {
		t.Fatalf("resolved protocol makes %d runs", runs)
	}
}

// FuzzParse feeds experiment pages to Parse and Resolve: no input may crash them, every
// error names a line of the page, and whatever resolves stays within the protocol bounds.
func FuzzParse(f *testing.F) {
	addSeeds(f, func(name string) bool {
		return strings.HasSuffix(name, ".md") && path.Base(path.Dir(name)) == "experiments"
	}, "testdata/*.md", seeds.Repo("experiments/[0-9]*.md"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse("page.md", data)
		if err != nil {
			if e != nil {
				t.Fatal("Parse returned an experiment with an error")
			}
			checkErrors(t, data, err)
			return
		}
		r, err := e.Resolve(Overrides{})
		if err != nil {
			checkErrors(t, data, err)
			return
		}
		checkResolved(t, e, r)
		for _, prof := range []string{"quick", FullProfile} {
			if r, err := e.Resolve(Overrides{Profile: prof}); err == nil {
				checkResolved(t, e, r)
			}
		}
	})
}

// FuzzParseGate feeds gate specs to ParseGate and the gate's Resolve, as FuzzParse does
// for pages.
func FuzzParseGate(f *testing.F) {
	addSeeds(f, func(name string) bool {
		return strings.HasSuffix(name, ".yaml") && path.Base(name) != "directions.yaml"
	},
		seeds.Repo("experiments/gate.yaml"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGate("gate.yaml", data)
		if err != nil {
			if g != nil {
				t.Fatal("ParseGate returned a gate with an error")
			}
			checkErrors(t, data, err)
			return
		}
		e := g.Experiment("base", "cand")
		r, err := e.Resolve(Overrides{})
		if err != nil {
			if !errors.As(err, new(*Error)) {
				t.Fatalf("Resolve: %v is no spec error", err)
			}
			return
		}
		checkResolved(t, e, r)
		if g.Threshold() <= 0 || g.Threshold() > MaxDriftThreshold {
			t.Fatalf("threshold %g", g.Threshold())
		}
	})
}
