package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

type buildOptions struct {
	page    string
	json    bool
	rebuild bool
	args    []string
}

func newBuildCmd(s Streams) *cobra.Command {
	opts := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build PAGE|NNN",
		Short: "Build the arms of an experiment and print each binary with its SHA-256",
		Long: `build builds every arm of an experiment exactly as ab does, without measuring: git arms
in their own worktrees under .flipbench/, with the harness source copied over and the
binaries cached under .flipbench/cache/ (a second build of the same arms rebuilds nothing).
Lanes of a gotest harness are checked in every arm. stdout gets one line per arm:
"ARM SHA256 BINARY".`,
		Example: `  flipbench build 275
  flipbench build 275 --rebuild
  flipbench build experiments/275-admission-priority.md --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("build: want one experiment page or number, got %d arguments", len(args))
			}
			opts.page = args[0]
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runBuild(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the built arms as a JSON array (the receipt's arm records)")
	f.BoolVar(&opts.rebuild, "rebuild", false, "ignore cached binaries and build every git arm again")
	return cmd
}

func runBuild(ctx context.Context, s Streams, opts *buildOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	exp, _, root, err := findExperiment(opts.page)
	if err != nil {
		return err
	}
	// Building competes with a measurement for the machine, so it takes the same lock.
	lock, err := acquireLockWait(ctx, s, opts.args, "", 0)
	if err != nil {
		return err
	}
	defer lock.Release()

	// The layout builds an ab of the page runs (protocol.layouts) are built too, so that
	// it builds nothing more.
	arms, err := armbuild.Build(ctx, exp, armbuild.Options{Root: root, Log: s.Err, Rebuild: opts.rebuild, Clock: s.Clock,
		Layouts: pipeline.LayoutsOf(exp, spec.Overrides{})})
	if err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(arms)
	}
	for _, a := range arms {
		fmt.Fprintf(s.Out, "%s %s %s\n", a.Name, a.SHA256, a.Bin)
	}
	return nil
}
