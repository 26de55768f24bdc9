package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/testkit/receipttest"
	"github.com/flipbench/flipbench/model/receipt"
)

// finishSynth writes a synthetic receipt, its derived files and its page, and returns its
// folder and page.
func finishSynth(t *testing.T, s receipttest.Synth) (string, string) {
	t.Helper()
	dir := receipttest.Write(t, s)
	md, err := renderAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	return dir, string(page)
}

// TestRenderShapes renders receipts of unusual shape and checks what the page says.
func TestRenderShapes(t *testing.T) {
	tests := []struct {
		name   string
		adjust func(s *receipttest.Synth)
		want   []string // lines or parts of lines of the page
		absent []string
	}{
		{
			name: "failed runs: cand's L crashed in all of collection 2",
			adjust: func(s *receipttest.Synth) {
				s.Fail = func(r receipt.Run) bool { return r.Arm == "cand" && r.Lane == "L" && r.Collection == 2 }
			},
			want: []string{
				"| runs             | 16 planned, 16 recorded, 2 failed",
				"Over the successful runs only: failed runs (listed below) are left out.",
				"## Failed runs",
				"- collection 2 pass 1, lane L, arm cand (pid ",
				"exit 2): exit status 2",
				"  stderr: `panic: boom`",
				// The crashes' 1 MiB peaks are not counted: 20.0 MiB median and max.
				"| L    | 10.0MiB     | 10.0MiB  | 20.0MiB     | 20.0MiB  |",
				// No usable pass: no delta, not +0.0%.
				"| 1 insufficient | insufficient | no usable pair: all 1 pairs insufficient",
				"| L    | 0      | -        | -      | 0/0    |",
			},
			absent: []string{"1.00MiB", "| L    | 0      | 0.0%"},
		},
		{
			name: "three arms",
			adjust: func(s *receipttest.Synth) {
				s.Arms = []string{"base", "candA", "candB"}
				s.Factor = map[string]float64{"candA": 0.8, "candB": 1.2}
			},
			want: []string{
				"candA median | candA max | candB median | candB max |",
				"2026-11-30T10-00-00Z-exp001-synth/candB.bench",
				"### candA vs base, collection 2", "### candB vs base, collection 2",
			},
		},
		{
			name:   "one collection",
			adjust: func(s *receipttest.Synth) { s.Collections = 1 },
			want:   []string{"| protocol         | 1 collection x 2 passes, 5 samples after 1 warmup per run", "### cand vs base, collection 1"},
			absent: []string{"collection 2"},
		},
		{
			name:   "lanes filtered: the plan ran L only",
			adjust: func(s *receipttest.Synth) { s.Lanes = []string{"L"} },
			want:   []string{"| L    | 10.0MiB     | 10.0MiB  | 20.0MiB     | 20.0MiB  |"},
			absent: []string{"| G "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := receipttest.Default()
			tt.adjust(&s)
			_, page := finishSynth(t, s)
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(page, a) {
					t.Errorf("page has %q", a)
				}
			}
			if t.Failed() || os.Getenv("SHOWPAGE") != "" {
				t.Logf("page:\n%s", page)
			}
		})
	}
}

func TestRSSTable(t *testing.T) {
	// Four runs per lane and arm; an even count takes the mean of the middle two.
	d := &loaded.Receipt{Plan: &receipt.Plan{Lanes: []receipt.Lane{{Name: "L"}, {Name: "M"}, {Name: "N"}}}}
	add := func(lane, arm string, mib float64, failed bool) {
		r := receipt.Record{Lane: lane, Arm: arm, MaxRSSBytes: int64(mib * (1 << 20))}
		if failed {
			r.Error = "exit status 2"
		}
		d.Records = append(d.Records, r)
	}
	for _, v := range []float64{10, 12, 14, 16} {
		add("L", "base", v, false)
		add("L", "cand", 2*v, false)
	}
	add("L", "cand", 1, true) // a crash: not counted
	add("M", "base", 8, false)
	add("M", "cand", 1, true) // cand's only run of M crashed
	tests := []struct {
		style RSSStyle
		want  string
	}{
		{RSSMedianMax, "| lane | base median | base max | cand median | cand max |\n" +
			"|:-----|:------------|:---------|:------------|:---------|\n" +
			"| L    | 13.0MiB     | 16.0MiB  | 26.0MiB     | 32.0MiB  |\n" +
			"| M    | 8.00MiB     | 8.00MiB  | -           | -        |\n" +
			"| N    | -           | -        | -           | -        |\n"},
		{RSSMedianDelta, "| lane | base    | cand    | Δ                  |\n" +
			"|:-----|:--------|:--------|:-------------------|\n" +
			"| L    | 13.0MiB | 26.0MiB | +100% (2.00x more) |\n" +
			"| M    | 8.00MiB | -       | -                  |\n" +
			"| N    | -       | -       | -                  |\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := RSSTable(&buf, d, []string{"base", "cand"}, tt.style); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("style %d:\n%s\nwant:\n%s", tt.style, buf.String(), tt.want)
		}
	}
}

