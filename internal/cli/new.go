package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/ledger"
)

type newOptions struct {
	id    int
	title string
	now   func() time.Time
}

func newNewCmd(s Streams) *cobra.Command {
	opts := &newOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   `new NNN "title"`,
		Short: "Scaffold a new experiment page from experiments/TEMPLATE.md",
		Long: `new writes experiments/NNN-slug.md from the ledger's template (or the built-in one)
with its number, title and today's date filled in. The other placeholders (<...>) are for
you to replace; flipbench check fails until you do. A number another page has is refused.`,
		Example: `  flipbench new 276 "does batching the writes help"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError(`new: want a number and a title, as in: flipbench new 276 "the question"; got %d arguments`, len(args))
			}
			id, err := strconv.Atoi(args[0])
			if err != nil || id <= 0 {
				return usageError("new: experiment number %q: want a positive integer", args[0])
			}
			opts.id, opts.title = id, args[1]
			return runNew(s, opts)
		},
	}
	return cmd
}

func runNew(s Streams, opts *newOptions) error {
	root, err := ledger.FindRoot(".")
	if err != nil {
		root = "."
	}
	path, err := ledger.NewPage(relPath(root), opts.id, opts.title, opts.now().UTC())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "flipbench: fill in the placeholders (<...>), then run flipbench check\n")
	fmt.Fprintln(s.Out, relPath(path))
	return nil
}
