package cli

import (
	"context"
	"fmt"

	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// gateSpec returns the gate's root, spec and protocol overrides. With --package: the
// repository's top level, a gate of that package's benchmarks (compare.GateSpec) and the
// overrides with a comparison's samples and warmup (compare.GateOverrides); else the
// ledger root, its gate spec (experiments/gate.yaml or --spec) and the overrides as given.
func gateSpec(ctx context.Context, opts *gateOptions) (string, *spec.Gate, spec.Overrides, error) {
	if opts.pkg == "" {
		root, err := ledger.FindRoot(".")
		if err != nil {
			return "", nil, opts.overrides, fmt.Errorf("%w (flipbench gate --package ./pkg gates a package's benchmarks without a gate spec)", err)
		}
		gs, err := loadGateSpec(root, opts.specPath)
		return root, gs, opts.overrides, err
	}
	root, err := armbuild.TopLevel(ctx, ".")
	if err != nil {
		return "", nil, opts.overrides, fmt.Errorf("gate --package needs a git repository: %w", err)
	}
	pkg, err := onePackage(ctx, root, []string{opts.pkg}, "gate --package")
	if err != nil {
		return "", nil, opts.overrides, err
	}
	return root, compare.GateSpec(pkg), compare.GateOverrides(opts.overrides), nil
}
