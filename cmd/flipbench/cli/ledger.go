package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/verbs/ledger"
)

func newLedgerCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "ledger",
		Short: "Regenerate experiments/README.md, the index of all experiments",
		Long: `ledger rewrites experiments/README.md from the experiment pages: newest first, with
number, title, status, directions, date, the headline delta from each page's newest receipt,
and a link. flipbench check fails when the index is out of date.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLedger(s) },
	}
}

func runLedger(s Streams) error {
	root, err := ledger.FindRoot(".")
	if err != nil {
		return err
	}
	root = relPath(root)
	changed, err := ledger.WriteIndex(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, filepath.FromSlash(ledger.IndexFile))
	if !changed {
		fmt.Fprintf(s.Err, "flipbench: %s is up to date\n", path)
	}
	fmt.Fprintln(s.Out, path)
	return nil
}
