package pipeline

import (
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/spec"
)

// placeLanes gives a run of compare or the gate its lanes' CPUs by default: when neither
// the spec (pageCPUs, its protocol.cpus) nor the flags (ov.CPUs) place them, every lane
// process runs on the CPUs harness.LanePlacement chooses, away from flipbench's own
// threads. It returns the overrides and says what it chose (for the run's notes).
func placeLanes(pageCPUs string, ov spec.Overrides) (spec.Overrides, string) {
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
