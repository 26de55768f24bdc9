package readerpool

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tests in this file pin what every admission policy of exp 275 must keep: the
// committed first-come first-served queue and the archived candidates (two waiter queues,
// and the last-free-worker reservation on top; archive/exp-275) all pass them unchanged.

func TestCheapRead(t *testing.T) {
	tests := []struct {
		name      string
		highWater int
		seen      bool
		want      bool
	}{
		{name: "never seen", want: false},
		{name: "seen, no rows", seen: true, want: true},
		{name: "seen, one row", highWater: 1, seen: true, want: true},
		{name: "seen, at the cap", highWater: cheapRowCap, seen: true, want: true},
		{name: "seen, above the cap", highWater: cheapRowCap + 1, seen: true, want: false},
		{name: "seen, a thousand rows", highWater: 1000, seen: true, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cheapRead(rowEntry{highWater: tc.highWater}, tc.seen); got != tc.want {
				t.Errorf("cheapRead(high water %d, seen %v) = %v, want %v", tc.highWater, tc.seen, got, tc.want)
			}
		})
	}
}

// TestReadClassification follows one statement through the pool's row memory: costly
// until it has completed once, cheap while it stays small, costly for good once it has
// returned more than cheapRowCap rows.
func TestReadClassification(t *testing.T) {
	p := newTestPool(t, WithWorkers(2))
	ctx := context.Background()
	const q = "SELECT id FROM items WHERE id <= ?"
	class := func() string {
		if cheapRead(p.memory.lookup(q)) {
			return "cheap"
		}
		return "costly"
	}
	var got []string
	got = append(got, class())
	for _, limit := range []int{3, cheapRowCap, cheapRowCap + 1, 1} {
		if _, err := p.Select(ctx, q, limit); err != nil {
			t.Fatal(err)
		}
		got = append(got, class())
	}
	want := []string{"costly", "cheap", "cheap", "costly", "costly"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("class after 0, 3, 64, 65 and 1 rows (-want +got):\n%s", diff)
	}
}

// TestNoReadParksBesideIdleCapacity: a cheap read never parks while a worker is free,
// and a costly read never parks while two are, whatever reads came before.
func TestNoReadParksBesideIdleCapacity(t *testing.T) {
	d := newDispatcher(3)
	ctx := context.Background()
	cheap, costly := claim{cheap: true}, claim{}
	var held []int
	for _, c := range []claim{cheap, costly, cheap} { // free: 3, then 2, then 1
		i, err := d.acquire(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, i)
	}
	if s := d.stats(); s.parked != 0 || s.free != 0 {
		t.Errorf("after three claims on three workers: %d parked, %d free; want 0 and 0", s.parked, s.free)
	}
	for _, i := range held {
		d.release(i)
	}
	if s := d.stats(); s.free != 3 || s.waiting != 0 {
		t.Errorf("after releasing every worker: %d free, %d waiting; want 3 and 0", s.free, s.waiting)
	}
}

// TestOneWorkerIsNeverWithheld: a one-worker pool hands its worker to a costly read even
// right after cheap reads, because nothing else could ever free a worker.
func TestOneWorkerIsNeverWithheld(t *testing.T) {
	d := newDispatcher(1)
	ctx := context.Background()
	for _, c := range []claim{{cheap: true}, {cheap: true}, {}, {cheap: true}, {}} {
		i, err := d.acquire(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		d.release(i)
	}
	if s := d.stats(); s.parked != 0 {
		t.Errorf("%d reads parked on an idle one-worker pool", s.parked)
	}
}

// wakeOrder holds d's only worker, parks the given claims one at a time (so their
// arrival order is fixed), then frees the worker and returns the order in which the
// parked claims were served, as indexes into claims.
func wakeOrder(t *testing.T, d *dispatcher, claims []claim) []int {
	t.Helper()
	ctx := context.Background()
	held, err := d.acquire(ctx, claim{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for k, c := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i, err := d.acquire(ctx, c)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, k)
			mu.Unlock()
			d.release(i)
		}()
		waitFor(t, "the claim is parked", func() bool { return d.stats().waiting == k+1 })
	}
	d.release(held)
	wg.Wait()
	return order
}

