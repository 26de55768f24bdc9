// Package receipttest writes small synthetic receipts for the tests of the packages that
// read them (report, pipeline, ledger): a plan, raw.jsonl and env.json with deterministic
// values, as a run would leave them.
package receipttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
)

// Synth describes a small synthetic receipt: every arm runs every lane in every pass,
// base first in odd passes. Values are deterministic.
type Synth struct {
	Arms                         []string // base first
	Lanes                        []string // the lanes the plan ran
	Collections, Passes, Samples int
	Factor                       map[string]float64     // per arm, on the first lane; 1 when absent
	RSSMiB                       map[string]float64     // per arm; 10 when absent
	Fail                         func(receipt.Run) bool // runs that fail

}

// Default is a two-arm, two-lane receipt of 2 collections x 2 passes x 5 samples, the
// candidate 20% faster on the first lane and twice the base's peak RSS.
func Default() Synth {
	return Synth{Arms: []string{"base", "cand"}, Lanes: []string{"L", "G"}, Collections: 2, Passes: 2, Samples: 5,
		Factor: map[string]float64{"cand": 0.8}, RSSMiB: map[string]float64{"cand": 20}}
}

// Write writes the plan, raw.jsonl and env.json of s into a new data folder under
// t.TempDir() and returns it; pipeline.Finish completes it.
func Write(t testing.TB, s Synth) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "2026-11-30T10-00-00Z-exp001-synth")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := &receipt.Plan{Experiment: 1, Title: "synthetic", Page: "experiments/001-x.md", Label: "synth",
		Stamp: "2026-11-30T10-00-00Z", Command: []string{"flipbench", "ab", "1"},
		Protocol: receipt.Protocol{Collections: s.Collections, Passes: s.Passes, Samples: s.Samples, Warmup: 1, Seed: 1, Timeout: time.Minute},
		Drift:    driftcheck.DefaultConfig()}
	for _, a := range s.Arms {
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a, Bin: "lane", SHA256: strings.Repeat("ab", 32), Source: "prebuilt", Kind: "exec",
			Command: []string{"{bin}", "{lane}"}})
	}
	roles := []receipt.Role{receipt.RolePrimary, receipt.RoleGuard, receipt.RoleControl}
	for i, l := range s.Lanes {
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l, Role: roles[i%len(roles)]})
	}
	plan.Protocol.Design = harness.ArmDesign(len(s.Arms)).Kind
	plan.Runs = harness.Schedule(s.Arms, s.Lanes, s.Collections, s.Passes, 1, false)
	if err := receipt.Folder(dir).WritePlan(plan); err != nil {
		t.Fatal(err)
	}
	log, _, err := receipt.Folder(dir).OpenLog()
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, run := range plan.Runs {
		f, rss := 1.0, 10.0
		if v, ok := s.Factor[run.Arm]; ok && run.Lane == s.Lanes[0] {
			f = v
		}
		if v, ok := s.RSSMiB[run.Arm]; ok {
			rss = v
		}
		samples := make([]float64, s.Samples)
		for k := range samples {
			samples[k] = 1000 * f * (1 + 0.002*float64(k%3-1))
		}
		rec := receipt.Record{Collection: run.Collection, Pass: run.Pass, Order: run.Order, Arm: run.Arm, Lane: run.Lane,
			PID: 100 + i, Samples: samples, Unit: "ns/op", MaxRSSBytes: int64(rss * (1 << 20)),
			Position: run.Position, Started: t0.Add(time.Duration(i) * time.Second), Ended: t0.Add(time.Duration(i)*time.Second + time.Second/2),
			Command: []string{"lane", run.Lane}}
		if s.Fail != nil && s.Fail(run) {
			rec.Exit, rec.Samples, rec.Unit, rec.MaxRSSBytes = 2, nil, "", 1<<20
			rec.Error, rec.StderrTail = "exit status 2", "starting\npanic: boom\n"
		}
		if err := log.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	env := receipt.Env{Snapshots: []receipt.Snapshot{{When: "before", Collection: 1, Pass: 1, Time: t0, Hostname: "h", CPUs: 2, GoVersion: "go1.26.0"}}}
	if err := receipt.Folder(dir).WriteEnv(env); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteFile writes s to path or fails the test.
func WriteFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Flip changes one byte in the middle of a file: an edit a manifest must catch.
func Flip(t testing.TB, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	WriteFile(t, path, string(data))
}
