package armbuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipbench/flipbench/model/receipt"
)

// WorktreeArchive says which working tree ArchiveWorktree keeps, and where.
type WorktreeArchive struct {
	// Root is the ledger root, inside the repository; Dir the archive folder relative to
	// it (ArchiveDir).
	Root, Dir string
	// Experiment is the experiment number, recorded in the patch and README.
	Experiment int
	// Arm names the patch: Dir/Arm.patch.
	Arm string
	// DiffSHA256 is the diff the measured arm was built from (receipt.Arm.DiffSHA256): a
	// working tree that changed since is refused, so the patch is what was measured.
	DiffSHA256 string
}

// ArchiveWorktree keeps the uncommitted changes of the repository's working tree as a
// patch against HEAD (Dir/Arm.patch, with a preamble naming its base commit), so an arm
// {ref: HEAD's commit, patch: Dir/Arm.patch} rebuilds the tree a WORKTREE arm measured,
// and regenerates the folder's README. It returns the patch relative to the ledger root
// and HEAD's commit; a clean tree writes nothing and returns "" for the patch. An
// existing patch with other content is refused.
func ArchiveWorktree(ctx context.Context, o WorktreeArchive) (patch, head string, err error) {
	head, diff, err := Snapshot(ctx, o.Root)
	if err != nil {
		return "", "", err
	}
	if sum := ""; len(diff) > 0 {
		sum = sha256Hex(diff)
		if sum != o.DiffSHA256 {
			return "", "", fmt.Errorf("the working tree changed after arm %s was built from it (diff sha256 %s, measured %s): save it again from the tree you mean to measure",
				o.Arm, receipt.ShortHash(sum), receipt.ShortHash(o.DiffSHA256))
		}
	} else if o.DiffSHA256 != "" {
		return "", "", fmt.Errorf("the working tree changed after arm %s was built from it (now clean, measured with changes): save it again from the tree you mean to measure", o.Arm)
	}
	if len(diff) == 0 {
		return "", head, nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "flipbench-archive: experiment %03d, arm %s\n", o.Experiment, o.Arm)
	fmt.Fprintf(&b, "source: the working tree's uncommitted changes, saved by flipbench compare --save\n")
	fmt.Fprintf(&b, "diff-sha256: %s\n", o.DiffSHA256)
	fmt.Fprintf(&b, "base-commit: %s\n\n", head)
	b.Write(diff)
	rel := filepath.Join(o.Dir, o.Arm+".patch")
	abs, err := under(o.Root, rel)
	if err != nil {
		return "", "", err
	}
	if old, err := os.ReadFile(abs); err == nil && !bytes.Equal(old, b.Bytes()) {
		return "", "", fmt.Errorf("%s exists with other content: choose another experiment number", rel)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(abs, b.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	if err := WriteArchiveREADME(o.Root, o.Dir, o.Experiment); err != nil {
		return "", "", err
	}
	return filepath.ToSlash(rel), head, nil
}
