package tenantmix

import (
	"testing"

	sched "github.com/flipbench/flipbench/examples/pluginhost"
	"github.com/flipbench/flipbench/probe"
)

// TestPositiveControlFires runs the control's workload with real worker processes and
// checks the counters: in a probe build (-tags flipbench_probe) the two late tenants'
// calls are counted as queued behind the flood's tenant, in a default build nothing is
// counted. The suite's incidence numbers mean something only while this holds.
func TestPositiveControlFires(t *testing.T) {
	h, err := newHost()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.close(); err != nil {
			t.Error(err)
		}
	}()
	before := probe.Take()
	if err := positiveControl(h, &registry{h: h, plugins: map[string]*sched.Plugin{}}); err != nil {
		t.Fatal(err)
	}
	d := probe.Take().Sub(before)
	calls, queued, light := d.Get(probe.Calls), d.Get(probe.CallsQueued), d.Get(probe.LightQueuedBehindOtherTenant)
	if !probe.Enabled {
		if calls+queued+light != 0 {
			t.Errorf("a default build counted %d calls, %d queued, %d light", calls, queued, light)
		}
		return
	}
	if calls != 18 || queued < 14 || light != 2 {
		t.Errorf("probe build: %d calls, %d queued, %d light-queued-behind-other-tenant; want 18, at least 14, 2", calls, queued, light)
	}
}
