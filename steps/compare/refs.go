package compare

import (
	"context"
	"fmt"

	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/armbuild"
)

// Refs resolves the base and candidate of a comparison: BASE as given, or the
// merge base of HEAD with the default branch; CANDIDATE as given, or the working tree
// (armbuild.WorktreeRef), with the names a table and a receipt give them.
func Refs(ctx context.Context, root string, refs []string) (base, cand string, names Names, err error) {
	cand = armbuild.WorktreeRef
	if len(refs) == 2 {
		cand = refs[1]
	}
	head := cand
	if cand == armbuild.WorktreeRef {
		head = "HEAD"
	}
	candCommit, err := armbuild.Commit(ctx, root, head)
	if err != nil {
		return "", "", names, err
	}
	if len(refs) >= 1 {
		if base, err = armbuild.Commit(ctx, root, refs[0]); err != nil {
			return "", "", names, err
		}
		names.Base = fmt.Sprintf("%s (%s)", refs[0], receipt.ShortHash(base))
	} else {
		branch, err := armbuild.DefaultBranch(ctx, root)
		if err != nil {
			return "", "", names, err
		}
		if base, err = armbuild.MergeBase(ctx, root, branch, candCommit); err != nil {
			return "", "", names, err
		}
		names.Base = fmt.Sprintf("%s (merge base %s)", branch, receipt.ShortHash(base))
	}
	switch {
	case cand != armbuild.WorktreeRef:
		names.Cand = fmt.Sprintf("%s (%s)", cand, receipt.ShortHash(candCommit))
	default:
		dirty, err := armbuild.Dirty(ctx, root)
		if err != nil {
			return "", "", names, err
		}
		names.Cand = fmt.Sprintf("the working tree (HEAD %s, clean)", receipt.ShortHash(candCommit))
		if dirty {
			names.Cand = fmt.Sprintf("the working tree (HEAD %s with uncommitted changes)", receipt.ShortHash(candCommit))
		}
	}
	return base, cand, names, nil
}
