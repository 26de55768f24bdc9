package pluginhost

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRegistryDormant is the seed's registry diagnostic: the cost of one call on a
// hot registration, with fake workers (no process), while dormant registrations (no
// queued call) number 0 to 10,000. The dispatcher looks only at registrations with
// queued calls, so the time per call should not grow with the dormant count. Its rate is
// a hot-request rate of one registration, not a distinct-customer throughput.
func BenchmarkRegistryDormant(b *testing.B) {
	for _, dormant := range []int{0, 100, 10_000} {
		b.Run(fmt.Sprintf("dormant=%d", dormant), func(b *testing.B) {
			l := newFakeLauncher()
			l.auto = true
			s, err := New(Options{Launcher: l, MemoryBudgetMiB: 1 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := s.Close(); err != nil {
					b.Error(err)
				}
			}()
			for i := range dormant {
				if _, err := s.Register(fmt.Sprintf("t%d", i), "p", Profile{Name: "p", MemoryMiB: 1}, Normal); err != nil {
					b.Fatal(err)
				}
			}
			hot, err := s.Register("hot", "p", Profile{Name: "p", MemoryMiB: 1}, Normal)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := hot.Invoke(ctx, "x", nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := hot.Invoke(ctx, "x", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRegistryDormantCounts: with thousands of dormant registrations a hot registration's
// calls stay warm on its one worker and no dormant registration gets a worker.
func TestRegistryDormantCounts(t *testing.T) {
	l := newFakeLauncher()
	l.auto = true
	s, err := New(Options{Launcher: l, MemoryBudgetMiB: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5000 {
		if _, err := s.Register(fmt.Sprintf("t%d", i), "p", Profile{Name: "p", MemoryMiB: 1}, Normal); err != nil {
			t.Fatal(err)
		}
	}
	hot := mustRegister(t, s, "hot", "p", Profile{Name: "p", MemoryMiB: 1})
	for range 50 {
		if _, err := hot.Invoke(context.Background(), "x", nil); err != nil {
			t.Fatal(err)
		}
	}
	if sn := s.Snapshot(); sn.Registrations != 5001 || sn.Workers != 1 || sn.ColdCalls != 1 || sn.WarmCalls != 49 {
		t.Errorf("snapshot: registrations %d, workers %d, cold %d, warm %d; want 5001, 1, 1, 49", sn.Registrations, sn.Workers, sn.ColdCalls, sn.WarmCalls)
	}
}
