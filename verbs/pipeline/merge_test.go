package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestAssignPairs checks the deal of pass pairs to shards: every pair of the stage to
// exactly one shard, as many pairs to each as to another or one fewer, each collection's
// pairs spread over the shards, the schedule's order within a shard, and the same deal
// every time from the same seed.
func TestAssignPairs(t *testing.T) {
	tests := []struct {
		name                          string
		collections, passes, from, to int
		count                         int
		sequential                    bool
	}{
		{name: "two shards of 2x2", collections: 2, passes: 4, from: 1, to: 2, count: 2},
		{name: "three shards of 2x4", collections: 2, passes: 8, from: 1, to: 4, count: 3},
		{name: "one shard", collections: 3, passes: 6, from: 1, to: 3, count: 1},
		{name: "a shard a pair", collections: 2, passes: 6, from: 1, to: 3, count: 6},
		{name: "more shards than pairs", collections: 2, passes: 4, from: 2, to: 2, count: 3},
		{name: "a later sequential round", collections: 2, passes: 12, from: 4, to: 5, count: 2, sequential: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &receipt.Plan{Protocol: receipt.Protocol{Collections: tt.collections, Passes: tt.passes, Seed: 42}}
			plan.Runs = harness.Schedule([]string{"base", "cand"}, []string{"a", "b"}, tt.collections, tt.passes, 42, false)
			if tt.sequential {
				plan.Runs = harness.InRounds(plan.Runs)
			}
			deal := AssignPairs(plan, tt.from, tt.to, tt.count)
			if again := AssignPairs(plan, tt.from, tt.to, tt.count); fmt.Sprint(again) != fmt.Sprint(deal) {
				t.Fatalf("two deals differ: %v and %v", deal, again)
			}
			if len(deal) != tt.count {
				t.Fatalf("%d shards dealt, want %d", len(deal), tt.count)
			}
			seen := map[receipt.Pair]int{}
			total := tt.collections * (tt.to - tt.from + 1)
			for i, pairs := range deal {
				if n := len(pairs); n < total/tt.count || n > (total+tt.count-1)/tt.count {
					t.Errorf("shard %d has %d of %d pairs over %d shards", i+1, n, total, tt.count)
				}
				// The schedule's order: each pair's first run comes after the one before.
				last := -1
				for _, p := range pairs {
					seen[p]++
					at := slices.IndexFunc(plan.Runs, func(r receipt.Run) bool { return receipt.PairOf(r.Collection, r.Pass) == p })
					if at < last {
						t.Errorf("shard %d: %v out of the schedule's order %v", i+1, p, pairs)
					}
					last = at
				}
				// A collection's pairs spread: no shard holds two of one collection
				// while another shard holds none of it.
				perColl := map[int]int{}
				for _, p := range pairs {
					perColl[p.Collection]++
				}
				for c, n := range perColl {
					if n > (tt.to-tt.from+1+tt.count-1)/tt.count {
						t.Errorf("shard %d holds %d pairs of collection %d (%v)", i+1, n, c, pairs)
					}
				}
			}
			for c := 1; c <= tt.collections; c++ {
				for k := tt.from; k <= tt.to; k++ {
					if n := seen[receipt.Pair{Collection: c, Round: k}]; n != 1 {
						t.Errorf("collection %d pair %d dealt %d times", c, k, n)
					}
				}
			}
			if len(seen) != total {
				t.Errorf("%d pairs dealt, the stage has %d", len(seen), total)
			}
		})
	}
}

