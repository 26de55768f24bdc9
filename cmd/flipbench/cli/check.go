package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/verbs/ledger"
)

type checkOptions struct {
	json bool
}

func newCheckCmd(s Streams) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate every experiment page, its receipts and the ledger's index",
		Long: `check validates the whole ledger: each page's front matter (fields, vocabularies,
directions from experiments/directions.yaml), its sections and results markers, leftover
template placeholders, relative links, the receipts it lists (present, same SHA-256, data
folders matching their manifests: any changed byte is caught), that its results block and
status are what finalize makes from its receipt, and that experiments/README.md is current.

Every problem is printed as file:line: message; the exit status is 1 when there is any.
A note (file:line: note: message) fails nothing: a page whose verdict today's analysis
method would change keeps its verdict until it is re-analysed on purpose (flipbench
finalize --reanalyse), and the note says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(s, opts) },
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the problems as a JSON array of {file, line, message}")
	return cmd
}

func runCheck(s Streams, opts *checkOptions) error {
	root, err := ledger.FindRoot(".")
	if err != nil {
		return err
	}
	problems, err := ledger.Check(relPath(root), s.method())
	if err != nil {
		return err
	}
	if opts.json {
		type item struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Message string `json:"message"`
			Note    bool   `json:"note,omitempty"`
		}
		items := []item{}
		for _, p := range problems {
			items = append(items, item{p.File, p.Line, p.Msg, p.Note})
		}
		b, err := json.MarshalIndent(items, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "%s\n", b)
	} else {
		for _, p := range problems {
			fmt.Fprintln(s.Out, p.Error())
		}
	}
	if n := countProblems(problems); n > 0 {
		fmt.Fprintf(s.Err, "flipbench: check found %d problems\n", n)
		return silentExit(ExitError)
	}
	fmt.Fprintf(s.Err, "flipbench: the ledger is sound\n")
	return nil
}

// countProblems counts the problems that fail the check: all but the notes.
func countProblems(ps []*ledger.Problem) int {
	n := 0
	for _, p := range ps {
		if !p.Note {
			n++
		}
	}
	return n
}
