package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flipbench/flipbench/model/receipt"
)

// TestBursts finds the passes of a round whose host was far busier than the run's typical
// pass, reads only the plan's own measurement of each pass and only the rounds so far,
// and finds none on a host busy all along.
func TestBursts(t *testing.T) {
	snap := func(c, p int, pct float64) receipt.Snapshot {
		return receipt.Snapshot{When: "after", Collection: c, Pass: p, BusyPct: pct}
	}
	snaps := []receipt.Snapshot{
		{When: "before", Collection: 1, Pass: 1, BusyPct: 95}, // a "before" snapshot measures no pass
		snap(1, 1, 4), snap(1, 2, 61), snap(2, 1, 6), snap(2, 2, 5),
		snap(1, 2, 3),  // the re-measure of pass 2: later, not the plan's measurement
		snap(1, 3, 70), // round 2
	}
	if got := fmt.Sprint(bursts(snaps, 1)); got != "[{1 2 61}]" {
		t.Errorf("round 1: bursts %s, want pass 2 of collection 1 at 61%%", got)
	}
	if got := bursts(snaps[:5], 1); len(got) != 1 {
		t.Errorf("before round 2's snapshots: bursts %v, want the same one", got)
	}
	if got := fmt.Sprint(bursts(snaps, 2)); got != "[{1 3 70}]" {
		t.Errorf("round 2: bursts %s, want pass 3 of collection 1", got)
	}
	busy := []receipt.Snapshot{snap(1, 1, 60), snap(1, 2, 68), snap(2, 1, 62), snap(2, 2, 66)}
	if got := bursts(busy, 1); len(got) != 0 {
		t.Errorf("a host busy all along: bursts %v, want none", got)
	}
	if got := bursts([]receipt.Snapshot{snap(1, 1, 19), snap(1, 2, 1), snap(2, 1, 1)}, 1); len(got) != 0 {
		t.Errorf("a pass at 19%%: bursts %v, want none below 20%%", got)
	}
	// A burst over half of round 1's passes: the quiet level is the lower quartile.
	if got := fmt.Sprint(bursts([]receipt.Snapshot{snap(1, 1, 25.5), snap(1, 2, 23.4), snap(2, 1, 0), snap(2, 2, 0.4)}, 1)); got != "[{1 1 25.5} {1 2 23.4}]" {
		t.Errorf("a burst over two of four passes: bursts %s, want both", got)
	}
}

// TestRemeasureBurst runs an experiment whose host got busy during one pass of round 1:
// round 1's mend measures that pass again before the look, for every pending lane, with
// the share the host measured; raw.jsonl has the new measurements, and a run cut short in
// the mend and resumed replays the same look from env.json.
func TestRemeasureBurst(t *testing.T) {
	e, res := remeasurePage(t)
	starter := func() *fakeStarter {
		return &fakeStarter{between: 0.01, within: 0.01, factor: map[string]float64{"cand/fast": 0.7}, seed: 8}
	}
	job := func(dir string) Job {
		return Job{Spec: e, Root: dir, Resolved: res, Label: "full", Results: dir, Build: fakeArms(t)}
	}
	// The busy-host meter: the first call watches the idle machine, then one call a pass;
	// the third is pass 2 of collection 1.
	burstOn := func(nth int) func() func() float64 {
		calls := 0
		return func() func() float64 {
			calls++
			n := calls
			return func() float64 {
				if n == nth {
					return 61
				}
				return 4
			}
		}
	}
	opts := quietOptions(starter())
	opts.Others = burstOn(3)
	whole, err := Run(context.Background(), job(t.TempDir()), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Both lanes' pass, in decide.Remeasure's order (collection, pass, lane).
	want := "1 [{Lane:even Collection:1 Pass:2 Attempt:1 Arm: Outlier:false Failed: CVPct:0 TypicalCVPct:0 BusyPct:61} {Lane:fast Collection:1 Pass:2 Attempt:1 Arm: Outlier:false Failed: CVPct:0 TypicalCVPct:0 BusyPct:61}]"
	if got := remeasures(whole.Looks[:1])[0]; got != want {
		t.Fatalf("round 1's mend measured again %s\nwant %s", got, want)
	}
	recs, err := receipt.ReadRecords(whole.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Attempt > 0 && r.Round == 1 {
			if r.Collection != 1 || r.Pass != 2 {
				t.Errorf("record %+v: want pass 2 of collection 1 measured again in round 1", r)
			}
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d records measured again in round 1, want both arms of both lanes", n)
	}

	// Cut short inside round 1's mend, resumed on a quiet host: the replayed mend finds
	// the burst in env.json and measures the same pass.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cut := quietOptions(&cancelAfter{fakeStarter: starter(), after: 16 + 2, cancel: cancel})
	cut.Others = burstOn(3)
	if _, err := Run(ctx, job(dir), cut); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cut-short run: %v, want ErrInterrupted", err)
	}
	folders, _ := filepath.Glob(filepath.Join(dir, "*-exp008-full"))
	if len(folders) != 1 {
		t.Fatalf("receipt folders %v", folders)
	}
	resumed, err := Resume(context.Background(), folders[0], job(dir), quietOptions(starter()))
	if err != nil {
		t.Fatal(err)
	}
	if got := remeasures(resumed.Looks[:1])[0]; got != want {
		t.Errorf("resumed: round 1's look measures again %s\nwant %s", got, want)
	}
}