// TestDiffPlans changes one thing at a time in a plan and checks that DiffPlans names it,
// and that what differs between machines (binary paths, stamps, command lines, the
// shard) is not a difference.
func TestDiffPlans(t *testing.T) {
	base := func() *receipt.Plan {
		p := &receipt.Plan{Experiment: 7, Page: "experiments/007-fake.md", Label: "full", Stamp: "s1", Command: []string{"flipbench", "ab", "7"},
			Protocol: receipt.Protocol{Samples: 8, Passes: 4, Collections: 2, Seed: 3},
			Arms:     []receipt.Arm{{Name: "base", Bin: "/a/fake", SHA256: "aa", Command: []string{"{bin}"}}, {Name: "cand", Bin: "/a/fake", SHA256: "bb", Command: []string{"{bin}"}}},
			Lanes:    []receipt.Lane{{Name: "fast", Role: "primary"}, {Name: "quiet", Role: "control"}}}
		p.Runs = harness.Schedule([]string{"base", "cand"}, []string{"fast", "quiet"}, 2, 4, 3, false)
		return p
	}
	tests := []struct {
		name string
		edit func(*receipt.Plan)
		want string // "" means no difference
	}{
		{name: "another machine", edit: func(p *receipt.Plan) {
			p.Stamp, p.Command = "s2", []string{"flipbench", "ab", "7", "--shard", "2/2"}
			p.Arms[0].Bin, p.Arms[1].Bin, p.Arms[1].Dir = "/b/fake", "/b/fake", "/b"
			p.Shard = &receipt.Shard{Index: 2, Count: 2}
		}},
		{name: "protocols", edit: func(p *receipt.Plan) { p.Protocol.Sequential = &receipt.Sequential{MinPairs: 2, MaxPairs: 2} },
			want: "protocol: fixed, 8 samples, 0 warmup, 4 passes, 2 collections, timeout 0s | sequential (pairs 2 to 2, budget 0s), 8 samples"},
		{name: "samples", edit: func(p *receipt.Plan) { p.Protocol.Samples = 9 }, want: "protocol: fixed, 8 samples"},
		{name: "seed", edit: func(p *receipt.Plan) { p.Protocol.Seed = 4 }, want: "seed: 3 | 4"},
		{name: "binary", edit: func(p *receipt.Plan) { p.Arms[1].SHA256 = "cc" }, want: "arm cand's binary: sha256 bb | sha256 cc"},
		{name: "arm env", edit: func(p *receipt.Plan) { p.Arms[1].Env = []string{"X=1"} }, want: "arm cand: "},
		{name: "arms", edit: func(p *receipt.Plan) { p.Arms[1].Name = "other" }, want: "arms: base,cand | base,other"},
		{name: "lanes", edit: func(p *receipt.Plan) { p.Lanes = p.Lanes[:1] }, want: "lanes: fast,quiet | fast"},
		{name: "a lane's role", edit: func(p *receipt.Plan) { p.Lanes[1].Role = "guard" }, want: "lane quiet: "},
		{name: "profile", edit: func(p *receipt.Plan) { p.Profile = "quick" }, want: `profile: "" | quick`},
		{name: "experiment", edit: func(p *receipt.Plan) { p.Experiment = 8 }, want: "experiment: 7 | 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base()
			tt.edit(b)
			d := DiffPlans(base(), b)
			switch {
			case tt.want == "" && d != nil:
				t.Fatalf("difference %+v, want none", *d)
			case tt.want != "" && d == nil:
				t.Fatalf("no difference, want %q", tt.want)
			case tt.want != "":
				got := d.What + ": " + d.A + " | " + d.B
				if !strings.HasPrefix(got, tt.want) {
					t.Fatalf("difference %q, want it to start %q", got, tt.want)
				}
			}
		})
	}
}

// shardJob is a fixed-protocol fake experiment, one shard of it.
func shardJob(t *testing.T, dir string, index, count int) Job {
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
protocol: {samples: 4, warmup: 0, passes: 4, collections: 2, seed: 9}
lanes:
  - {name: fast, role: primary}
---
`)
	e, res := fakePage(t, "experiments/007-fake.md", page)
	return Job{Spec: e, Root: dir, Resolved: res, Label: "full", Results: dir, Build: fakeArms(t),
		Shard: &ShardRequest{Index: index, Count: count}}
}

// hostOptions are quietOptions whose host snapshots name host(pass).
func hostOptions(host func(pass int) string) Options {
	o := quietOptions(&fakeStarter{between: 0.01, within: 0.01, seed: 1})
	o.Capture = func(when string, c, p int, now time.Time, dir string) receipt.Snapshot {
		return receipt.Snapshot{When: when, Collection: c, Pass: p, Time: now, Hostname: host(p), CPUModel: "fake cpu", CPUs: 2}
	}
	return o
}

// TestMergeHosts merges two shards measured on two machines, then refuses a shard one of
// whose pass pairs ran its two passes on different machines, naming both.
func TestMergeHosts(t *testing.T) {
	dir := t.TempDir()
	run := func(index int, host func(int) string) string {
		res, err := Run(context.Background(), shardJob(t, dir, index, 2), hostOptions(host))
		if err != nil {
			t.Fatal(err)
		}
		return res.Dir
	}
	one := run(1, func(int) string { return "machine-a" })
	two := run(2, func(int) string { return "machine-b" })
	res, err := Merge(MergeJob{Dirs: []string{two, one}, Results: filepath.Join(dir, "merged")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 2 || res.Sources[0].Hosts[0] != "machine-a: fake cpu, 2 CPUs, kernel , " || res.Sources[1].Hosts[0] != "machine-b: fake cpu, 2 CPUs, kernel , " {
		t.Errorf("sources %+v: want shard 1 on machine-a, shard 2 on machine-b", res.Sources)
	}
	if res.Sources[0].Runs+res.Sources[1].Runs != 16 || len(res.Missing) != 0 {
		t.Errorf("merged %d+%d runs, missing %v: want all 16", res.Sources[0].Runs, res.Sources[1].Runs, res.Missing)
	}

	// Shard 2 again, its reverse passes on another machine (a resume elsewhere).
	split := run(2, func(p int) string { return map[bool]string{true: "machine-b", false: "machine-c"}[p%2 == 1] })
	_, err = Merge(MergeJob{Dirs: []string{one, split}, Results: filepath.Join(dir, "merged")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "ran on 2 hosts (machine-b: fake cpu, 2 CPUs, kernel , ; machine-c: fake cpu, 2 CPUs, kernel , ); a pass pair compares its two orders on one machine: run shard 2/2 again on one") {
		t.Fatalf("merge of a pair on two hosts: %v", err)
	}
}
