package report

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
)

var updateDrift = flag.Bool("update", false, "rewrite the golden files in testdata")

// driftObs returns n samples around v with a small deterministic spread.
func driftObs(c, p int, lane, arm string, v float64, n int) driftcheck.Observation {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = v * (1 + 0.01*float64(i%5-2))
	}
	return driftcheck.Observation{Collection: c, Pass: p, Lane: lane, Arm: arm, Samples: xs}
}

// goldenRoles are the roles of driftGoldenInput's lanes.
var goldenRoles = Roles{"PointRead": "primary", "Bulk|Mixed": "guard", "Throughput": "control", "L": "primary"}

// driftGoldenInput is a small handmade experiment: two candidates, three lanes, two
// collections of four passes, with a contaminated pass, a failed run and a lane name
// that needs escaping.
func driftGoldenInput() driftcheck.Input {
	in := driftcheck.Input{
		Base: "base", Candidates: []string{"candA", "candB"}, Collections: 2, Passes: 4,
		Lanes: []driftcheck.Lane{
			{Name: "PointRead"},
			{Name: "Bulk|Mixed"},
			{Name: "Throughput", HigherIsBetter: true},
		},
	}
	for c := 1; c <= 2; c++ {
		for p := 1; p <= 4; p++ {
			in.Observations = append(in.Observations,
				driftObs(c, p, "PointRead", "base", 100, 8),
				driftObs(c, p, "PointRead", "candA", 88, 8),
				driftObs(c, p, "PointRead", "candB", 100.5, 8),
				driftObs(c, p, "Throughput", "base", 5000, 8),
				driftObs(c, p, "Throughput", "candA", 5010, 8),
				driftObs(c, p, "Throughput", "candB", 4990, 8),
			)
			if !(c == 2 && p == 3) { // the base run of Bulk|Mixed crashed in collection 2 pass 3
				in.Observations = append(in.Observations, driftObs(c, p, "Bulk|Mixed", "base", 50, 8))
			}
			in.Observations = append(in.Observations, driftObs(c, p, "Bulk|Mixed", "candA", 50.2, 8))
			b := driftObs(c, p, "Bulk|Mixed", "candB", 53, 8)
			if c == 1 && p == 2 { // a noisy neighbour during one candB run
				b.Samples = []float64{40, 45, 53, 60, 70, 53, 48, 66}
			}
			in.Observations = append(in.Observations, b)
		}
	}
	// The arms' places follow the three-arm design harness.Schedule uses: pair k of
	// collection c runs the design's order (k+c-2) mod 3 forward, then in reverse.
	design := [][]string{{"base", "candA", "candB"}, {"candA", "candB", "base"}, {"candB", "base", "candA"}}
	for i, o := range in.Observations {
		order := design[((o.Pass+1)/2-1+o.Collection-1)%len(design)]
		place := slices.Index(order, o.Arm) + 1
		in.Observations[i].Order, in.Observations[i].Position = driftcheck.OrderForward, place
		if o.Pass%2 == 0 {
			in.Observations[i].Order, in.Observations[i].Position = driftcheck.OrderReverse, len(order)+1-place
		}
	}
	return in
}

func TestDriftMarkdown(t *testing.T) {
	full, err := driftcheck.Analyze(driftGoldenInput(), driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	quiet := driftcheck.Input{Base: "base", Candidates: []string{"cand"}, Collections: 1, Passes: 2,
		Lanes: []driftcheck.Lane{{Name: "L"}},
		Observations: []driftcheck.Observation{
			driftObs(1, 1, "L", "base", 10, 10), driftObs(1, 1, "L", "cand", 10, 10),
			driftObs(1, 2, "L", "base", 10, 10), driftObs(1, 2, "L", "cand", 10.1, 10),
		}}
	small, err := driftcheck.Analyze(quiet, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		report driftcheck.Report
	}{
		{name: "drift", report: full},
		{name: "drift_no_warnings", report: small},
		{name: "drift_empty", report: driftcheck.Report{Base: "base"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := DriftMarkdown(&buf, tc.report, goldenRoles, nil); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".md")
			if *updateDrift {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./report -run TestDriftMarkdown -update)", err)
			}
			if d := cmp.Diff(string(want), buf.String()); d != "" {
				t.Errorf("%s differs (-want +got); rerun with -update if intended:\n%s", golden, d)
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

func TestDriftMarkdownWriteError(t *testing.T) {
	r, err := driftcheck.Analyze(driftGoldenInput(), driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	if err := DriftMarkdown(&full, r, goldenRoles, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, full.Len() / 2, full.Len() - 5} {
		if err := DriftMarkdown(&failWriter{n: n}, r, goldenRoles, nil); err == nil {
			t.Errorf("writer failing after %d bytes: no error", n)
		}
	}
}

// TestMethodologyPassNotes keeps docs/methodology.md honest about the notes a pass can
// carry: every note the drift check gives a pass with a zero or negative median is quoted
// in the page.
func TestMethodologyPassNotes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "methodology.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		base, cand []float64
		higher     bool
		usable     bool
	}{
		{"zero base median", []float64{0, 0, 0}, []float64{90, 91, 92}, false, true},
		{"zero candidate median, higher is better", []float64{90, 91, 92}, []float64{0, 0, 0}, true, true},
		{"both zero", []float64{0, 0, 0}, []float64{0, 0, 0}, false, true},
		{"negative median", []float64{100, 101, 102}, []float64{-3, -2, -1, 0, 1}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := driftcheck.Input{Base: "base", Candidates: []string{"cand"}, Collections: 1, Passes: 2,
				Lanes: []driftcheck.Lane{{Name: "L", HigherIsBetter: tc.higher}},
				Observations: []driftcheck.Observation{
					{Collection: 1, Pass: 1, Lane: "L", Arm: "base", Samples: tc.base},
					{Collection: 1, Pass: 1, Lane: "L", Arm: "cand", Samples: tc.cand},
					driftObs(1, 2, "L", "base", 100, 5), driftObs(1, 2, "L", "cand", 90, 5),
				}}
			r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if r.Passes[0].Usable != tc.usable || r.Passes[0].Note == "" {
				t.Fatalf("pass %+v: want usable %t with a note", r.Passes[0], tc.usable)
			}
			if note := r.Passes[0].Note; !bytes.Contains(doc, []byte(note)) {
				t.Errorf("docs/methodology.md does not mention the note %q", note)
			}
		})
	}
}
