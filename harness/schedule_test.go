package harness

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
)

func TestScheduleOrders(t *testing.T) {
	arms := []string{"base", "candA", "candB"}
	lanes := []string{"x", "y", "z"}
	runs := Schedule(arms, lanes, 2, 4, 275)
	if got, want := len(runs), 2*4*3*3; got != want {
		t.Fatalf("len = %d, want %d", got, want)
	}
	for _, pass := range groupPasses(runs) {
		p := pass[0].Pass
		wantOrder, wantArms := driftcheck.OrderForward, arms
		if p%2 == 0 {
			wantOrder, wantArms = driftcheck.OrderReverse, []string{"candB", "candA", "base"}
		}
		seenLanes := map[string]bool{}
		for i, r := range pass {
			if r.Order != wantOrder {
				t.Errorf("collection %d pass %d: order %s, want %s", r.Collection, p, r.Order, wantOrder)
			}
			if r.Arm != wantArms[i%len(arms)] {
				t.Errorf("collection %d pass %d run %d: arm %s, want %s", r.Collection, p, i, r.Arm, wantArms[i%len(arms)])
			}
			if i%len(arms) > 0 && r.Lane != pass[i-1].Lane {
				t.Errorf("collection %d pass %d: lane %s interleaved with %s", r.Collection, p, r.Lane, pass[i-1].Lane)
			}
			seenLanes[r.Lane] = true
		}
		if len(seenLanes) != len(lanes) {
			t.Errorf("collection %d pass %d: lanes %v, want all of %v", pass[0].Collection, p, seenLanes, lanes)
		}
	}
}

func TestSchedulePairs(t *testing.T) {
	runs := Schedule([]string{"base", "cand"}, []string{"a", "b"}, 3, 6, 1)
	passes := groupPasses(runs)
	if len(passes) != 3*6 {
		t.Fatalf("%d passes, want 18", len(passes))
	}
	// Pass-pair k of a collection is passes 2k-1 (forward) and 2k (reverse).
	for i := 0; i < len(passes); i += 2 {
		a, b := passes[i][0], passes[i+1][0]
		if a.Collection != b.Collection || a.Pass+1 != b.Pass || a.Pass%2 != 1 {
			t.Fatalf("passes %d,%d do not form a pair: %+v %+v", i, i+1, a, b)
		}
		if a.Order != driftcheck.OrderForward || b.Order != driftcheck.OrderReverse {
			t.Fatalf("pair orders %s,%s", a.Order, b.Order)
		}
	}
}

func TestScheduleSeed(t *testing.T) {
	arms, lanes := []string{"base", "cand"}, []string{"a", "b", "c", "d", "e", "f"}
	a := Schedule(arms, lanes, 2, 8, 42)
	b := Schedule(arms, lanes, 2, 8, 42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different plans (-first +second):\n%s", diff)
	}
	c := Schedule(arms, lanes, 2, 8, 43)
	if cmp.Equal(a, c) {
		t.Fatal("seeds 42 and 43 gave the same lane orders")
	}
	// The lane order changes between passes (with 6 lanes, 16 identical shuffles in a row
	// would be a broken shuffle).
	passes := groupPasses(a)
	same := 0
	for i := 1; i < len(passes); i++ {
		if passes[i][0].Lane == passes[i-1][0].Lane && passes[i][2].Lane == passes[i-1][2].Lane {
			same++
		}
	}
	if same == len(passes)-1 {
		t.Fatal("lane order never changes between passes")
	}
}
