package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// profilingStarter is the fake starter of a run that profiles: a process asked for a
// CPU profile ($FLIPBENCH_CPUPROFILE, as an exec lane is) writes one in which fake.step
// takes 10ms per operation times the arm's factor on the lane and fake.rest 10ms, unless
// the lane is in silent (it ignores the variable). Every command it starts is kept.
type profilingStarter struct {
	fakeStarter
	silent map[string]bool

	mu       sync.Mutex
	profiled []harness.Command
	measured int
}

func (f *profilingStarter) Start(ctx context.Context, c harness.Command) harness.Process {
	p := f.fakeStarter.Start(ctx, c)
	file := ""
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, lanekind.CPUProfileEnv+"="); ok {
			file = v
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if file == "" {
		f.measured++
		return p
	}
	f.profiled = append(f.profiled, c)
	arm, lane := argAfter(c.Argv, "-arm"), argAfter(c.Argv, "-lane")
	if f.silent[lane] {
		return p
	}
	factor := 1.0
	if v, ok := f.factor[arm+"/"+lane]; ok {
		factor = v
	}
	ops := int64(strings.Count(string(p.Stdout), "\n"))
	fns := []*profile.Function{{ID: 1, Name: "fake.step"}, {ID: 2, Name: "fake.rest"}, {ID: 3, Name: "main.main"}}
	locs := []*profile.Location{{ID: 1, Line: []profile.Line{{Function: fns[0]}}}, {ID: 2, Line: []profile.Line{{Function: fns[1]}}}, {ID: 3, Line: []profile.Line{{Function: fns[2]}}}}
	steps := int64(float64(ops) * factor)
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10e6,
		Function: fns, Location: locs,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[0], locs[2]}, Value: []int64{steps, steps * 10e6}},
			{Location: []*profile.Location{locs[1], locs[2]}, Value: []int64{ops, ops * 10e6}},
		},
	}
	out, err := os.Create(file)
	if err != nil {
		return harness.Process{Err: err}
	}
	defer out.Close()
	if err := prof.Write(out); err != nil {
		return harness.Process{Err: err}
	}
	return p
}

