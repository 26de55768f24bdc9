package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/verbs/ledger"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

type mergeOptions struct {
	dirs    []string
	results string
	label   string
	args    []string
}

func newMergeCmd(s Streams) *cobra.Command {
	opts := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Join the receipts of a run's shards (ab --shard i/n) into one receipt",
		Long: `merge joins shard receipts into one receipt whose drift check is the one a run of the
same pass pairs on one machine gives: the shards' plan, every shard's raw runs and host
snapshots, a manifest and the page. It refuses shards of different runs (protocol, seed,
arms, binaries, lanes), a shard given twice, and a pass pair whose passes ran on two
hosts. A missing shard is named in the receipt, its pairs insufficient (exit 1 after the
receipt is written). A sequential run's looks are made over the merged data: merge says
whether the run stopped, or which round comes next and which pairs each shard runs
(flipbench ab --shard i/n --continue MERGED). The receipt's path is the last line of
stdout. See docs/shards.md.`,
		Example: `  flipbench merge shards/*-exp001-quick-shard*
  flipbench merge shard-1/results/* shard-2/results/* --results results`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("merge: want the shard receipts' data folders")
			}
			opts.dirs = args
			if opts.label != "" && !labelPattern.MatchString(opts.label) {
				return usageError("--label %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", opts.label)
			}
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runMerge(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.results, "results", "", "where the merged receipt goes (default: results/ beside experiments/)")
	f.StringVar(&opts.label, "label", "", "receipt label (default: the shards' label)")
	return cmd
}

func runMerge(ctx context.Context, s Streams, opts *mergeOptions) error {
	first := pipeline.ReceiptDirOf(opts.dirs[0])
	plan, err := receipt.ReadPlan(first)
	if err != nil {
		return err
	}
	job := pipeline.MergeJob{Dirs: opts.dirs, Label: opts.label, Command: opts.args}
	page, root, perr := pageOfPlan(first, plan)
	if perr == nil {
		if job.Spec, perr = spec.ParseFile(relPath(page)); perr != nil {
			return perr
		}
	}
	if plan.Protocol.Sequential != nil && job.Spec == nil {
		return fmt.Errorf("the page of experiment %d is not found (%v): a sequential run's looks need its decision rule; merge in the ledger", plan.Experiment, perr)
	}
	switch {
	case opts.results != "":
		job.Results = opts.results
	case root != "":
		job.Results = resultsDir(root, "")
	default:
		r, err := ledger.FindRoot(".")
		if err != nil {
			return fmt.Errorf("no ledger found from here (%v): give --results", err)
		}
		job.Results = resultsDir(r, "")
	}
	events := newProgress(s)
	res, err := pipeline.Merge(job, pipeline.Options{Events: events, Clock: s.Clock})
	events.Finish()
	if err != nil {
		return err
	}
	for _, src := range res.Sources {
		sh := receipt.Shard{Index: src.Index, Count: src.Count, FromRound: src.FromRound, ToRound: src.ToRound}
		fmt.Fprintf(s.Err, "flipbench: merged %s (%s): %s of %s, host %s\n",
			sh.Name(), src.Receipt, human.Count(src.Runs, "run", "runs"), human.Count(len(src.Pairs), "pass pair", "pass pairs"), strings.Join(src.Hosts, "; "))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Err, "flipbench: warning: %s\n", w.Text)
	}
	mergeSummary(s, plan, res)
	fmt.Fprintln(s.Out, relPath(res.Page))
	if len(res.Missing) > 0 || res.Incomplete > 0 {
		fmt.Fprintf(s.Err, "flipbench: the merged receipt lacks the pairs of missing shards; run them and merge again\n")
		return silentExit(ExitError)
	}
	return nil
}

// mergeSummary says what a merge of a sequential run decided: that the run stopped, or
// which stage comes next and its pairs per shard, or that it decided nothing.
func mergeSummary(s Streams, plan *receipt.Plan, res *pipeline.MergeResult) {
	seq := plan.Protocol.Sequential
	if seq == nil {
		return
	}
	if res.DecidesNothing(plan) {
		reach := "no round"
		if n := len(res.Looks); n > 0 {
			reach = fmt.Sprintf("round %d", res.Looks[n-1].Round)
		}
		fmt.Fprintf(s.Err, "flipbench: sequential: this merge decides nothing: the first look comes after round %d (min-pairs), and the merged data reach %s\n", seq.MinPairs, reach)
	}
	if res.Stopped {
		last := res.Looks[len(res.Looks)-1]
		fmt.Fprintf(s.Err, "flipbench: %s\n", stopLine(last))
		return
	}
	n := res.Next
	if n == nil {
		return
	}
	if k := len(res.Looks); k >= 2 && res.Looks[k-1].Round > seq.MinPairs && slices.Equal(res.Looks[k-1].Pending, res.Looks[k-2].Pending) {
		fmt.Fprintf(s.Err, "flipbench: sequential: the look after round %d decided no lane\n", res.Looks[k-1].Round)
	}
	var parts []string
	for i, pairs := range n.Shards {
		var ps []string
		for _, p := range pairs {
			ps = append(ps, p.String())
		}
		if len(ps) == 0 {
			ps = []string{"nothing"}
		}
		parts = append(parts, fmt.Sprintf("shard %d/%d runs %s", i+1, len(n.Shards), strings.Join(ps, ", ")))
	}
	fmt.Fprintf(s.Err, "flipbench: sequential: next, %s for lanes %s: %s; run flipbench ab %d --shard i/%d --continue %s on each, then merge every shard receipt again\n",
		receipt.RoundsText(n.FromRound, n.ToRound), strings.Join(n.Lanes, ", "), strings.Join(parts, "; "), plan.Experiment, len(n.Shards), relPath(res.Dir))
}
