package pluginhost

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/probe"
)

// TestProbeCounters drives a fixed sequence of arrivals through two slots and checks the
// incidence counters: exact counts in a probe build (-tags flipbench_probe), zeros in a
// default build. The counts do not depend on the policy: they describe the situation,
// not what a policy makes of it.
func TestProbeCounters(t *testing.T) {
	for _, policy := range []Policy{PolicyFIFO, PolicyFair} {
		t.Run(policy.String(), func(t *testing.T) {
			h := newHarness(t, Options{MaxWorkers: 2, Policy: policy})
			a1, a2, a3, a4 := h.register("A", "1", Normal), h.register("A", "2", Normal), h.register("A", "3", Normal), h.register("A", "4", Normal)
			b, c := h.register("B", "1", Normal), h.register("C", "1", Normal)
			before := probe.Take()
			var res []<-chan result
			res = append(res, h.invoke(a1, "x"), h.invoke(a2, "x")) // both run: A has 2 active
			_, running := h.admittedNames(2)
			res = append(res,
				h.invoke(a3, "x"), // queued; no other tenant waits: not eligible
				h.invoke(b, "x"),  // queued behind A's queued call, A has more active: eligible
				h.invoke(b, "y"),  // queued behind its own registration: not eligible
				h.invoke(c, "x"),  // eligible, like B's first
				h.invoke(a4, "x"), // the others that wait have fewer active than A: not eligible
			)
			got := map[string]uint64{}
			d := probe.Take().Sub(before)
			for _, ctr := range probe.PluginHostCounters() {
				got[ctr.Name()] = d.Get(ctr)
			}
			want := map[string]uint64{"calls": 7, "calls-queued": 5, "light-queued-behind-other-tenant": 2}
			if !probe.Enabled {
				want = map[string]uint64{"calls": 0, "calls-queued": 0, "light-queued-behind-other-tenant": 0}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("probe.Enabled = %v: counters (-want +got):\n%s", probe.Enabled, diff)
			}
			for _, fc := range running {
				fc.answer()
			}
			for range 5 {
				h.next().answer()
			}
			for _, r := range res {
				h.wait(r)
			}
		})
	}
}
