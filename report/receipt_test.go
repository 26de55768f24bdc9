package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

// synthRun describes a small synthetic receipt: every arm runs every lane in every pass,
// base first in odd passes. Values are deterministic.
type synthRun struct {
	arms                         []string // base first
	lanes                        []string // the lanes the plan ran
	collections, passes, samples int
	factor                       map[string]float64 // per arm; 1 when absent
	rssMiB                       map[string]float64 // per arm; 10 when absent
	fail                         func(receipt.Run) bool
}

func defaultSynth() synthRun {
	return synthRun{arms: []string{"base", "cand"}, lanes: []string{"L", "G"}, collections: 2, passes: 2, samples: 5,
		factor: map[string]float64{"cand": 0.8}, rssMiB: map[string]float64{"cand": 20}}
}

// writeSynth writes the plan, raw.jsonl and env.json of s into a new data folder and
// returns it; Finish completes it.
func writeSynth(t *testing.T, s synthRun) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "2026-11-30T10-00-00Z-exp001-synth")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := &receipt.Plan{Experiment: 1, Title: "synthetic", Page: "experiments/001-x.md", Label: "synth",
		Stamp: "2026-11-30T10-00-00Z", Command: []string{"flipbench", "ab", "1"},
		Protocol: receipt.Protocol{Collections: s.collections, Passes: s.passes, Samples: s.samples, Warmup: 1, Seed: 1, Timeout: time.Minute},
		Drift:    driftcheck.DefaultConfig()}
	for _, a := range s.arms {
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a, Bin: "lane", SHA256: strings.Repeat("ab", 32), Source: "prebuilt", Kind: "exec",
			Command: []string{"{bin}", "{lane}"}})
	}
	roles := []string{"primary", "guard", "control"}
	for i, l := range s.lanes {
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l, Role: roles[i%len(roles)]})
	}
	for c := 1; c <= s.collections; c++ {
		for p := 1; p <= s.passes; p++ {
			order, arms := driftcheck.OrderForward, s.arms
			if p%2 == 0 {
				order, arms = driftcheck.OrderReverse, append([]string{}, s.arms...)
				for i, j := 0, len(arms)-1; i < j; i, j = i+1, j-1 {
					arms[i], arms[j] = arms[j], arms[i]
				}
			}
			for _, l := range s.lanes {
				for _, a := range arms {
					plan.Runs = append(plan.Runs, receipt.Run{Collection: c, Pass: p, Order: order, Lane: l, Arm: a})
				}
			}
		}
	}
	if err := receipt.WriteJSON(filepath.Join(dir, receipt.PlanFile), plan); err != nil {
		t.Fatal(err)
	}
	log, _, err := receipt.OpenLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, run := range plan.Runs {
		f, rss := 1.0, 10.0
		if v, ok := s.factor[run.Arm]; ok && run.Lane == s.lanes[0] {
			f = v
		}
		if v, ok := s.rssMiB[run.Arm]; ok {
			rss = v
		}
		samples := make([]float64, s.samples)
		for k := range samples {
			samples[k] = 1000 * f * (1 + 0.002*float64(k%3-1))
		}
		rec := receipt.Record{Collection: run.Collection, Pass: run.Pass, Order: run.Order, Arm: run.Arm, Lane: run.Lane,
			PID: 100 + i, Samples: samples, Unit: "ns/op", MaxRSSBytes: int64(rss * (1 << 20)),
			Started: t0.Add(time.Duration(i) * time.Second), Ended: t0.Add(time.Duration(i)*time.Second + time.Second/2),
			Command: []string{"lane", run.Lane}}
		if s.fail != nil && s.fail(run) {
			rec.Exit, rec.Samples, rec.Unit, rec.MaxRSSBytes = 2, nil, "", 1<<20
			rec.Error, rec.StderrTail = "exit status 2", "starting\npanic: boom\n"
		}
		if err := log.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	env := receipt.Env{Snapshots: []receipt.Snapshot{{When: "before", Collection: 1, Pass: 1, Time: t0, Hostname: "h", CPUs: 2, GoVersion: "go1.26.0"}}}
	if err := receipt.WriteJSON(filepath.Join(dir, receipt.EnvFile), env); err != nil {
		t.Fatal(err)
	}
	return dir
}

