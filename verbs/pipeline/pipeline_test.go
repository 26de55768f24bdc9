package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/gate"
)

// fakeStarter runs no process: it answers each lane run with benchmark lines drawn from a
// model of a shared machine. A run's value is 1e6 ns x its arm's factor on its lane, times
// exp(between x Z) for the process and (1 + within x Z) per sample, seeded by the run's
// number, so a trial is the same every time.
type fakeStarter struct {
	between, within float64
	factor          map[string]float64 // "arm/lane" -> factor
	seed            uint64
	// disturbed are the processes (1-based, in start order) a neighbour's burst
	// disturbs: twice as slow, with 20% noise within.
	disturbed map[uint64]bool
	// failed are the processes (1-based, in start order) that crash: exit 2, no output.
	failed map[uint64]bool

	mu sync.Mutex
	n  uint64
}

func (f *fakeStarter) Start(ctx context.Context, c harness.Command) harness.Process {
	argv := c.Argv
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	lane := fs.String("lane", "", "")
	samples := fs.Int("samples", 1, "")
	arm := fs.String("arm", "", "")
	if err := fs.Parse(argv[1:]); err != nil {
		return harness.Process{Err: err}
	}
	if f.failed[n] {
		now := time.Unix(1e9+int64(n), 0)
		return harness.Process{PID: int(n), Exit: 2, StderrTail: "panic: flaky", Started: now, Ended: now.Add(time.Millisecond), Err: errors.New("exited with status 2")}
	}
	rng := rand.New(rand.NewPCG(f.seed, n))
	level := math.Exp(f.between * rng.NormFloat64())
	factor := 1.0
	if v, ok := f.factor[*arm+"/"+*lane]; ok {
		factor = v
	}
	within := f.within
	if f.disturbed[n] {
		factor, within = 2*factor, 0.2
	}
	var b strings.Builder
	for range *samples {
		v := 1e6 * factor * level * (1 + within*rng.NormFloat64())
		fmt.Fprintf(&b, "Benchmark%s 1 %s ns/op\n", *lane, strconv.FormatFloat(math.Max(v, 1), 'f', 1, 64))
	}
	now := time.Unix(1e9+int64(n), 0)
	return harness.Process{PID: int(n), Stdout: []byte(b.String()), Started: now, Ended: now.Add(100 * time.Millisecond)}
}

