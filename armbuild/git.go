package armbuild

import (
	"context"
	"errors"

	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// buildGit builds an arm from a git ref. See the git-arms work: worktree per arm, archive
// patch, harness source copied over, cached binaries.
func buildGit(ctx context.Context, exp *spec.Experiment, a spec.Arm, opts Options) (receipt.Arm, error) {
	return receipt.Arm{}, errors.New("ref: building arms from git is not supported yet; give a prebuilt bin")
}
