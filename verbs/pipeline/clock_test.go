package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
)

// TestOneClockAndStarter runs a gate with a fake clock and a fake starter at the top and
// checks that both reach everything below: the build and the lane selection get them, the
// receipt folder is stamped by the clock, and every host snapshot of the run loop is.
func TestOneClockAndStarter(t *testing.T) {
	at := time.Date(2031, 7, 4, 9, 30, 0, 0, time.UTC)
	st := &fakeStarter{seed: 1}
	build := fakeArms(t)
	var (
		builtAt  time.Time
		builtBy  harness.Starter
		selectBy harness.Starter
	)
	dir := t.TempDir()
	job, _ := gateJob(t, dir, func(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error) {
		builtAt, builtBy = o.Clock.Now(), o.Starter
		return build(ctx, e, o)
	})
	job.Select = func(_ context.Context, s harness.Starter, _ []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
		selectBy = s
		return job.Spec, job.Resolved, nil
	}
	opts := quietOptions(st)
	opts.Clock = clock.Fixed(at)
	var mu sync.Mutex
	var snaps []time.Time
	opts.Capture = func(when string, c, p int, now time.Time, dir string) receipt.Snapshot {
		mu.Lock()
		snaps = append(snaps, now)
		mu.Unlock()
		return receipt.Snapshot{When: when, Collection: c, Pass: p, Time: now}
	}
	res, err := Run(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !builtAt.Equal(at) || builtBy != harness.Starter(st) {
		t.Errorf("the build got the clock at %v and starter %T, want %v and the fake starter", builtAt, builtBy, at)
	}
	if selectBy != harness.Starter(st) {
		t.Errorf("the lane selection got starter %T, want the fake starter", selectBy)
	}
	if stamp := at.Format(receipt.StampFormat); !strings.HasPrefix(filepath.Base(res.Dir), stamp) {
		t.Errorf("receipt folder %s, want it stamped %s", filepath.Base(res.Dir), stamp)
	}
	if len(snaps) == 0 {
		t.Fatal("the run loop took no host snapshot")
	}
	for _, s := range snaps {
		if !s.Equal(at) {
			t.Fatalf("a host snapshot is stamped %v, want the fake clock's %v", s, at)
		}
	}
}