// finishSynth writes and finishes a synthetic receipt and returns its folder and page.
func finishSynth(t *testing.T, s synthRun) (string, string) {
	t.Helper()
	dir := writeSynth(t, s)
	md, err := Finish(dir)
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
		adjust func(s *synthRun)
		want   []string // lines or parts of lines of the page
		absent []string
	}{
		{
			name: "failed runs: cand's L crashed in all of collection 2",
			adjust: func(s *synthRun) {
				s.fail = func(r receipt.Run) bool { return r.Arm == "cand" && r.Lane == "L" && r.Collection == 2 }
			},
			want: []string{
				"| runs             | 16 planned, 16 recorded, 2 failed",
				"Over the successful runs only: failed runs (listed below) are left out.",
				"## Failed runs",
				"- collection 2 pass 1, lane L, arm cand (pid ",
				"exit 2): exit status 2",
				"  stderr: `panic: boom`",
				// The crashes' 1 MiB peaks are not counted: 20.0 MiB median and max.
				"| L    | 10.0 MiB    | 10.0 MiB | 20.0 MiB    | 20.0 MiB |",
				// No usable pass: no delta, not +0.0%.
				"| 1 insufficient | insufficient | no usable pair: all 1 pairs insufficient",
				"| L    | 0      | -        | -      | 0/0    |",
			},
			absent: []string{"1.0 MiB", "| L    | 0      | +0.0%"},
		},
		{
			name: "three arms",
			adjust: func(s *synthRun) {
				s.arms = []string{"base", "candA", "candB"}
				s.factor = map[string]float64{"candA": 0.8, "candB": 1.2}
			},
			want: []string{
				"candA median | candA max | candB median | candB max |",
				"2026-11-30T10-00-00Z-exp001-synth/candB.bench",
				"### candA vs base, collection 2", "### candB vs base, collection 2",
			},
		},
		{
			name:   "one collection",
			adjust: func(s *synthRun) { s.collections = 1 },
			want:   []string{"| protocol         | 1 collection x 2 passes, 5 samples after 1 warmup per run", "### cand vs base, collection 1"},
			absent: []string{"collection 2"},
		},
		{
			name:   "lanes filtered: the plan ran L only",
			adjust: func(s *synthRun) { s.lanes = []string{"L"} },
			want:   []string{"| L    | 10.0 MiB    | 10.0 MiB | 20.0 MiB    | 20.0 MiB |"},
			absent: []string{"| G "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := defaultSynth()
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
			write(t, filepath.Join(dir, "notes.txt"), "added later\n")
		}, ""},
		{"a derived file edited: rewritten from the run", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "cand.bench"), "BenchmarkL 1 1 ns/op\n")
		}, ""},
		{"raw.jsonl edited", func(t *testing.T, dir string) {
			flip(t, filepath.Join(dir, receipt.RawFile))
		}, "raw.jsonl: changed since the run"},
		{"plan.json edited", func(t *testing.T, dir string) {
			flip(t, filepath.Join(dir, receipt.PlanFile))
		}, "plan.json: changed since the run"},
		{"env.json removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, receipt.EnvFile)); err != nil {
				t.Fatal(err)
			}
		}, "env.json: listed in manifest.json but missing"},
		{"superseded.jsonl edited", func(t *testing.T, dir string) {
			flip(t, filepath.Join(dir, receipt.SupersededFile))
		}, "superseded.jsonl: changed since the run"},
		{"superseded.jsonl removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, receipt.SupersededFile)); err != nil {
				t.Fatal(err)
			}
		}, "superseded.jsonl: listed in manifest.json but missing"},
		{"superseded runs added after the run", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, receipt.SupersededFile), `{"collection":1,"pass":1,"lane":"L","arm":"base"}`+"\n")
		}, "superseded.jsonl: not in manifest.json: added since the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSynth(t, defaultSynth())
			if strings.HasPrefix(tt.name, "superseded.jsonl") {
				// A resumed run: a base run was measured again.
				write(t, filepath.Join(dir, receipt.SupersededFile), `{"collection":1,"pass":1,"lane":"L","arm":"base"}`+"\n")
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
			again, _ := os.ReadFile(Path(dir))
			if string(again) != page {
				t.Errorf("the page changed on finishing again")
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "cand.bench")); !bytes.Equal(got, bench) {
				t.Errorf("cand.bench is not what the run says")
			}
		})
	}
}

