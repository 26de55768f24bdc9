package incidence

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// gate is the incidence section of experiment 275's spec.
func gate() spec.Incidence {
	return spec.Incidence{
		Suite:    spec.Harness{Kind: "gotest", Package: "./lanes/release"},
		Total:    "dispatches",
		Eligible: "cheap-parked-behind-costly",
		Control:  "PositiveControl",
		MinShare: 0.001,
		SavingNs: 2_000_000,
	}
}

// rec is one successful suite run of a lane: one sample of timeNs, with counters.
func rec(lane string, timeNs float64, counts map[string]float64) receipt.Record {
	m := map[string][]float64{}
	for k, v := range counts {
		m[k] = []float64{v}
	}
	return receipt.Record{Lane: lane, Samples: []float64{timeNs}, Unit: "ns/op", Metrics: m}
}

// counts builds the five reader-pool counters.
func counts(dispatches, cheap, costly, parked, eligible float64) map[string]float64 {
	return map[string]float64{"dispatches": dispatches, "cheap": cheap, "costly": costly, "parked": parked,
		"cheap-parked-behind-costly": eligible}
}

// levels returns "level: message-prefix" for each finding, for compact comparisons.
func levels(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		msg := f.Message
		if i := strings.IndexAny(msg, ":;("); i > 0 {
			msg = msg[:i]
		}
		out = append(out, f.Level+": "+strings.TrimSpace(msg))
	}
	return out
}

