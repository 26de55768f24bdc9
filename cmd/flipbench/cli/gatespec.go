package cli

import (
	"context"
	"fmt"

	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// gateSpec returns the gate's root and spec. With --package: the repository's top level
// and a gate of that package's benchmarks with a comparison's defaults (compare.GateSpec,
// its samples and warmup put in opts.overrides); else the ledger root and its gate spec
// (experiments/gate.yaml or --spec).
func gateSpec(ctx context.Context, opts *gateOptions) (string, *spec.Gate, error) {
	if opts.pkg == "" {
		root, err := ledger.FindRoot(".")
		if err != nil {
			return "", nil, fmt.Errorf("%w (flipbench gate --package ./pkg gates a package's benchmarks without a gate spec)", err)
		}
		gs, err := loadGateSpec(root, opts.specPath)
		return root, gs, err
	}
	root, err := armbuild.TopLevel(ctx, ".")
	if err != nil {
		return "", nil, fmt.Errorf("gate --package needs a git repository: %w", err)
	}
	pkg, err := onePackage(ctx, root, []string{opts.pkg}, "gate --package")
	if err != nil {
		return "", nil, err
	}
	opts.overrides = compare.GateOverrides(opts.overrides)
	return root, compare.GateSpec(pkg), nil
}
