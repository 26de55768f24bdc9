package compare

import (
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/spec"
)

// GateSpec is the gate spec of flipbench gate --package: every benchmark of the package
// pkg (a path relative to the repository root), listed from the built arms, as a guard
// lane, built and timed as a comparison is (DefaultBenchtime; each lane by its on-CPU
// time where its processes never wait), with the gate's threshold and stopping rule.
func GateSpec(pkg string) *spec.Gate {
	return &spec.Gate{
		Path:    "--package " + pkg,
		Harness: spec.Harness{Kind: lanekind.Gotest, Package: pkg, Benchtime: DefaultBenchtime, Metric: lanekind.MetricAuto},
	}
}

// GateOverrides returns ov with a comparison's samples and warmup where ov sets none, for
// a gate of a package (GateSpec): 6 samples per process and no warmup sample (the
// iteration counts are calibrated, CalibratedWarmup). The gate spec's default of 10 after
// 2 suits lanes of one execution per sample; on a package's benchmarks it buys fewer
// rounds in the gate's budget (google/btree: 4 rounds in 10 minutes).
func GateOverrides(ov spec.Overrides) spec.Overrides {
	if ov.Samples == nil {
		n := DefaultProtocol().Samples
		ov.Samples = &n
	}
	if ov.Warmup == nil {
		w := CalibratedWarmup
		ov.Warmup = &w
	}
	return ov
}
