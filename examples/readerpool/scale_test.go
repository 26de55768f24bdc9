package readerpool

import (
	"context"
	"runtime"
	"testing"
)

func TestScaleFor(t *testing.T) {
	tests := []struct {
		name    string
		cpus    int
		workers int
	}{
		{"one CPU keeps two workers", 1, 2},
		{"two CPUs, a worker each", 2, 2},
		{"three CPUs", 3, 3},
		{"four CPUs: the original's pool", 4, 4},
		{"many CPUs stay at four", 64, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScaleFor(tt.cpus)
			if got.CPUs != tt.cpus || got.Workers != tt.workers {
				t.Errorf("ScaleFor(%d) = %+v, want %d workers", tt.cpus, got, tt.workers)
			}
		})
	}
}

func TestProcessScaleFollowsNumCPU(t *testing.T) {
	got := ProcessScale()
	if want := ScaleFor(runtime.NumCPU()); got != want {
		t.Errorf("ProcessScale() = %+v, want %+v", got, want)
	}
}

// TestWorkerCPU: with WithWorkerCPU the worker that served a read reports CPU time, the
// idle one none; without it no worker does.
func TestWorkerCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Fatalf("the thread CPU clock is read on Linux only; this test runs on linux (GOOS %s)", runtime.GOOS)
	}
	ctx := context.Background()
	const scan = "SELECT count(*) FROM items a, items b WHERE a.id <= 300 AND b.id <= 300 AND a.score < b.score"
	for _, on := range []bool{true, false} {
		opts := []Option{WithWorkers(2)}
		if on {
			opts = append(opts, WithWorkerCPU())
		}
		p := newTestPool(t, opts...)
		if _, err := p.Select(ctx, scan); err != nil {
			t.Fatal(err)
		}
		var busy, idle int
		for _, w := range p.Stats().Workers {
			switch {
			case w.CPU > 0:
				busy++
			case w.Reads+w.JSONReads == 0:
				idle++
			}
		}
		switch {
		case on && (busy != 1 || idle != 1):
			t.Errorf("with WithWorkerCPU: %d workers report CPU and %d idle ones none, want 1 and 1 (%+v)", busy, idle, p.Stats().Workers)
		case !on && busy != 0:
			t.Errorf("without WithWorkerCPU: %d workers report CPU, want 0", busy)
		}
	}
}