// fakeArms returns a Job.Build that "builds" prebuilt arms of one fake binary.
func fakeArms(t testing.TB) func(context.Context, *spec.Experiment, armbuild.Options) ([]receipt.Arm, error) {
	bin := filepath.Join(t.TempDir(), "fakelane")
	if err := os.WriteFile(bin, []byte("fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := receipt.HashFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return func(_ context.Context, e *spec.Experiment, _ armbuild.Options) ([]receipt.Arm, error) {
		var arms []receipt.Arm
		for _, a := range e.Arms {
			arms = append(arms, receipt.Arm{Name: a.Name, Bin: bin, SHA256: sum, Source: "prebuilt", Kind: "exec",
				Command: []string{"{bin}", "-lane", "{lane}", "-samples", "{samples}", "-arm", "{arm}"}})
		}
		return arms, nil
	}
}

// quietOptions are the pipeline options of a test: the fake starter, no lock, no host.
func quietOptions(st harness.Starter) Options {
	return Options{Starter: st,
		Capture: func(when string, c, p int, now time.Time, dir string) receipt.Snapshot {
			return receipt.Snapshot{When: when, Collection: c, Pass: p, Time: now}
		},
		Others: func() func() float64 { return func() float64 { return 0 } },
	}
}

// fakePage parses and resolves an experiment page of a test.
func fakePage(t testing.TB, path string, page []byte) (*spec.Experiment, spec.Resolved) {
	t.Helper()
	e, err := spec.Parse(path, page)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Resolve(spec.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return e, res
}

// gateJob is a gate over two guard lanes, sequential with the gate's default rule.
func gateJob(t testing.TB, dir string, build func(context.Context, *spec.Experiment, armbuild.Options) ([]receipt.Arm, error)) (Job, float64) {
	g, err := spec.ParseGate("gate.yaml", []byte("harness: {kind: exec, command: [\"{bin}\"], build: [sh, build.sh, \"{out}\"]}\nlanes: [{name: alpha}, {name: beta}]\nprotocol: {samples: 10, warmup: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := g.Experiment("base", "cand")
	res, err := e.Resolve(spec.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	th := g.Threshold()
	return Job{Spec: e, Root: dir, Resolved: res, Label: "gate", Results: dir, Build: build,
		Pending: func(rep driftcheck.Report) []string { return gate.Pending(rep, gate.Rule{ThresholdPct: th}) }}, th
}

// runGate runs one gate trial and returns its outcome and the pairs it used.
func runGate(t testing.TB, st *fakeStarter, build func(context.Context, *spec.Experiment, armbuild.Options) ([]receipt.Arm, error)) (gate.Outcome, int) {
	dir := t.TempDir()
	job, th := gateJob(t, dir, build)
	res, err := Run(context.Background(), job, quietOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	var rep driftcheck.Report
	if err := receipt.ReadJSON(filepath.Join(res.Dir, receipt.AnalysisFile), &rep); err != nil {
		t.Fatal(err)
	}
	recs, err := receipt.ReadRecords(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return gate.Evaluate(rep, recs, gate.Rule{ThresholdPct: th}).Outcome, res.Looks[len(res.Looks)-1].Round
}

// TestGateTrials runs the whole pipeline, without processes, for 100 seeded gate runs of
// a no-op and 100 of a 20% regression, on a machine with 5% noise between processes and
// 5% within: the no-op must pass (exit 0) in at least 95 and fail (exit 3) in no more
// than the gate's stated 2.5% (1 of these 100 seeds does, a regression of both
// collections at +8% by chance); the regression must fail in at least 95.
func TestGateTrials(t *testing.T) {
	trials := 100
	if testing.Short() {
		trials = 20
	}
	build := fakeArms(t)
	count := func(factor map[string]float64) (map[gate.Outcome]int, float64) {
		out := map[gate.Outcome]int{}
		pairs := 0
		for i := range trials {
			o, p := runGate(t, &fakeStarter{between: 0.05, within: 0.05, factor: factor, seed: uint64(1000 + i)}, build)
			out[o]++
			pairs += p
		}
		return out, float64(pairs) / float64(trials)
	}
	noop, noopPairs := count(nil)
	t.Logf("no-op: %v, mean %.1f rounds", noop, noopPairs)
	if noop[gate.Pass] < trials*95/100 || noop[gate.Regression] > trials*25/1000 {
		t.Errorf("no-op: %v in %d runs, want pass in at least 95%% and a regression in at most 2.5%%", noop, trials)
	}
	slow, slowPairs := count(map[string]float64{"cand/alpha": 1.2})
	t.Logf("20%% regression: %v, mean %.1f rounds", slow, slowPairs)
	if slow[gate.Regression] < trials*95/100 {
		t.Errorf("20%% regression: %v in %d runs, want regression in at least 95%%", slow, trials)
	}
}

// TestRunAndResume runs a sequential experiment through the pipeline with the fake
// starter, cuts it short, resumes it, and checks that the resumed receipt has the same
// looks as an uninterrupted one, with every run once.
func TestRunAndResume(t *testing.T) {
	page := []byte(`---
id: 7
title: fake
date: 2026-12-01
status: planned
category: measurement
directions: [demo]
harness: {kind: exec, command: ["{bin}"]}
arms:
  base: {bin: fakelane}
  cand: {bin: fakelane}
protocol: {samples: 8, warmup: 0, collections: 2, sequential: {min-pairs: 2, max-pairs: 5}}
lanes:
  - {name: fast, role: primary}
  - {name: noisy, role: guard}
---
`)
	e, res := fakePage(t, "experiments/007-fake.md", page)
	build := fakeArms(t)
	starter := func() *fakeStarter {
		return &fakeStarter{between: 0.01, within: 0.01, factor: map[string]float64{"cand/fast": 0.7}, seed: 7}
	}
	job := func(dir string) Job {
		return Job{Spec: e, Root: dir, Resolved: res, Label: "full", Results: dir, Build: build}
	}
	whole, err := Run(context.Background(), job(t.TempDir()), quietOptions(starter()))
	if err != nil {
		t.Fatal(err)
	}
	// noisy's factor: the guard gets 30% noise through a second starter model per lane.
	if len(whole.Looks) == 0 || whole.Looks[len(whole.Looks)-1].Stop == "" {
		t.Fatalf("looks %+v: want a stop", whole.Looks)
	}

	// The same run, cancelled after 9 runs, then resumed.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st := &cancelAfter{fakeStarter: starter(), after: 9, cancel: cancel}
	if _, err := Run(ctx, job(dir), quietOptions(st)); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cut-short run: %v, want ErrInterrupted", err)
	}
	folders, _ := filepath.Glob(filepath.Join(dir, "*-exp007-full"))
	if len(folders) != 1 {
		t.Fatalf("receipt folders %v", folders)
	}
	// The resumed processes draw the noise the whole run's did from the 9th on, so both
	// runs measure the same data and take the same looks.
	resumed, err := Resume(context.Background(), folders[0], job(dir), quietOptions(st.fakeStarter))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(stops(resumed.Looks)) != fmt.Sprint(stops(whole.Looks)) {
		t.Errorf("resumed looks %v, whole %v", stops(resumed.Looks), stops(whole.Looks))
	}
	if resumed.Outcome.Ran+resumed.Outcome.Resumed != whole.Outcome.Ran {
		t.Errorf("resumed %d+%d runs, whole %d", resumed.Outcome.Ran, resumed.Outcome.Resumed, whole.Outcome.Ran)
	}
	if _, err := os.Stat(resumed.Page); err != nil {
		t.Errorf("no receipt page: %v", err)
	}
	// The result carries the receipt its page was rendered from: the analysis written to
	// analysis.json, which Open verifies against one recomputed from the data.
	for name, r := range map[string]*Result{"whole": whole, "resumed": resumed} {
		if r.Receipt == nil || r.Receipt.Dir != r.Dir || len(r.Receipt.Records) != r.Outcome.Ran+r.Outcome.Resumed {
			t.Fatalf("%s: Result.Receipt %+v, want the receipt of %s", name, r.Receipt, r.Dir)
		}
		opened, err := loaded.Open(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := loaded.AnalysisDiff(opened.Analysis, r.Receipt.Analysis); diff != "" {
			t.Errorf("%s: Result.Receipt's analysis is not the receipt's: %s", name, diff)
		}
	}
}

// stops summarises looks: round, pending lanes and stop reason.
func stops(ls []receipt.Look) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%d %v %s", l.Round, l.Pending, l.Stop))
	}
	return out
}

// cancelAfter cancels the run's context when its after-th process starts: an interrupt in
// the middle of a run.
type cancelAfter struct {
	*fakeStarter
	after  int
	cancel context.CancelFunc
	n      int
}

func (c *cancelAfter) Start(ctx context.Context, cmd harness.Command) harness.Process {
	c.n++
	if c.n == c.after {
		c.cancel()
		return harness.Process{Err: context.Canceled}
	}
	return c.fakeStarter.Start(ctx, cmd)
}

// TestMain puts the tests' receipts in memory where the machine has a tmpfs: the gate
// trials fsync tens of thousands of runs, which a disk makes slow and says nothing about.
func TestMain(m *testing.M) {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "flipbench-pipeline-test-"); err == nil {
			os.Setenv("TMPDIR", dir)
			code := m.Run()
			os.RemoveAll(dir)
			os.Exit(code)
		}
	}
	os.Exit(m.Run())
}
