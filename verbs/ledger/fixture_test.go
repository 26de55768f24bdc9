package ledger

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

var (
	update  = flag.Bool("update", false, "rewrite the golden files in testdata/golden")
	fixture = flag.Bool("fixture", false, "regenerate the receipt in testdata/ledger/results (then run with -update)")
)

// fixtureStamp is the stamp of the fixture receipt.
const fixtureStamp = "2026-11-29T10-00-00Z"

// fixtureReceipt is the fixture receipt's data folder, relative to the ledger root.
const fixtureReceipt = "results/" + fixtureStamp + "-exp001-full"

// fixtureLane is one lane of the synthetic run: its base value and each candidate's
// factor on it.
type fixtureLane struct {
	name, expect string
	role         receipt.Role
	ns           float64
	factor       map[string]float64
	rssMiB       map[string]float64
}

// fixtureLanes are the lanes of the synthetic run. candA makes the primary lane alpha 20%
// faster and leaves the guard beta and the control gamma alone; candB makes alpha 20%
// faster too but beta 10% slower.
func fixtureLanes() []fixtureLane {
	return []fixtureLane{
		{name: "alpha", role: "primary", expect: "faster", ns: 1e6,
			factor: map[string]float64{"candA": 0.8, "candB": 0.8}, rssMiB: map[string]float64{"candA": 20, "candB": 20}},
		{name: "beta", role: "guard", ns: 5e5,
			factor: map[string]float64{"candA": 1.0, "candB": 1.1}, rssMiB: map[string]float64{"candA": 12, "candB": 18}},
		{name: "gamma", role: "control", ns: 2e5,
			factor: map[string]float64{"candA": 1.0, "candB": 1.0}, rssMiB: map[string]float64{"candA": 8, "candB": 8}},
	}
}

// fixtureRun describes a synthetic run of experiment 1 of testdata/ledger.
type fixtureRun struct {
	stamp, label, profile string
	protocol              receipt.Protocol
	lanes                 []fixtureLane
	// fail, when set, makes the runs it returns true for crash: they are recorded with
	// exit 2, an error and no samples.
	fail func(receipt.Run) bool
}

// defaultFixtureRun is the run of the fixture receipt: the page's own protocol, every lane.
func defaultFixtureRun() fixtureRun {
	return fixtureRun{stamp: fixtureStamp, label: "full", lanes: fixtureLanes(),
		protocol: receipt.Protocol{Samples: 6, Warmup: 1, Passes: 4, Collections: 2, Seed: 7, Timeout: 10 * time.Minute}}
}

// TestGenerateFixture writes the fixture receipt: a synthetic, deterministic run of
// experiment 1 of testdata/ledger with two candidates (see fixtureLanes). It runs only
// with -fixture.
func TestGenerateFixture(t *testing.T) {
	if !*fixture {
		t.Skip("run with -fixture to regenerate the fixture receipt")
	}
	root := filepath.Join("testdata", "ledger")
	dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := writeFixture(dir, defaultFixtureRun()); err != nil {
		t.Fatal(err)
	}
}

// writeFixture writes a complete receipt for the synthetic run fr into dir.
func writeFixture(dir string, fr fixtureRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lanes := fr.lanes
	arms := []string{"base", "candA", "candB"}
	var laneNames []string
	plan := &receipt.Plan{
		Experiment: 1,
		Title:      "a fake lane, 20% faster in both candidates",
		Page:       "experiments/001-fake.md",
		Label:      fr.label,
		Profile:    fr.profile,
		Stamp:      fr.stamp,
		Command:    []string{"flipbench", "ab", "1"},
		Protocol:   fr.protocol,
		Drift:      driftcheck.DefaultConfig(),
	}
	for _, a := range arms {
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a, Bin: "fakelane", SHA256: fmt.Sprintf("%064x", len(a)),
			Source: "prebuilt fakelane", Kind: "exec",
			Command: []string{"{bin}", "-lane", "{lane}", "-samples", "{samples}", "-warmup", "{warmup}"}})
	}
	for _, l := range lanes {
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l.name, Role: l.role, Expect: l.expect})
		laneNames = append(laneNames, l.name)
	}
	plan.Runs = harness.Schedule(arms, laneNames, plan.Protocol.Collections, plan.Protocol.Passes, plan.Protocol.Seed, false)
	if err := receipt.Folder(dir).WritePlan(plan); err != nil {
		return err
	}

	byName := map[string]fixtureLane{}
	for _, l := range lanes {
		byName[l.name] = l
	}
	log, _, err := receipt.Folder(dir).OpenLog()
	if err != nil {
		return err
	}
	defer log.Close()
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	seed := uint64(7)
	next := func() float64 { // a small linear congruential generator in [-1, 1)
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11)/float64(1<<53)*2 - 1
	}
	for i, run := range plan.Runs {
		l := byName[run.Lane]
		factor, rss := 1.0, 10.0
		if run.Arm != "base" {
			factor, rss = l.factor[run.Arm], l.rssMiB[run.Arm]
		}
		drift := 1 + 0.004*float64(run.Pass) // slow host drift over a collection
		samples := make([]float64, plan.Protocol.Samples)
		for k := range samples {
			samples[k] = float64(int64(l.ns * factor * drift * (1 + 0.015*next())))
		}
		rec := receipt.Record{
			Collection: run.Collection, Pass: run.Pass, Order: run.Order, Position: run.Position, Arm: run.Arm, Lane: run.Lane,
			PID: 1000 + i, Samples: samples, Unit: "ns/op", MaxRSSBytes: int64(rss * (1 << 20)),
			Started: t0.Add(time.Duration(i) * time.Second), Ended: t0.Add(time.Duration(i)*time.Second + 800*time.Millisecond),
			Command: []string{"fakelane", "-lane", run.Lane, "-samples", fmt.Sprint(plan.Protocol.Samples), "-warmup", fmt.Sprint(plan.Protocol.Warmup)},
		}
		if fr.fail != nil && fr.fail(run) {
			// A crash early in the run: it prints nothing and its peak RSS is small.
			rec.Exit, rec.Samples, rec.Unit, rec.MaxRSSBytes = 2, nil, "", 1<<20
			rec.Error = "exit status 2"
			rec.StderrTail = "panic: fake crash\n"
		}
		if err := log.Append(rec); err != nil {
			return err
		}
	}
	env := receipt.Env{}
	for _, when := range []string{"before", "after"} {
		env.Snapshots = append(env.Snapshots, receipt.Snapshot{When: when, Collection: 1, Pass: 1, Time: t0,
			Hostname: "fixture-host", CPUModel: "Fixture CPU", CPUs: 2, Load1: 0.1, GoVersion: "go1.26.0"})
	}
	if err := receipt.Folder(dir).WriteEnv(env); err != nil {
		return err
	}
	_, err = pipeline.Finish(dir)
	return err
}
