package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/verbs/ledger"
)

func newSiteCmd(s Streams) *cobra.Command {
	var receiptDir string
	cmd := &cobra.Command{
		Use:   "site OUT | site --receipt RECEIPT [OUT.html]",
		Short: "Write the ledger as a static HTML site into OUT, or one receipt as one HTML page",
		Long: `site renders the ledger into the folder OUT: index.html with every experiment, one
page per experiment, the receipts they link to and the receipts' data folders (plots
included). Raw HTML in pages is left out, never passed through.

--receipt RECEIPT renders one receipt (its data folder, results/<stamp>-expNNN-<label>, or
its page) as a single HTML file that a browser opens with nothing beside it: the page,
the style sheet and the plots inside it; a CI job can upload it as it is. It is written
to OUT.html, by default beside the receipt's page (results/<stamp>-expNNN-<label>.html),
where the page's links into the data folder reach its files; needs no ledger.`,
		Example: `  flipbench site public && xdg-open public/index.html
  flipbench site --receipt results/2026-12-07T13-36-49Z-exp000-compare`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if receiptDir != "" {
				if len(args) > 1 {
					return usageError("site --receipt: want at most one output file, got %d arguments", len(args))
				}
				return runReceiptHTML(s, receiptDir, args)
			}
			if len(args) != 1 {
				return usageError("site: want one output folder, got %d arguments", len(args))
			}
			return runSite(s, args[0])
		},
	}
	cmd.Flags().StringVar(&receiptDir, "receipt", "", "render this one receipt (a receipt folder or its page) as a single HTML file")
	return cmd
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

// runReceiptHTML writes one receipt as one HTML file: args[0], or beside its page.
func runReceiptHTML(s Streams, dir string, args []string) error {
	dir = strings.TrimSuffix(filepath.Clean(dir), ".md")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError("--receipt %s: not a receipt folder (results/<stamp>-expNNN-<label>)", dir)
	}
	data, err := ledger.ReceiptHTML(dir)
	if err != nil {
		return err
	}
	out := dir + ".html"
	if len(args) == 1 {
		out = args[0]
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(s.Out, out)
	return nil
}
