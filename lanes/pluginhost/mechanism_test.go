package pluginhost

import (
	"testing"

	sched "github.com/flipbench/flipbench/examples/pluginhost"
)

// TestMechanism runs one sample of each lane under each policy, with real worker
// processes, and checks the counters that show each lane reaches the state it is about
// (never a time): the light call is admitted behind the queued flood under FIFO and
// ahead of it under fair, the throughput lanes evict, Thrash restarts most calls, and
// the single tenant never starts a worker once settled.
func TestMechanism(t *testing.T) {
	for _, policy := range []sched.Policy{sched.PolicyFIFO, sched.PolicyFair} {
		t.Run(policy.String(), func(t *testing.T) {
			f := newFixture(policy)
			if f.err != nil {
				t.Fatal(f.err)
			}
			defer func() {
				if err := f.close(); err != nil {
					t.Error(err)
				}
			}()
			var m meter
			res := lightFirstCall(t, f, &m)
			if !res.Cold {
				t.Error("the light tenant's first call was not cold")
			}
			switch policy {
			case sched.PolicyFIFO:
				// 28 calls were queued ahead of it; a few may be admitted before it
				// arrives on a busy host.
				if res.AdmittedAhead < 20 {
					t.Errorf("FIFO: %d calls admitted ahead of the light call, want most of the 28 queued", res.AdmittedAhead)
				}
			case sched.PolicyFair:
				if res.AdmittedAhead > 3 {
					t.Errorf("fair: %d calls admitted ahead of the light call, want it at the first free slot", res.AdmittedAhead)
				}
			}
			if m.cold < 1 || m.evictions < 1 {
				t.Errorf("LightFirstCall: %d cold calls, %d evictions; the light call must evict a noisy worker", m.cold, m.evictions)
			}

			m = meter{}
			mixed(t, f, &m)
			if m.evictions < 2 {
				t.Errorf("mixed: %d evictions, want at least one per light tenant", m.evictions)
			}

			m = meter{}
			thrash(t, f, &m)
			if m.cold < 18-6 || m.evictions == 0 {
				t.Errorf("Thrash: %d cold calls and %d evictions of 18 calls; six pairs on four slots must restart most", m.cold, m.evictions)
			}

			m = meter{}
			singleTenant(t, f, &m)
			if m.cold != 0 || m.evictions != 0 {
				t.Errorf("SingleTenant: %d cold calls, %d evictions; the settled tenant must stay warm", m.cold, m.evictions)
			}
		})
	}
}