// argAfter returns the argument after flag in argv.
func argAfter(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// profileJob is a fixed-protocol experiment of three lanes: slow (the candidate takes
// twice the time), same (no change) and mute (the candidate takes twice the time, but the
// lane writes no profile).
func profileJob(t *testing.T, sel string) (Job, *profilingStarter) {
	t.Helper()
	page := []byte(`---
id: 8
title: profiled
date: 2026-12-02
status: planned
category: measurement
directions: [demo]
harness: {kind: exec, command: ["{bin}"]}
arms:
  base: {bin: fakelane}
  cand: {bin: fakelane}
protocol: {samples: 10, warmup: 0, collections: 2, passes: 4, seed: 8}
lanes:
  - {name: slow, role: primary}
  - {name: same, role: guard}
  - {name: mute, role: guard}
---
`)
	e, res := fakePage(t, "experiments/008-profiled.md", page)
	dir := t.TempDir()
	st := &profilingStarter{fakeStarter: fakeStarter{between: 0.002, within: 0.002, seed: 8,
		factor: map[string]float64{"cand/slow": 2, "cand/mute": 2}}, silent: map[string]bool{"mute": true}}
	return Job{Spec: e, Root: dir, Resolved: res, Label: "full", Results: dir, Build: fakeArms(t), ProfileLanes: sel}, st
}

func TestProfileReproducedLanes(t *testing.T) {
	job, st := profileJob(t, profdiff.SelectReproduced)
	res, err := Run(context.Background(), job, quietOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := receipt.ReadPlan(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if plan.ProfileLanes != profdiff.SelectReproduced {
		t.Errorf("plan's profile_lanes %q", plan.ProfileLanes)
	}
	// The measured runs are the plan's, and only they are in raw.jsonl.
	recs, err := receipt.ReadRecords(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(plan.Runs) || st.measured != len(plan.Runs) {
		t.Errorf("%d records, %d measured processes, %d planned runs", len(recs), st.measured, len(plan.Runs))
	}
	// Two reproduced lanes, one process per arm each: slow and mute, not same.
	if len(st.profiled) != 4 {
		t.Fatalf("%d profiled processes, want 4: %v", len(st.profiled), st.profiled)
	}
	for _, c := range st.profiled {
		if argAfter(c.Argv, "-lane") == "same" {
			t.Errorf("profiled the unchanged lane: %v", c.Argv)
		}
	}
	rep, err := profdiff.ReadReport(res.Dir)
	if err != nil || rep == nil {
		t.Fatalf("profiles.json: %v, %v", rep, err)
	}
	if len(rep.Lanes) != 2 || rep.Lanes[0].Lane != "slow" || rep.Lanes[1].Lane != "mute" {
		t.Fatalf("profiled lanes %+v", rep.Lanes)
	}
	slow := rep.Lanes[0]
	if slow.Verdict != "reproduced-slower" || len(slow.Diffs) != 1 || len(slow.Notes) != 0 {
		t.Fatalf("slow: %+v", slow)
	}
	d := slow.Diffs[0]
	if d.Kind != profdiff.CPU || d.BaseOps != 10 || d.CandOps != 10 {
		t.Errorf("diff %+v", d)
	}
	if len(d.Top) != 1 || d.Top[0].Function != "fake.step" || d.Top[0].Flat.Base != 10e6 || d.Top[0].Flat.Cand != 20e6 {
		t.Errorf("top %+v, want fake.step from 10ms/op to 20ms/op", d.Top)
	}
	for _, r := range slow.Runs {
		if _, err := os.Stat(filepath.Join(res.Dir, r.File)); err != nil || r.Operations != 10 || r.Error != "" {
			t.Errorf("run %+v: %v", r, err)
		}
		if len(r.Env) != 1 || !strings.HasPrefix(r.Env[0], lanekind.CPUProfileEnv+"=") {
			t.Errorf("run's added env %v", r.Env)
		}
	}
	mute := rep.Lanes[1]
	if len(mute.Diffs) != 0 || len(mute.Notes) != 1 || !strings.Contains(mute.Notes[0], "wrote no cpu profile") {
		t.Errorf("mute: %+v", mute)
	}
	// The profiles, the report and the chart are in the manifest; the page shows them.
	m, err := receipt.ReadManifest(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{receipt.ProfilesFile, "profiles/base-slow.cpu.pprof", "profiles/cand-slow.cpu.pprof", profdiff.PlotName("cand", "slow", profdiff.CPU)} {
		if m.Files[name] == "" {
			t.Errorf("manifest lacks %s", name)
		}
	}
	page, err := os.ReadFile(res.Page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Profiles", "### slow, cand vs base (reproduced-slower)", "`fake.step`", "wrote no cpu profile"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("receipt page lacks %q", want)
		}
	}
	// Finishing again changes nothing: the receipt is not profiled twice.
	n := len(st.profiled)
	if _, err := Resume(context.Background(), res.Dir, job, quietOptions(st)); err != nil {
		t.Fatal(err)
	}
	if len(st.profiled) != n {
		t.Errorf("a resume of a finished receipt profiled %d more processes", len(st.profiled)-n)
	}
}

func TestProfileSelections(t *testing.T) {
	for _, tc := range []struct {
		sel   string
		lanes int // profiled lanes
	}{
		{profdiff.SelectAll, 3},
		{profdiff.SelectNone, 0},
		{"", 0},
	} {
		t.Run(tc.sel, func(t *testing.T) {
			job, st := profileJob(t, tc.sel)
			res, err := Run(context.Background(), job, quietOptions(st))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := profdiff.ReadReport(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if rep != nil {
				got = len(rep.Lanes)
			}
			if got != tc.lanes || len(st.profiled) != 2*tc.lanes {
				t.Errorf("%d lanes profiled in %d processes, want %d", got, len(st.profiled), tc.lanes)
			}
			plan, err := receipt.ReadPlan(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.sel; (want == profdiff.SelectNone && plan.ProfileLanes != "") || (want != profdiff.SelectNone && plan.ProfileLanes != want) {
				t.Errorf("plan's profile_lanes %q", plan.ProfileLanes)
			}
		})
	}
}
