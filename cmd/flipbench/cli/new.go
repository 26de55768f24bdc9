package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/verbs/ledger"
)

type newOptions struct {
	id      int
	title   string
	harness string
}

func newNewCmd(s Streams) *cobra.Command {
	opts := &newOptions{}
	cmd := &cobra.Command{
		Use:   `new NNN "title"`,
		Short: "Scaffold a new experiment page from experiments/TEMPLATE.md",
		Long: `new writes experiments/NNN-slug.md from the ledger's template (or the built-in one)
with its number, title and today's date filled in. The other placeholders (<...>) are for
you to replace; flipbench check fails until you do. A number another page has is refused.

--harness picks the template: exec (the default; prebuilt lane programs, any language,
experiments/TEMPLATE.md) or gotest (Go benchmarks, arms built from git refs,
experiments/TEMPLATE-gotest.md).`,
		Example: `  flipbench new 276 "does batching the writes help"
  flipbench new 277 "does the B-tree insert faster with a bigger node" --harness gotest`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError(`new: want a number and a title, as in: flipbench new 276 "the question"; got %d arguments`, len(args))
			}
			id, err := strconv.Atoi(args[0])
			if err != nil || id <= 0 {
				return usageError("new: experiment number %q: want a positive integer", args[0])
			}
			opts.id, opts.title = id, args[1]
			if !slices.Contains(ledger.Templates(), opts.harness) {
				return usageError("--harness %q: want one of %s", opts.harness, strings.Join(ledger.Templates(), ", "))
			}
			return runNew(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.harness, "harness", lanekind.Exec, "the template: exec (prebuilt lane programs) or gotest (Go benchmarks from git refs)")
	return cmd
}

func runNew(s Streams, opts *newOptions) error {
	root, err := ledger.FindRoot(".")
	if err != nil {
		root = "."
	}
	path, err := ledger.NewPage(relPath(root), opts.id, opts.title, opts.harness, s.Clock.Now().UTC())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "flipbench: fill in the placeholders (<...>), then run flipbench check\n")
	fmt.Fprintln(s.Out, relPath(path))
	return nil
}
