package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
)

type archiveOptions struct {
	page    string
	arms    []string // NAME=BRANCH
	restore string
	base    string
	force   bool
}

func newArchiveCmd(s Streams) *cobra.Command {
	opts := &archiveOptions{}
	cmd := &cobra.Command{
		Use:   "archive PAGE|NNN (--arm NAME=BRANCH ... | --restore NAME)",
		Short: "Keep a prototype branch as a patch in archive/exp-NNN/, or restore one as a branch",
		Long: `archive --arm NAME=BRANCH writes archive/exp-NNN/NAME.patch: BRANCH against its merge base
with the base arm's ref (git diff --binary MERGEBASE BRANCH, after a short preamble that
records that commit), and regenerates archive/exp-NNN/README.md (the commit each patch
applies to, the files it touches, how to restore it). The spec's archive field, when set,
names the folder instead. Use the patch as an arm: {ref: MERGEBASE, patch: archive/exp-NNN/NAME.patch}.

archive --restore NAME recreates the prototype as branch exp-NNN-NAME: a commit on top of
the recorded base commit holding the patch, made in a temporary worktree, so your checkout
is not touched.`,
		Example: `  flipbench archive 275 --arm candA=proto/admission-priority
  flipbench archive 275 --arm candA=proto/a --arm candB=proto/b --base main
  flipbench archive 275 --restore candA`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("archive: want one experiment page or number, got %d arguments", len(args))
			}
			opts.page = args[0]
			switch {
			case len(opts.arms) == 0 && opts.restore == "":
				return usageError("archive: give --arm NAME=BRANCH to archive, or --restore NAME")
			case len(opts.arms) > 0 && opts.restore != "":
				return usageError("archive: give --arm or --restore, not both")
			case opts.restore != "" && (opts.force || opts.base != ""):
				return usageError("--restore: takes no --force or --base")
			}
			name := regexp.MustCompile(spec.NamePattern)
			for _, a := range opts.arms {
				n, b, ok := strings.Cut(a, "=")
				if !ok || n == "" || b == "" {
					return usageError("--arm %s: want NAME=BRANCH", a)
				}
				if !name.MatchString(n) {
					return usageError("--arm %s: arm name must match %s", a, spec.NamePattern)
				}
				if n == spec.BaseArm {
					return usageError("--arm %s: the base arm is what patches are made against; archive a candidate", a)
				}
			}
			if opts.restore != "" && !name.MatchString(opts.restore) {
				return usageError("--restore %s: arm name must match %s", opts.restore, spec.NamePattern)
			}
			return runArchive(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.arms, "arm", nil, "archive BRANCH as arm NAME (NAME=BRANCH; repeatable)")
	f.StringVar(&opts.restore, "restore", "", "recreate archived arm NAME as branch exp-NNN-NAME")
	f.StringVar(&opts.base, "base", "", "make patches against this ref instead of the base arm's ref")
	f.BoolVar(&opts.force, "force", false, "replace an archived patch that has other content")
	return cmd
}

func runArchive(ctx context.Context, s Streams, opts *archiveOptions) error {
	exp, _, root, err := findExperiment(opts.page)
	if err != nil {
		return err
	}
	dir := armbuild.ArchiveDir(exp)
	if opts.restore != "" {
		res, err := armbuild.Restore(ctx, armbuild.RestoreOptions{Root: root, Dir: dir, Experiment: exp.ID, Arm: opts.restore})
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Err, "flipbench: restored %s/%s.patch on top of %.12s\n", dir, opts.restore, res.BaseCommit)
		fmt.Fprintf(s.Out, "%s %s\n", res.Branch, res.Commit)
		return nil
	}
	base := opts.base
	if base == "" {
		base = exp.Base().Ref
		if base == "" {
			return fmt.Errorf("arms.base is a prebuilt bin, so there is no base ref to make the patch against; give --base REF")
		}
	}
	for _, a := range opts.arms {
		name, branch, _ := strings.Cut(a, "=")
		res, err := armbuild.Archive(ctx, armbuild.ArchiveOptions{
			Root: root, Dir: dir, Experiment: exp.ID, Arm: name, Branch: branch, BaseRef: base, Force: opts.force,
		})
		if err != nil {
			return fmt.Errorf("--arm %s: %w", a, err)
		}
		what := "wrote"
		if res.Unchanged {
			what = "unchanged"
		}
		fmt.Fprintf(s.Err, "flipbench: %s %s: %s against %.12s (merge base with %s), %d files; use it as\n    %s: {ref: %s, patch: %s}\n",
			what, res.Patch, branch, res.BaseCommit, base, len(res.Files), name, res.BaseCommit, res.Patch)
		fmt.Fprintln(s.Out, res.Patch)
	}
	fmt.Fprintln(s.Out, dir+"/"+armbuild.ArchiveREADME)
	return nil
}
