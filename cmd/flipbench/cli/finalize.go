package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/verbs/ledger"
)

type finalizeOptions struct {
	page      string
	receipt   string
	reanalyse bool
	why       string
}

func newFinalizeCmd(s Streams) *cobra.Command {
	opts := &finalizeOptions{}
	cmd := &cobra.Command{
		Use:   "finalize PAGE|NNN",
		Short: "Fill an experiment page's results, status and receipts from its newest receipt",
		Long: `finalize re-renders an experiment page from a receipt: the results block between
<!-- flipbench:results:begin --> and <!-- flipbench:results:end -->, the status set by the
decision rule (docs/decision-rule.md) with status-by: rule, and the receipts list with
SHA-256 hashes. A status set by hand (not planned or running, no status-by) is kept and the
rule's disagreement is shown in the block. The prose and every other front matter line stay
as they are; finalizing twice changes nothing. The receipt must match its manifest. The
ledger's index (experiments/README.md) is regenerated with the page, as flipbench ledger
does, so flipbench check passes after finalize.

The receipt is the experiment's newest under results/ (by stamp), or --receipt.

A page is judged by the analysis method its receipt's run was planned with (plan.json's
method), so an upgraded flipbench does not change a finished page's verdict. --reanalyse
--why "..." judges it by this flipbench's method on purpose: the page records the method
and the reason, shows the verdict of the run's own method beside the new one, and the
index marks it.`,
		Example: `  flipbench finalize 275
  flipbench finalize 275 --receipt results/2026-08-19T07-40-00Z-exp275-full
  flipbench finalize 275 --reanalyse --why "family control of the guards (issue 47)"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("finalize: want one experiment page or number, got %d arguments", len(args))
			}
			opts.page = args[0]
			switch {
			case opts.reanalyse && strings.TrimSpace(opts.why) == "":
				return usageError("--reanalyse: say why with --why \"...\"; the page records the reason")
			case !opts.reanalyse && cmd.Flags().Changed("why"):
				return usageError("--why: only with --reanalyse")
			}
			return runFinalize(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.receipt, "receipt", "", "receipt to finalize from: its data folder or its .md page (default: the newest)")
	cmd.Flags().BoolVar(&opts.reanalyse, "reanalyse", false, "judge the page by this flipbench's analysis method on purpose, not by the one its run was planned with (needs --why)")
	cmd.Flags().StringVar(&opts.why, "why", "", "with --reanalyse: the reason, recorded on the page")
	return cmd
}

func runFinalize(_ context.Context, s Streams, opts *finalizeOptions) error {
	page, root, err := ledger.FindPage(".", opts.page)
	if err != nil {
		return err
	}
	page = relPath(page)
	fo := ledger.FinalizeOptions{Root: root, Receipt: opts.receipt, Current: s.method()}
	if opts.reanalyse {
		fo.Reanalyse = opts.why
	}
	f, err := ledger.Finalize(page, fo)
	if err != nil {
		return err
	}
	for _, u := range f.Unfinished {
		fmt.Fprintf(s.Err, "flipbench: passed over %s: not finished (still measuring, or interrupted: flipbench ab --resume %s)\n", relPath(u), relPath(u))
	}
	if f.Changed {
		// What a finalize killed while writing left beside the page goes first.
		if _, err := owner.RemoveStaleTemps(filepath.Dir(page)); err != nil {
			return err
		}
		if err := atomicfile.Write(page, f.Content); err != nil {
			return err
		}
	}
	state := "updated"
	if !f.Changed {
		state = "unchanged"
	}
	fmt.Fprintf(s.Err, "flipbench: %s %s from %s\n", page, state, relPath(f.Receipt))
	// The index lists every page's status and headline: it follows the page, so that
	// flipbench check passes after finalize.
	indexChanged, err := ledger.WriteIndex(root)
	if err != nil {
		return fmt.Errorf("%s is finalized, but the index is not: %w; run flipbench ledger", page, err)
	}
	if indexChanged {
		fmt.Fprintf(s.Err, "flipbench: updated %s\n", relPath(filepath.Join(root, filepath.FromSlash(ledger.IndexFile))))
	}
	// A page changed after its run is no silent change of status: every change is named.
	for _, text := range f.Decision.SpecChanges() {
		fmt.Fprintf(s.Err, "flipbench: warning: %s: %s: %s\n", page, decide.OpenSpecChanged, text)
	}
	switch {
	case f.ByHand && f.Disagrees:
		fmt.Fprintf(s.Err, "flipbench: warning: %s: the status was set by hand and is kept; the decision rule disagrees (shown in the results block)\n", page)
		fmt.Fprintf(s.Out, "%s: %s, set by hand; the decision rule says %s\n", page, f.Status, f.Decision.Summary())
	case f.ByHand:
		fmt.Fprintf(s.Out, "%s: %s, set by hand; the decision rule agrees: %s\n", page, f.Status, f.Decision.Summary())
	default:
		fmt.Fprintf(s.Out, "%s: %s\n", page, f.Decision.Summary())
	}
	if f.Recorded != nil {
		fmt.Fprintf(s.Out, "%s: re-analysed by %s (%s); the method the run was planned with decides %s\n", page, f.Method, f.Reanalysed.Why, f.Recorded.Summary())
	}
	return nil
}
