package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/receipt"
)

var leftoverRuns = flag.Int("leftover-runs", 2, "flipbench runs of TestLeftoverChildren (the issue's count is 10)")

// TestLeftoverChildren runs flipbench ab -leftover-runs times on an experiment of 4 lane
// processes, each of which leaves two children when it exits: one in a session of its own
// (setsid) and one that also cleared its environment (env -i setsid -f), so it carries no
// mark. Once each run has exited, none of its children may still run, and each must be
// recorded in the receipt's raw.jsonl (leftover, with the mechanism that found it). It
// runs once with the subreaper alone (FLIPBENCH_CGROUP=off) and once with whatever this
// machine allows (a cgroup per lane where cgroup v2 is writable).
func TestLeftoverChildren(t *testing.T) {
	for _, c := range []struct{ name, cgroup, want string }{{"subreaper", "off", "subreaper"}, {"default", "", ""}} {
		t.Run(c.name, func(t *testing.T) { testLeftoverChildren(t, c.cgroup, c.want) })
	}
}

func testLeftoverChildren(t *testing.T, cgroup, want string) {
	flipbench, err := exec.LookPath("flipbench")
	if err != nil {
		t.Fatalf("flipbench (the test binary, set up by testscript.Main): %v", err)
	}
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "experiments"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := `---
id: 1
title: lanes that leave children behind
date: 2026-12-02
status: planned
category: measurement
directions: [demo]
harness: {kind: exec, command: ["{bin}", "-lane", "{lane}", "-samples", "{samples}", "-warmup", "{warmup}"]}
arms:
  base: {bin: fakelane}
  cand: {bin: fakelane}
protocol: {samples: 3, warmup: 0, passes: 2, collections: 1, seed: 1}
lanes:
  - {name: alpha, role: primary}
---
`
	if err := os.WriteFile(filepath.Join(work, "experiments", "001-spawn.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(work, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "FAKE_") && k != "TMPDIR" && k != "FLIPBENCH_LOCK" && k != owner.NoCgroupEnv {
			env = append(env, kv)
		}
	}
	spawned, bare := filepath.Join(work, "spawned"), filepath.Join(work, "bare")
	env = append(env, "TMPDIR="+tmp, "FLIPBENCH_LOCK="+filepath.Join(work, "lock"), "FAKE_SPAWN="+spawned, "FAKE_SPAWN_BARE="+bare)
	if cgroup != "" {
		env = append(env, owner.NoCgroupEnv+"="+cgroup)
	}

	children, outlived, recorded := 0, 0, 0
	reapers := map[string]int{}
	for run := 1; run <= *leftoverRuns; run++ {
		had, hadBare := len(lines(spawned)), len(lines(bare))
		label := fmt.Sprintf("run%d", run)
		cmd := exec.Command(flipbench, "ab", "1", "--label", label)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		}
		// The run has exited: its children must be gone already, not dying.
		pids := append(lines(spawned)[had:], lines(bare)[hadBare:]...)
		if len(pids) != 8 {
			t.Fatalf("run %d: %d children, want 8 (2 from each of 4 lane processes)", run, len(pids))
		}
		matches, _ := filepath.Glob(filepath.Join(work, "results", "*-"+label))
		if len(matches) != 1 {
			t.Fatalf("run %d: receipt folders %v", run, matches)
		}
		recs, err := receipt.ReadRecords(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 4 {
			t.Fatalf("run %d: %d records, want 4", run, len(recs))
		}
		left := map[string]bool{}
		for _, r := range recs {
			reapers[r.Reaper]++
			for _, l := range r.Leftover {
				pid, _, _ := strings.Cut(strings.TrimPrefix(l, "pid "), ":")
				left[pid] = true
			}
		}
		for _, pid := range pids {
			children++
			if running(pid) {
				outlived++
				t.Errorf("run %d: child %s still runs after the run exited", run, pid)
				if p, err := os.FindProcess(atoi(pid)); err == nil {
					p.Kill()
				}
			}
			if left[pid] {
				recorded++
			} else {
				t.Errorf("run %d: child %s is not recorded in the receipt's leftover", run, pid)
			}
		}
	}
	t.Logf("%d runs of 4 lane processes: %d of %d children outlived their runs, %d of %d recorded in the receipt; mechanism per record: %v",
		*leftoverRuns, outlived, children, recorded, children, reapers)
	for m := range reapers {
		if want != "" && m != want || m != "subreaper" && m != "cgroup+subreaper" {
			t.Errorf("a record says %q found its leftovers, want the subreaper", m)
		}
	}
}

// lines returns the non-empty lines of a file (none when it does not exist).
func lines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// running reports whether process pid runs (a zombie does not).
func running(pid string) bool {
	st, err := os.ReadFile("/proc/" + pid + "/stat")
	i := bytes.LastIndexByte(st, ')')
	return err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X'
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}
