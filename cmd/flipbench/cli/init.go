package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/verbs/ledger"
)

type initOptions struct {
	ledger bool
}

func newInitCmd(s Streams) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set a repository up for flipbench: ignore its outputs, or keep the receipts as a ledger",
		Long: `init adds flipbench's build folder (.flipbench/) and its receipts (results/) to the
.gitignore at the repository root, so git status shows only your changes. With --ledger
it keeps the receipts instead, as the ledger of your experiments: results/ is not ignored
(commit it with the pages), and experiments/ gets its directions registry and index, so
flipbench compare --save, finalize and check have a ledger to write into. Lines and files
that exist are kept; running init twice changes nothing.`,
		Example: `  flipbench init            # ignore results/ and .flipbench/
  flipbench init --ledger   # keep results/ and experiments/ as a ledger`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(cmd.Context(), s, opts) },
	}
	cmd.Flags().BoolVar(&opts.ledger, "ledger", false, "keep the receipts as a ledger (experiments/ and results/, committed) instead of ignoring them")
	return cmd
}

func runInit(ctx context.Context, s Streams, opts *initOptions) error {
	top, err := armbuild.TopLevel(ctx, ".")
	if err != nil {
		return fmt.Errorf("init needs a git repository: %w", err)
	}
	root := top
	if r, err := ledger.FindRoot("."); err == nil {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			if rel, err := filepath.Rel(top, real); err == nil && !strings.HasPrefix(rel, "..") {
				root = real // an existing ledger in the repository
			}
		}
	}
	res, err := ledger.Init(ledger.InitOptions{Top: top, Root: root, Ledger: opts.ledger, DotDir: armbuild.DotDir})
	if err != nil {
		return err
	}
	gi := relPath(filepath.Join(top, ".gitignore"))
	if len(res.Ignored) > 0 {
		fmt.Fprintf(s.Out, "%s: added %s\n", gi, strings.Join(res.Ignored, " "))
		if changed, _ := armbuild.Uncommitted(ctx, top, filepath.Join(top, ".gitignore")); changed {
			fmt.Fprintf(s.Err, "flipbench: commit %s (git add %s) so that every clone ignores them too\n", gi, gi)
		}
	} else {
		fmt.Fprintf(s.Out, "%s: already ignores flipbench's outputs\n", gi)
	}
	for _, c := range res.Created {
		fmt.Fprintf(s.Out, "created %s\n", relPath(filepath.Join(top, filepath.FromSlash(c))))
	}
	if opts.ledger {
		if ignored, _ := armbuild.Ignored(ctx, top, filepath.Join(root, ledger.ResultsDir)); ignored {
			fmt.Fprintf(s.Err, "flipbench: warning: %s still ignores %s/: remove that line to commit the receipts with the pages\n", gi, relPath(filepath.Join(root, ledger.ResultsDir)))
		}
		fmt.Fprintf(s.Err, "flipbench: commit experiments/ and results/ with your pages; flipbench check verifies them\n")
	}
	return nil
}
