package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/calibrate"
)

func TestCheck(t *testing.T) {
	e := &spec.Experiment{ID: 7, Arms: []spec.Arm{{Name: "base"}, {Name: "cand"}},
		Lanes: []spec.Lane{{Name: "quiet", Role: spec.RolePrimary}, {Name: "noisy", Role: spec.RoleGuard}, {Name: "other", Role: spec.RoleControl}}}
	res := spec.Resolved{Protocol: spec.Protocol{Samples: 10, Passes: 4, Collections: 2}, Drift: driftcheck.DefaultConfig(), Lanes: e.Lanes}
	cal := &calibrate.File{Lanes: []calibrate.Lane{
		{Experiment: 7, Lane: "quiet", BetweenPct: 0.2, WithinCVPct: 0.5, Samples: 10, RunTime: time.Second},
		{Experiment: 7, Lane: "noisy", BetweenPct: 15, WithinCVPct: 5, Samples: 10, RunTime: time.Second},
	}}
	busy := Host{Snapshot: receipt.Snapshot{CPUs: 1, SwapUsedBytes: 64 << 20, DiskFreeBytes: 100 << 20}, OthersPct: 60,
		Placement: "every lane process pinned to CPU 1", SchedstatErr: errEx}
	got := Check(Input{Spec: e, Resolved: res, Host: busy, Calibration: cal})
	want := []string{
		"warn host: other processes use 60% of the CPU now",
		"ok placement: every lane process pinned to CPU 1",
		"warn interference: the kernel's per-thread run-queue counts cannot be read",
		"warn host: 1 CPU",
		"warn host: 64 MiB of swap in use",
		"warn host: only 100 MiB free on disk",
		"ok contract: quiet: floor 3%, MDE",
		"warn contract: noisy: floor 3% but MDE",
		"warn contract: other: not calibrated on this host",
	}
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if line := got[i].Level + " " + got[i].Check + ": " + got[i].Text; !strings.HasPrefix(line, w) {
			t.Errorf("finding %d: %q, want it to start with %q", i, line, w)
		}
	}
	if n := Warnings(got); n != 7 {
		t.Errorf("%d warnings", n)
	}
	quiet := Host{Snapshot: receipt.Snapshot{CPUs: 2}, OthersPct: 3}
	got = Check(Input{Spec: e, Resolved: res, Host: quiet, CalibrationErr: errEx})
	if len(got) != 3 || got[1].Check != "interference" || got[1].Level != OK || got[2].Level != Warn ||
		!strings.Contains(got[2].Text, "no calibration to check the floors against (none here): run flipbench calibrate 7 first") {
		t.Errorf("without a calibration: %+v", got)
	}
}

var errEx = errString("none here")

type errString string

func (e errString) Error() string { return string(e) }

// A calibration made with the lanes placed differently from the protocol's placement is
// named: pinning changes the noise.
func TestCheckPlacement(t *testing.T) {
	e := &spec.Experiment{ID: 7, Arms: []spec.Arm{{Name: "base"}, {Name: "cand"}},
		Lanes: []spec.Lane{{Name: "pinned", Role: spec.RolePrimary}, {Name: "spread", Role: spec.RoleGuard}}}
	res := spec.Resolved{Protocol: spec.Protocol{Samples: 10, Passes: 4, Collections: 2, CPUs: "0"}, Drift: driftcheck.DefaultConfig(), Lanes: e.Lanes}
	cal := &calibrate.File{Lanes: []calibrate.Lane{
		{Experiment: 7, Lane: "pinned", BetweenPct: 0.2, WithinCVPct: 0.5, Samples: 10, RunTime: time.Second, CPUs: []int{0}},
		{Experiment: 7, Lane: "spread", BetweenPct: 0.2, WithinCVPct: 0.5, Samples: 10, RunTime: time.Second},
	}}
	var lines []string
	for _, f := range Check(Input{Spec: e, Resolved: res, Host: Host{Snapshot: receipt.Snapshot{CPUs: 2}}, Calibration: cal}) {
		if f.Check == "contract" && f.Level == Warn {
			lines = append(lines, f.Text)
		}
	}
	want := "spread: calibrated unpinned, but the protocol runs it pinned to CPU 0: the noise differs; run flipbench calibrate 7 again"
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("contract warnings %q, want only %q", lines, want)
	}
}
