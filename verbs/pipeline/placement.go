package pipeline

import (
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/spec"
)

// PlaceLanes gives a run of compare, the gate or bisect its lanes' CPUs by default: when neither
// the spec (pageCPUs, its protocol.cpus) nor the flags (ov.CPUs) place them, every lane
// process runs on the CPUs harness.LanePlacement chooses, away from flipbench's own
// threads. It returns the overrides and says what it chose (for the run's notes).
func PlaceLanes(pageCPUs string, ov spec.Overrides) (spec.Overrides, string) {
	if pageCPUs != "" || ov.CPUs != nil {
		return ov, ""
	}
	cpus, why := harness.LanePlacement()
	if cpus != nil {
		list := cpuset.Format(cpus)
		ov.CPUs = &list
	}
	return ov, "placement: " + why
}

// LayoutsOf is the layout builds per arm the protocol of e with ov asks for, before its
// lanes are chosen (compare, the gate and bisect list them from the built arms).
func LayoutsOf(e *spec.Experiment, ov spec.Overrides) int {
	probe := *e
	if len(probe.Lanes) == 0 {
		probe.Lanes = []spec.Lane{{Name: "x", Role: spec.RoleGuard}}
	}
	ov.Lanes = ""
	res, err := probe.Resolve(ov)
	if err != nil {
		return 0
	}
	return res.Protocol.Layouts
}
