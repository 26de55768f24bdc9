package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/compare"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// addRoleFlags registers compare's role flags.
func addRoleFlags(f *pflag.FlagSet, r *compare.Roles) {
	f.StringVar(&r.Primary, "primary", "", "the lanes (a regular expression on their names) the change is for: primary lanes, expected --expect")
	f.StringVar(&r.Guard, "guard", "", "the lanes that must not get slower: guards")
	f.StringVar(&r.Control, "control", "", "the lanes that must not change at all: controls")
	f.StringVar(&r.Expect, "expect", "", "the primaries' predicted direction: faster (default), slower or neutral")
}

// assignRoles gives the lanes of a comparison the roles of --primary, --guard and
// --control (the rest secondary) and resolves the protocol again.
func assignRoles(exp *spec.Experiment, roles compare.Roles, ov spec.Overrides) (*spec.Experiment, spec.Resolved, error) {
	lanes, err := roles.Apply(exp.Lanes)
	if err != nil {
		return nil, spec.Resolved{}, usageError("%v", err)
	}
	out := *exp
	out.Lanes = lanes
	res, err := out.Resolve(ov)
	if err != nil {
		return nil, spec.Resolved{}, err
	}
	return &out, res, nil
}

// savedCandidate says what a saved page's cand arm is built from: the commit the run
// measured, and for a working tree with changes those changes, kept as a patch in the
// experiment's archive folder, so flipbench ab NNN rebuilds what was measured.
func savedCandidate(ctx context.Context, root string, exp *spec.Experiment, arms []receipt.Arm) (ref, patch string, err error) {
	var cand receipt.Arm
	for _, a := range arms {
		if a.Name == compare.CandArm {
			cand = a
		}
	}
	if cand.Commit == "" {
		return "", "", fmt.Errorf("--save: arm %s has no commit to name", compare.CandArm)
	}
	for _, a := range exp.Arms {
		if a.Name == compare.CandArm && a.Ref != armbuild.WorktreeRef {
			return cand.Commit, "", nil
		}
	}
	patch, head, err := armbuild.ArchiveWorktree(ctx, armbuild.WorktreeArchive{Root: root, Dir: armbuild.ArchiveDir(exp), Experiment: exp.ID,
		Arm: compare.CandArm, DiffSHA256: cand.DiffSHA256})
	if err != nil {
		return "", "", fmt.Errorf("--save: %w", err)
	}
	if head != cand.Commit {
		return "", "", fmt.Errorf("--save: HEAD moved to %s after arm %s was built at %s: save it again", receipt.ShortHash(head), compare.CandArm, receipt.ShortHash(cand.Commit))
	}
	return head, patch, nil
}