// TestCostlyReadIsNotStarved: a costly read parked ahead of a stream of cheap reads is
// served within nine wakes (exp 275's bound: at most eight cheap reads may be woken ahead
// of it in a row), and each class keeps its arrival order.
func TestCostlyReadIsNotStarved(t *testing.T) {
	claims := []claim{{}} // the costly read, first in line
	for range 12 {
		claims = append(claims, claim{cheap: true})
	}
	claims = append(claims, claim{}) // a second costly read, last in line
	order := wakeOrder(t, newDispatcher(1), claims)
	if len(order) != len(claims) {
		t.Fatalf("%d of %d parked claims served", len(order), len(claims))
	}
	pos := map[int]int{}
	var cheapOrder []int
	for p, k := range order {
		pos[k] = p
		if claims[k].cheap {
			cheapOrder = append(cheapOrder, k)
		}
	}
	if pos[0] > 8 {
		t.Errorf("the first costly read was served %dth, after %d cheap reads; the bound is 8 (wake order %v)", pos[0]+1, pos[0], order)
	}
	if pos[len(claims)-1] < pos[0] {
		t.Errorf("the costly reads were served out of arrival order: %v", order)
	}
	for i := 1; i < len(cheapOrder); i++ {
		if cheapOrder[i] < cheapOrder[i-1] {
			t.Errorf("cheap reads served out of arrival order: %v", order)
			break
		}
	}
}

// TestMixedLoadDrains runs many goroutines of mixed cost classes through a small
// dispatcher, each holding its worker for a moment, and checks that every claim is
// served and that the dispatcher ends idle and consistent. Run it with -race.
func TestMixedLoadDrains(t *testing.T) {
	const slots, callers, claims = 3, 12, 60
	d := newDispatcher(slots)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 275))
			for range claims {
				i, err := d.acquire(ctx, claim{cheap: r.IntN(3) > 0})
				if err != nil {
					t.Error(err)
					return
				}
				for range r.IntN(4) {
					runtime.Gosched()
				}
				d.release(i)
			}
		}()
	}
	wg.Wait()
	s := d.stats()
	if s.dispatches != callers*claims || s.free != slots || s.waiting != 0 {
		t.Errorf("after the load: %d dispatches, %d free, %d waiting; want %d, %d, 0",
			s.dispatches, s.free, s.waiting, callers*claims, slots)
	}
}

// TestPoolUnderMixedLoad is TestMixedLoadDrains through the pool: concurrent point reads
// and 1,000-row reads on four workers all return the right rows.
func TestPoolUnderMixedLoad(t *testing.T) {
	p := newTestPool(t, WithWorkers(4))
	ctx := context.Background()
	const point = "SELECT name FROM items WHERE id = ?"
	const large = "SELECT id, name, score FROM items WHERE id > ? ORDER BY id LIMIT 1000"
	if _, err := p.Select(ctx, point, 1); err != nil { // seen and small: cheap from now on
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				if g%4 == 0 {
					rows, err := p.Select(ctx, large, k)
					if err == nil && len(rows) != 1000 {
						t.Errorf("large read returned %d rows", len(rows))
					}
					if err != nil {
						errs <- err
						return
					}
					continue
				}
				if _, err := p.Select(ctx, point, 1+(g*8+k)%testRows); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := p.Stats(); s.Dispatches != 1+16*8 || s.Waiting != 0 || s.Free != 4 {
		t.Errorf("after the load: %d dispatches, %d waiting, %d free; want %d, 0, 4", s.Dispatches, s.Waiting, s.Free, 1+16*8)
	}
}