func TestSummaryDeltas(t *testing.T) {
	for _, tt := range []struct {
		s            driftcheck.LaneSummary
		median, mean string
	}{
		{driftcheck.LaneSummary{Passes: 4, MedianDeltaPct: -12.06, MeanDeltaPct: 0.04}, "-12.1%", "0.0%"},
		{driftcheck.LaneSummary{Passes: 0, Verdict: driftcheck.LaneInsufficient}, "-", "-"},
	} {
		if m, a := SummaryDeltas(tt.s); m != tt.median || a != tt.mean {
			t.Errorf("SummaryDeltas(%+v) = %q, %q, want %q, %q", tt.s, m, a, tt.median, tt.mean)
		}
	}
}

// TestRenderWriteError checks that Render reports a failing writer wherever it fails.
func TestRenderWriteError(t *testing.T) {
	dir := receipttest.Write(t, receipttest.Default())
	d, err := loaded.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	if err := Render(&full, d); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, full.Len() / 2, full.Len() - 5} {
		if err := Render(&failWriter{n: n}, d); err == nil {
			t.Errorf("writer failing after %d of %d bytes: no error", n, full.Len())
		}
	}
}

// renderAll writes what Finish derives and renders (the .bench files, analysis.json, the
// manifest and the page) for a receipt folder, as pipeline.Finish does, so this package's
// tests can read whole pages without importing the pipeline (which imports report).
func renderAll(dir string) (string, error) {
	d, err := loaded.Load(dir)
	if err != nil {
		return "", err
	}
	if _, err := receipt.Folder(dir).WriteBench(d.Plan, d.Records); err != nil {
		return "", err
	}
	if err := receipt.Folder(dir).WriteAnalysis(&d.Analysis); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := Render(&buf, d); err != nil {
		return "", err
	}
	if _, err := receipt.Folder(dir).Seal(buf.Bytes()); err != nil {
		return "", err
	}
	return receipt.PagePath(dir), nil
}

func TestProfilePlot(t *testing.T) {
	d := profdiff.Diff{Kind: profdiff.CPU, Unit: "ns/op", Top: []profdiff.Entry{
		{Function: "example.com/toy/toy.step", Flat: profdiff.Values{Base: 1e6, Cand: 3e6, Delta: 2e6}, FlatNoise: 2e5},
		{Function: "example.com/toy/toy.other", Flat: profdiff.Values{Base: 1e6, Cand: 0.5e6, Delta: -0.5e6}, FlatNoise: 1e5},
	}}
	var buf bytes.Buffer
	if err := ProfilePlot(&buf, "Work", "cand", "base", d); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"<svg", "toy.step", "toy.other", "+2.00ms", "-500.0µs", "Work: cand vs base, CPU time per operation by function (flat)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	if strings.Contains(svg, "e+0") || strings.Contains(svg, "e-0") {
		t.Error("plot has e-notation")
	}
	buf.Reset()
	if err := ProfilePlot(&buf, "Work", "cand", "base", profdiff.Diff{Kind: profdiff.Alloc, Unit: "B/op", Top: []profdiff.Entry{}}); err != nil {
		t.Errorf("a difference with no entry: %v", err)
	}
}
