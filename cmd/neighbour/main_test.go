package main

import (
	"strings"
	"testing"
	"time"
)

// Bad options are refused with the flag named, before anything spins.
func TestRunRefusesBadOptions(t *testing.T) {
	ok := options{procs: 3, demand: 2, seed: 1, burstMin: 20 * time.Millisecond, burstMax: 200 * time.Millisecond, dur: time.Second}
	for _, tc := range []struct {
		edit func(*options)
		want string
	}{
		{func(o *options) { o.procs = 0 }, "-procs 0"},
		{func(o *options) { o.demand = 4 }, "-demand 4"},
		{func(o *options) { o.demand = 0 }, "-demand 0"},
		{func(o *options) { o.burstMin = 300 * time.Millisecond }, "-burst-min 300ms"},
		{func(o *options) { o.dur = 0 }, "-for 0s"},
		{func(o *options) { o.pin = "1" }, `-pin "1" -pinned 0`},
		{func(o *options) { o.pin, o.pinned = "1", 4 }, `-pinned 4`},
	} {
		o := ok
		tc.edit(&o)
		if err := run(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%+v) = %v, want an error naming %q", o, err, tc.want)
		}
	}
}

// A worker's bursts keep to their bounds, its busy share is demand/procs, and a seed
// names one pattern.
func TestScheduleKeepsItsDuty(t *testing.T) {
	o := options{procs: 3, demand: 2, seed: 7, burstMin: 20 * time.Millisecond, burstMax: 200 * time.Millisecond, worker: 1}
	next := schedule(o)
	var busy, idle time.Duration
	for range 20000 {
		b, p := next()
		if b < o.burstMin || b > o.burstMax || p < 0 {
			t.Fatalf("burst %v, pause %v: out of bounds", b, p)
		}
		busy, idle = busy+b, idle+p
	}
	if share := float64(busy) / float64(busy+idle); share < 0.64 || share > 0.69 {
		t.Errorf("busy %.3f of the time, want about 2/3", share)
	}
	a, b := schedule(o), schedule(o)
	o.worker = 2
	c := schedule(o)
	x, _ := a()
	y, _ := b()
	z, _ := c()
	if x != y || x == z {
		t.Errorf("first bursts %v %v %v: want the same seed and worker to repeat, another worker to differ", x, y, z)
	}
}
