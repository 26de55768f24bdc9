package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/verbs/ledger"
)

func newSiteCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "site OUT",
		Short: "Write the ledger as a static HTML site into OUT",
		Long: `site renders the ledger into the folder OUT: index.html with every experiment, one
page per experiment, the receipts they link to and the receipts' data folders (plots
included). Raw HTML in pages is left out, never passed through.`,
		Example: `  flipbench site public && xdg-open public/index.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("site: want one output folder, got %d arguments", len(args))
			}
			return runSite(s, args[0])
		},
	}
}

func runSite(s Streams, out string) error {
	root, err := ledger.FindRoot(".")
	if err != nil {
		return err
	}
	res, err := ledger.BuildSite(relPath(root), out)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Err, "flipbench: warning: %s\n", w)
	}
	fmt.Fprintf(s.Err, "flipbench: wrote %d files\n", len(res.Files))
	fmt.Fprintln(s.Out, filepath.Join(out, "index.html"))
	return nil
}
