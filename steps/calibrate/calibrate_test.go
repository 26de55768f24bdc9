package calibrate

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
)

// TestPlan checks the three kinds of advice: a lane that resolves the floor, one whose
// noise is within-run (more samples help) and one whose noise is between processes (only
// more processes help).
func TestPlan(t *testing.T) {
	proto := Protocol{Samples: 10, Warmup: 2, Collections: 2, Pairs: 4, Arms: 2}
	cfg := driftcheck.DefaultConfig()
	tests := []struct {
		name   string
		lane   Lane
		advice string
	}{
		{"quiet", Lane{Lane: "q", BetweenPct: 0.2, WithinCVPct: 0.5, Samples: 10, Warmup: 2, RunTime: time.Second}, "resolves the 3% floor at this protocol"},
		{"within", Lane{Lane: "w", BetweenPct: 0.5, WithinCVPct: 30, Samples: 10, Warmup: 2, RunTime: time.Second}, "more samples help"},
		{"between", Lane{Lane: "b", BetweenPct: 12, WithinCVPct: 2, Samples: 10, Warmup: 2, RunTime: time.Second}, "more samples per run barely help"},
		{"hopeless", Lane{Lane: "h", BetweenPct: 400, WithinCVPct: 2, Samples: 10, Warmup: 2, RunTime: time.Second}, "cannot resolve the 3% floor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lp := Plan(tc.lane, 3, proto, cfg)
			if !strings.Contains(lp.Advice, tc.advice) {
				t.Errorf("advice %q, want %q (plan %+v)", lp.Advice, tc.advice, lp)
			}
			if tc.name != "hopeless" && lp.Time != time.Duration(lp.PairsNeeded*2*2*2)*time.Second {
				t.Errorf("time %s for %d pairs", lp.Time, lp.PairsNeeded)
			}
		})
	}
}

// TestFile checks the host key, merging and the refusal of another host's file.
func TestFile(t *testing.T) {
	h := Host{CPUModel: "AMD EPYC 7B13", CPUs: 2, Kernel: "6.1.0", GoVersion: "go1.26.8"}
	if got, want := h.Key(), "amd-epyc-7b13-2cpu-6.1.0-go1.26.8"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	root := t.TempDir()
	f := &File{Host: h}
	f.Merge([]Lane{{Experiment: 1, Lane: "a", NoisePct: 5}, {Experiment: 1, Lane: "b", NoisePct: 6}})
	f.Merge([]Lane{{Experiment: 1, Lane: "a", NoisePct: 7}})
	if _, err := Write(root, f); err != nil {
		t.Fatal(err)
	}
	got, err := Read(root, h)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := got.Lane(1, "a"); !ok || l.NoisePct != 7 || len(got.Lanes) != 2 {
		t.Errorf("lanes %+v", got.Lanes)
	}
	other := h
	other.CPUs = 8
	if _, err := Read(root, other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("another host: %v, want a missing file", err)
	}
}

func TestPlacementChange(t *testing.T) {
	pinned := Lane{CPUs: []int{0}}
	if got := pinned.PlacementChange([]int{0}); got != "" {
		t.Errorf("same placement: %q", got)
	}
	if got, want := pinned.PlacementChange(nil), "calibrated pinned to CPU 0, but the protocol runs it unpinned: the noise differs"; got != want {
		t.Errorf("pinned calibration, unpinned protocol: %q, want %q", got, want)
	}
	if got, want := (Lane{}).PlacementChange([]int{0, 1}), "calibrated unpinned, but the protocol runs it pinned to CPUs 0-1: the noise differs"; got != want {
		t.Errorf("unpinned calibration, pinned protocol: %q, want %q", got, want)
	}
}
