package probe

import (
	"sync"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"dispatches", "cheap", "costly", "parked", "cheap-waited", "cheap-parked-behind-costly",
		"calls", "calls-queued", "light-queued-behind-other-tenant", "stage-b-decisions", "p99-miss-p50-fit"}
	got := Names()
	if len(got) != len(want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	for i, name := range want {
		if got[i] != name {
			t.Errorf("Names()[%d] = %q, want %q", i, got[i], name)
		}
		c, ok := Lookup(name)
		if !ok || c != Counters()[i] || c.String() != name {
			t.Errorf("Lookup(%q) = %v, %v; want counter %d", name, c, ok, i)
		}
	}
	if _, ok := Lookup("parked-behind"); ok {
		t.Error("Lookup found a counter that does not exist")
	}
	if got := Counter(200).Name(); got != "counter(200)" {
		t.Errorf("an unknown counter is named %q", got)
	}
}

// TestCountsOnlyInProbeBuild is the contract of the build tag: in a default build adding
// changes nothing and every counter reads 0; in a probe build every add is counted.
func TestCountsOnlyInProbeBuild(t *testing.T) {
	before := Take()
	for i, c := range Counters() {
		c.Add(uint64(i + 1))
	}
	d := Take().Sub(before)
	for i, c := range Counters() {
		want := uint64(0)
		if Enabled {
			want = uint64(i + 1)
		}
		if got := d.Get(c); got != want {
			t.Errorf("Enabled = %v: %s counted %d after adding %d, want %d", Enabled, c, got, i+1, want)
		}
	}
	if !Enabled {
		if s := Take(); s != (Snapshot{}) {
			t.Errorf("a default build reads non-zero counters: %v", s)
		}
	}
	if got := d.Get(Counter(200)); got != 0 {
		t.Errorf("an unknown counter reads %d", got)
	}
}

// TestConcurrentAdds adds from many goroutines at once; run it with -race, in both builds.
func TestConcurrentAdds(t *testing.T) {
	const goroutines, adds = 8, 1000
	before := Take()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range adds {
				CheapParkedBehindCostly.Add(1)
				Dispatches.Add(2)
				_ = Parked.Load()
			}
		}()
	}
	wg.Wait()
	d := Take().Sub(before)
	want := uint64(0)
	if Enabled {
		want = goroutines * adds
	}
	if got := d.Get(CheapParkedBehindCostly); got != want {
		t.Errorf("%s = %d, want %d", CheapParkedBehindCostly, got, want)
	}
	if got := d.Get(Dispatches); got != 2*want {
		t.Errorf("%s = %d, want %d", Dispatches, got, 2*want)
	}
}

// BenchmarkAdd is the cost of one counter increment: nothing in a default build, one
// atomic add in a probe build.
func BenchmarkAdd(b *testing.B) {
	for b.Loop() {
		CheapParkedBehindCostly.Add(1)
	}
}

// TestSystemsPartitionCounters: every counter belongs to the counter set of exactly one
// bundled system, so a suite that reports its system's set reports none of another's.
func TestSystemsPartitionCounters(t *testing.T) {
	owner := map[Counter]string{}
	for system, set := range map[string][]Counter{
		"readerpool": ReaderPoolCounters(),
		"pluginhost": PluginHostCounters(),
		"freshness":  FreshnessCounters(),
	} {
		for _, c := range set {
			if prev, ok := owner[c]; ok {
				t.Errorf("counter %s is in the sets of %s and %s", c, prev, system)
			}
			owner[c] = system
		}
	}
	for _, c := range Counters() {
		if _, ok := owner[c]; !ok {
			t.Errorf("counter %s belongs to no system's set", c)
		}
	}
}
