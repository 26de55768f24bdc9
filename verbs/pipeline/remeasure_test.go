package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// TestRemeasureSetAside disturbs one process of round 1: round 1's mend sets its run aside
// and measures its lane's pass again before the look (every arm, back to back, in round
// 1); raw.jsonl keeps both attempts, the look and the analysis read the second and name
// the first as set aside and measured again, and a run cut short during the mend and
// resumed replays the same looks.
func TestRemeasureSetAside(t *testing.T) {
	e, res := remeasurePage(t)
	starter := func() *fakeStarter {
		return &fakeStarter{between: 0.01, within: 0.01, factor: map[string]float64{"cand/fast": 0.7}, seed: 8,
			disturbed: map[uint64]bool{3: true}}
	}
	job := func(dir string) Job {
		return Job{Spec: e, Root: dir, Resolved: res, Label: "full", Results: dir, Build: fakeArms(t)}
	}
	whole, err := Run(context.Background(), job(t.TempDir()), quietOptions(starter()))
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Looks) < 2 || len(whole.Looks[0].Remeasure) != 1 {
		t.Fatalf("looks %+v: want one pass measured again before round 1's look", whole.Looks)
	}
	m := whole.Looks[0].Remeasure[0]
	if m.Attempt != 1 || m.CVPct < 8 {
		t.Errorf("re-measure %+v: want attempt 1 of a run with a CV above 8%%", m)
	}
	recs, err := receipt.ReadRecords(whole.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var again []receipt.Record
	for _, r := range recs {
		if r.Attempt > 0 {
			again = append(again, r)
		}
	}
	if len(again) != 2 || again[0].Round != 1 || again[0].Lane != m.Lane || again[0].Pass != m.Pass || again[0].Collection != m.Collection {
		t.Fatalf("re-measured records %+v: want both arms of %+v, measured in round 1", again, m)
	}
	if again[0].Order != again[1].Order || again[0].Position == again[1].Position {
		t.Errorf("re-measured records %+v: want the plan's order and positions", again)
	}
	d, err := loaded.Open(whole.Dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := d.Analysis
	var named bool
	for _, a := range rep.SetAside {
		named = named || a.Remeasured && a.Lane == m.Lane && a.Pass == m.Pass && a.Attempt == 0
	}
	if !named {
		t.Errorf("set aside %+v: want the disturbed run named as measured again", rep.SetAside)
	}
	text, err := os.ReadFile(whole.Page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "### Runs set aside") || !strings.Contains(string(text), "pass measured again") {
		t.Errorf("receipt page: want the runs set aside named, with their pass measured again")
	}
	for _, p := range rep.Pairs {
		if p.Lane == m.Lane && p.Collection == m.Collection && p.Pair == receipt.Round(m.Pass) && p.SetAside {
			t.Errorf("pair %+v: set aside, although its pass was measured again", p)
		}
	}

	// The same run cut short inside round 1's mend, then resumed.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st := &cancelAfter{fakeStarter: starter(), after: 16 + 1, cancel: cancel}
	if _, err := Run(ctx, job(dir), quietOptions(st)); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cut-short run: %v, want ErrInterrupted", err)
	}
	folders, _ := filepath.Glob(filepath.Join(dir, "*-exp008-full"))
	if len(folders) != 1 {
		t.Fatalf("receipt folders %v", folders)
	}
	resumed, err := Resume(context.Background(), folders[0], job(dir), quietOptions(&fakeStarter{between: 0.01, within: 0.01, factor: map[string]float64{"cand/fast": 0.7}, seed: 9}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(remeasures(resumed.Looks[:1])), fmt.Sprint(remeasures(whole.Looks[:1])); got != want {
		t.Errorf("resumed re-measures %s, whole %s", got, want)
	}
	recs, err = receipt.ReadRecords(resumed.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Attempt == 1 && r.Lane == m.Lane && r.Collection == m.Collection && r.Pass == m.Pass {
			n++
		}
	}
	if n != 2 {
		t.Errorf("resumed run: %d records of the pass measured again, want its 2 arms once each", n)
	}
}

// remeasures lists each look's re-measured passes.
func remeasures(ls []receipt.Look) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%d %+v", l.Round, l.Remeasure))
	}
	return out
}

// TestRemeasureFailed crashes one process of round 1: round 1's mend measures its lane's
// pass again before the look, like a contaminated one, so one flaky
// process does not cost the pair; the analysis reads the second measurement and names the
// crashed run as measured again, and the receipt page lists it.
func TestRemeasureFailed(t *testing.T) {
	e, res := remeasurePage(t)
	st := &fakeStarter{between: 0.01, within: 0.01, factor: map[string]float64{"cand/fast": 0.7}, seed: 8, failed: map[uint64]bool{3: true}}
	out, err := Run(context.Background(), Job{Spec: e, Root: t.TempDir(), Resolved: res, Label: "full", Results: t.TempDir(), Build: fakeArms(t)}, quietOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Looks) < 2 || len(out.Looks[0].Remeasure) != 1 || out.Looks[0].Remeasure[0].Failed == "" {
		t.Fatalf("looks %+v: want the crashed run's pass measured again before round 1's look", out.Looks)
	}
	m := out.Looks[0].Remeasure[0]
	recs, err := receipt.ReadRecords(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var crashed receipt.Record
	again := 0
	for _, r := range recs {
		if !r.OK() {
			crashed = r
		}
		if r.Attempt == 1 && r.Round == 1 && r.Lane == m.Lane && r.Pass == m.Pass && r.Collection == m.Collection {
			again++
		}
	}
	if crashed.Lane != m.Lane || crashed.Pass != m.Pass || crashed.Arm != m.Arm || again != 2 {
		t.Fatalf("crashed %+v, %d runs measured again: want both arms of %+v in round 1", crashed, again, m)
	}
	d, err := loaded.Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	u := d.Analysis.Unfinished
	if len(u) != 1 || !u[0].Remeasured || u[0].Error != "exited with status 2" {
		t.Errorf("unfinished %+v: want the crashed run, measured again", u)
	}
	for _, p := range d.Analysis.Pairs {
		if p.Lane == m.Lane && p.Collection == m.Collection && p.Pair == receipt.Round(m.Pass) && (p.Verdict == "insufficient" || p.Attempt1+p.Attempt2 != 1) {
			t.Errorf("pair %+v: want the second measurement of the pass analysed", p)
		}
	}
	text, err := os.ReadFile(out.Page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "### Runs without samples") || !strings.Contains(string(text), "exited with status 2 | its lane's pass was measured again") {
		t.Errorf("receipt page: want the crashed run listed as measured again")
	}
}

// remeasurePage is the re-measure tests' experiment: a primary 30% faster and a guard,
// three rounds of ten samples.
func remeasurePage(t *testing.T) (*spec.Experiment, spec.Resolved) {
	t.Helper()
	return fakePage(t, "experiments/008-fake.md", []byte(`---
id: 8
title: fake
date: 2026-12-03
status: planned
category: measurement
directions: [demo]
harness: {kind: exec, command: ["{bin}"]}
arms:
  base: {bin: fakelane}
  cand: {bin: fakelane}
protocol: {samples: 10, warmup: 0, collections: 2, sequential: {min-pairs: 3, max-pairs: 3}}
lanes:
  - {name: fast, role: primary, expect: faster}
  - {name: even, role: guard}
---
`))
}