// TestOpen checks that Open refuses a receipt that does not match its manifest and
// reads the stored analysis of one that does.
func TestOpen(t *testing.T) {
	dir, _ := finishSynth(t, defaultSynth())
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Analysis.Lanes) != fmt.Sprint(fresh.Analysis.Lanes) || len(d.Records) != 16 || d.Plan.Experiment != 1 {
		t.Errorf("Open and Load disagree")
	}
	flip(t, filepath.Join(dir, receipt.AnalysisFile))
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "does not match its manifest; refusing a changed receipt") {
		t.Errorf("got %v", err)
	}
	if _, err := Open(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("no error for a missing folder")
	}
}

func TestRSSTable(t *testing.T) {
	// Four runs per lane and arm; an even count takes the mean of the middle two.
	d := &Data{Plan: &receipt.Plan{Lanes: []receipt.Lane{{Name: "L"}, {Name: "M"}, {Name: "N"}}}}
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
			"| L    | 13.0 MiB    | 16.0 MiB | 26.0 MiB    | 32.0 MiB |\n" +
			"| M    | 8.0 MiB     | 8.0 MiB  | -           | -        |\n" +
			"| N    | -           | -        | -           | -        |\n"},
		{RSSMedianDelta, "| lane | base     | cand     | Δ       |\n" +
			"|:-----|:---------|:---------|:--------|\n" +
			"| L    | 13.0 MiB | 26.0 MiB | +100.0% |\n" +
			"| M    | 8.0 MiB  | -        | -       |\n" +
			"| N    | -        | -        | -       |\n"},
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
		{driftcheck.LaneSummary{Passes: 4, MedianDeltaPct: -12.06, MeanDeltaPct: 0.04}, "-12.1%", "+0.0%"},
		{driftcheck.LaneSummary{Passes: 0, Verdict: driftcheck.LaneInsufficient}, "-", "-"},
	} {
		if m, a := SummaryDeltas(tt.s); m != tt.median || a != tt.mean {
			t.Errorf("SummaryDeltas(%+v) = %q, %q, want %q, %q", tt.s, m, a, tt.median, tt.mean)
		}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// flip changes one byte in the middle of a file.
func flip(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	write(t, path, string(data))
}

// TestDriftInputBetter checks that the better direction comes from the plan alone, which
// spec.Resolve fills for every lane: a rate unit does not make a lane higher-is-better.
func TestDriftInputBetter(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}},
		Protocol: receipt.Protocol{Collections: 1, Passes: 2},
		Lanes:    []receipt.Lane{{Name: "rate", Better: "higher"}, {Name: "time", Better: "lower"}, {Name: "unset"}}}
	var recs []receipt.Record
	for _, l := range plan.Lanes {
		recs = append(recs, receipt.Record{Collection: 1, Pass: 1, Lane: l.Name, Arm: "base", Samples: []float64{1, 2}, Unit: "ops/s"})
	}
	in := DriftInput(plan, recs)
	got := map[string]bool{}
	for _, l := range in.Lanes {
		got[l.Name] = l.HigherIsBetter
	}
	want := map[string]bool{"rate": true, "time": false, "unset": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("higher-is-better %v, want %v", got, want)
	}
}

// TestRenderWriteError checks that Render reports a failing writer wherever it fails.
func TestRenderWriteError(t *testing.T) {
	dir := writeSynth(t, defaultSynth())
	d, err := Load(dir)
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