func TestCompute(t *testing.T) {
	control := rec("PositiveControl", 4e8, counts(90, 80, 10, 50, 40))
	tests := []struct {
		name    string
		gate    func(*spec.Incidence)
		records []receipt.Record
		// want holds the numbers checked; findings the findings' level and start.
		wantTotal, wantEligible, wantShare float64
		wantMeets                          bool
		wantFired                          bool
		findings                           []string
	}{
		{
			name: "the suite answers zero and the control fired",
			records: []receipt.Record{
				rec("ChatSim", 3e8, counts(800, 798, 2, 0, 0)),
				rec("Concurrent8", 1e8, counts(320, 0, 320, 214, 0)),
				control,
			},
			wantTotal: 1120, wantEligible: 0, wantShare: 0, wantMeets: false, wantFired: true,
			findings: []string{"warning: cheap-parked-behind-costly is exactly 0 over 1120 dispatches in 2 lanes"},
		},
		{
			name: "eligible events above the min-share",
			records: []receipt.Record{
				rec("A", 5e8, counts(1000, 900, 100, 40, 3)),
				rec("B", 5e8, counts(1000, 900, 100, 0, 0)),
				control,
			},
			wantTotal: 2000, wantEligible: 3, wantShare: 0.0015, wantMeets: true, wantFired: true,
		},
		{
			name: "eligible events below the min-share",
			records: []receipt.Record{
				rec("A", 5e8, counts(10000, 9000, 1000, 40, 3)),
				control,
			},
			wantTotal: 10000, wantEligible: 3, wantShare: 0.0003, wantMeets: false, wantFired: true,
		},
		{
			name: "the control counted nothing: probe broken",
			records: []receipt.Record{
				rec("A", 5e8, counts(0, 0, 0, 0, 0)),
				rec("PositiveControl", 4e8, counts(0, 0, 0, 0, 0)),
			},
			findings: []string{
				"error: probe broken",
				"error: the suite counted no dispatches events at all outside the control",
			},
		},
		{
			name: "a default build reports zeros everywhere",
			records: []receipt.Record{
				rec("A", 5e8, counts(0, 0, 0, 0, 0)),
				rec("B", 5e8, counts(0, 0, 0, 0, 0)),
				rec("PositiveControl", 4e8, counts(0, 0, 0, 0, 0)),
			},
			findings: []string{
				"error: probe broken",
				"error: the suite counted no dispatches events at all outside the control",
			},
		},
		{
			name:      "the control lane is missing",
			records:   []receipt.Record{rec("A", 5e8, counts(100, 90, 10, 0, 0))},
			wantTotal: 100,
			findings: []string{
				"error: the positive control lane PositiveControl is not in the suite",
				"warning: cheap-parked-behind-costly is exactly 0 over 100 dispatches in 1 lanes",
			},
		},
		{
			name:    "no control in the spec",
			gate:    func(g *spec.Incidence) { g.Control = "" },
			records: []receipt.Record{rec("A", 5e8, counts(100, 90, 10, 2, 1)), control},
			// Without a control, the control lane's events are ordinary suite events.
			wantTotal: 190, wantEligible: 41, wantShare: 41.0 / 190, wantMeets: true,
			findings: []string{"warning: the spec names no positive control lane"},
		},
		{
			name: "a failed lane",
			records: []receipt.Record{
				rec("A", 5e8, counts(100, 90, 10, 2, 1)),
				{Lane: "B", Error: "exited with status 1"},
				control,
			},
			wantTotal: 100, wantEligible: 1, wantShare: 0.01, wantMeets: true, wantFired: true,
			findings: []string{"error: lane B produced no usable run"},
		},
		{
			name:      "a counter name no lane reports",
			gate:      func(g *spec.Incidence) { g.Eligible = "cheap-parked" },
			records:   []receipt.Record{rec("A", 5e8, counts(100, 90, 10, 2, 1)), control},
			wantTotal: 100,
			findings: []string{
				`error: no lane reported the counter "cheap-parked"`,
				"error: probe broken",
			},
		},
		{
			name:      "no saving: no value estimate",
			gate:      func(g *spec.Incidence) { g.SavingNs = 0 },
			records:   []receipt.Record{rec("A", 5e8, counts(100, 90, 10, 2, 1)), control},
			wantTotal: 100, wantEligible: 1, wantShare: 0.01, wantMeets: true, wantFired: true,
			findings: []string{"warning: the spec gives no per-hit saving"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gate()
			if tc.gate != nil {
				tc.gate(&g)
			}
			r, err := Compute(Input{Experiment: 275, Gate: g, Records: tc.records})
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != tc.wantTotal || r.Eligible != tc.wantEligible || math.Abs(r.Share-tc.wantShare) > 1e-12 {
				t.Errorf("total %g, eligible %g, share %g; want %g, %g, %g", r.Total, r.Eligible, r.Share, tc.wantTotal, tc.wantEligible, tc.wantShare)
			}
			if r.MeetsMinShare != tc.wantMeets || r.Control.Fired != tc.wantFired {
				t.Errorf("meets min-share %v, control fired %v; want %v, %v", r.MeetsMinShare, r.Control.Fired, tc.wantMeets, tc.wantFired)
			}
			if diff := cmp.Diff(tc.findings, levels(r.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %v", diff, r.Findings)
			}
			if broken := len(tc.findings) > 0 && strings.HasPrefix(tc.findings[0], "error"); r.Broken() != broken {
				t.Errorf("Broken() = %v, want %v", r.Broken(), broken)
			}
		})
	}
}

// TestTotalsAndBreakdown checks every counter's total, the per-lane rows, and that
// several runs and samples of a lane add up.
func TestTotalsAndBreakdown(t *testing.T) {
	two := rec("B", 1e8, counts(10, 6, 4, 2, 1))
	two.Samples = []float64{1e8, 3e8}
	two.Metrics = map[string][]float64{"dispatches": {10, 20}, "cheap": {6, 12}, "costly": {4, 8}, "parked": {2, 0}, "cheap-parked-behind-costly": {1, 0}}
	r, err := Compute(Input{Gate: gate(), Records: []receipt.Record{
		rec("A", 2e8, counts(100, 90, 10, 3, 2)),
		two,
		rec("A", 2e8, counts(100, 90, 10, 3, 2)), // a second run of A
		rec("PositiveControl", 4e8, counts(90, 80, 10, 50, 40)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"dispatches": 230, "cheap": 198, "costly": 32, "parked": 8, "cheap-parked-behind-costly": 5}
	if diff := cmp.Diff(want, r.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cheap", "cheap-parked-behind-costly", "costly", "dispatches", "parked"}, r.Counters); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	type row struct {
		Lane                string
		Control             bool
		Runs, Samples       int
		TimeNs, Total, Elig float64
		Share               float64
	}
	var got []row
	for _, l := range r.Lanes {
		got = append(got, row{l.Lane, l.Control, l.Runs, l.Samples, l.TimeNs, l.Total, l.Eligible, l.Share})
	}
	wantRows := []row{
		{"A", false, 2, 2, 4e8, 200, 4, 0.02},
		{"B", false, 1, 2, 4e8, 30, 1, 1.0 / 30},
		{"PositiveControl", true, 1, 1, 4e8, 90, 40, 40.0 / 90},
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
	if r.SuiteTimeNs != 8e8 {
		t.Errorf("suite time %g ns, want 8e8 (the control excluded)", r.SuiteTimeNs)
	}
}

// TestValueEstimate pins the definition: frequency = total events per second of suite
// time, value = frequency x share x saving, in ns saved per second.
func TestValueEstimate(t *testing.T) {
	tests := []struct {
		name                  string
		timeNs, total, elig   float64
		unit                  string
		saving                float64
		freq, value, fraction float64
		has                   bool
	}{
		{name: "one in a thousand, 2 ms each", timeNs: 2e9, total: 10000, elig: 10, unit: "ns/op", saving: 2e6,
			freq: 5000, value: 5000 * 0.001 * 2e6, fraction: 0.01, has: true},
		{name: "zero eligible is worth zero", timeNs: 1e9, total: 4280, elig: 0, unit: "ns/op", saving: 2e6,
			freq: 4280, value: 0, fraction: 0, has: true},
		{name: "seconds per op", timeNs: 0.5, total: 100, elig: 50, unit: "sec/op", saving: 1000,
			freq: 200, value: 200 * 0.5 * 1000, fraction: 1e-4, has: true},
		{name: "no time unit", timeNs: 7, total: 100, elig: 50, unit: "B/op", saving: 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gate()
			g.SavingNs = tc.saving
			g.Control = ""
			r, err := Compute(Input{Gate: g, Records: []receipt.Record{{
				Lane: "A", Samples: []float64{tc.timeNs}, Unit: tc.unit,
				Metrics: map[string][]float64{"dispatches": {tc.total}, "cheap-parked-behind-costly": {tc.elig}},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if r.HasValue != tc.has || !near(r.FrequencyPerSec, tc.freq) || !near(r.ValueNsPerSec, tc.value) || !near(r.ValueShare, tc.fraction) {
				t.Errorf("has %v, frequency %g/s, value %g ns/s (%g); want %v, %g, %g (%g)",
					r.HasValue, r.FrequencyPerSec, r.ValueNsPerSec, r.ValueShare, tc.has, tc.freq, tc.value, tc.fraction)
			}
		})
	}
}

func TestComputeRejectsUnusableInput(t *testing.T) {
	if _, err := Compute(Input{Gate: gate()}); err == nil || !strings.Contains(err.Error(), "no runs") {
		t.Errorf("no records: %v", err)
	}
	g := gate()
	g.Total = ""
	if _, err := Compute(Input{Gate: g, Records: []receipt.Record{rec("A", 1, nil)}}); err == nil {
		t.Error("no total counter: no error")
	}
}

// TestMarkdownAndJSON renders a report like exp 275's and compares it with the golden
// files in testdata (refresh them with go test ./incidence -update).
func TestMarkdownAndJSON(t *testing.T) {
	r, err := Compute(Input{Experiment: 275, Gate: gate(), Records: []receipt.Record{
		rec("ChatSim", 3.5e8, counts(800, 798, 2, 0, 0)),
		rec("Concurrent8", 4.2e7, counts(320, 0, 320, 214, 0)),
		{Lane: "KeyedPK", Error: "exited with status 2"},
		rec("PositiveControl", 4.4e8, counts(90, 80, 10, 50, 40)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md", md.Bytes())
	golden(t, "report.json", js)

	dir := t.TempDir()
	if Exists(dir) {
		t.Error("Exists in an empty folder")
	}
	if err := receipt.Folder(dir).WriteIncidence(js, nil, nil); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestMarkdownWriteError(t *testing.T) {
	r, err := Compute(Input{Gate: gate(), Records: []receipt.Record{rec("A", 1e6, counts(1, 1, 0, 0, 0))}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Markdown(failWriter{}, r); err == nil {
		t.Error("a failing writer gave no error")
	}
}

// TestShares: the spec's extra shares are computed over the suite (control excluded) and
// per lane like the eligible share, rendered as columns, and a share whose counter no
// lane reports is a warning.
func TestShares(t *testing.T) {
	g := gate()
	g.Shares = []spec.Share{{Part: "cheap", Of: "dispatches"}, {Part: "cheap-waited", Of: "cheap"}}
	withWaited := func(c map[string]float64, waited float64) map[string]float64 {
		c["cheap-waited"] = waited
		return c
	}
	r, err := Compute(Input{Experiment: 275, Gate: g, Records: []receipt.Record{
		rec("ChatSim", 3.5e8, withWaited(counts(800, 790, 10, 2, 0), 2)),
		rec("StreamFanout", 1.2e8, withWaited(counts(200, 200, 0, 60, 0), 60)),
		{Lane: "KeyedPK", Error: "exited with status 2"},
		rec("PositiveControl", 4.4e8, withWaited(counts(90, 80, 10, 50, 40), 40)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []ShareValue{
		{SharePair: SharePair{"cheap", "dispatches"}, PartCount: 990, OfCount: 1000, Share: 0.99},
		{SharePair: SharePair{"cheap-waited", "cheap"}, PartCount: 62, OfCount: 990, Share: 62.0 / 990},
	}
	if diff := cmp.Diff(want, r.Shares); diff != "" {
		t.Errorf("suite shares (-want +got):\n%s", diff)
	}
	if got := r.Lanes[1].Shares[1].Share; got != 0.3 {
		t.Errorf("StreamFanout cheap-waited/cheap = %g, want 0.3", got)
	}
	if r.Lanes[2].Shares != nil {
		t.Errorf("a failed lane has shares %v", r.Lanes[2].Shares)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report-shares.md", md.Bytes())

	g.Shares = append(g.Shares, spec.Share{Part: "cheap-waitd", Of: "cheap"})
	r, err = Compute(Input{Gate: g, Records: []receipt.Record{rec("ChatSim", 1e6, withWaited(counts(1, 1, 0, 0, 0), 0))}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"warning: no lane reported the counter \"cheap-waitd\" of the share cheap-waitd/cheap"}, levels(r.Findings)[1:2]); diff != "" {
		t.Errorf("findings (-want +got):\n%s\nall: %q", diff, levels(r.Findings))
	}
}
