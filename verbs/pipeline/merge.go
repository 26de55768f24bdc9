package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// MergeJob joins shard receipts (flipbench ab --shard i/n) into one receipt.
type MergeJob struct {
	// Dirs are the shard receipts' data folders (or pages; a receipt's page and its folder
	// are one receipt).
	Dirs []string
	// Results is where the merged receipt folder goes; Label names it ("" means the
	// shards' label).
	Results string
	Label   string
	// Command is the command line recorded in the merged plan.
	Command []string
	// Spec is the experiment's page, whose decision rule (decide.Pending) says which
	// lanes a sequential run's looks leave pending; Pending replaces it (the gate's). A
	// sequential merge needs one of them.
	Spec    *spec.Experiment
	Pending PendingFunc
}

// MergeResult is what a merge produced.
type MergeResult struct {
	// Dir is the merged receipt's data folder and Page its page.
	Dir, Page string
	// Sources are the shard receipts joined, in stage and shard order.
	Sources []receipt.ShardSource
	// Missing are the shards of the merged stages that were not given, with the pass
	// pairs they hold: the merged receipt has no runs of those pairs.
	Missing []MissingShard
	// Looks are a sequential run's looks over the merged data. Stopped says the last one
	// stopped the run; Next is then nil.
	Looks   []receipt.Look
	Stopped bool
	// Next is the stage a sequential run needs next (every shard of it measured after
	// this merge, then a merge of every shard receipt), dealt to as many shards as the
	// last stage merged; nil when the run stopped, when a stage is incomplete, and for a
	// fixed protocol.
	Next *Stage
	// Incomplete is the first round of a sequential run some of whose pairs are missing:
	// the looks end before it. 0 when none is.
	Incomplete int
	// LeftOut is how many runs of the shards the merged receipt leaves out: measured in
	// a stage after the look that stopped their lane, or (LeftWaiting of them) in rounds
	// after an incomplete one.
	LeftOut, LeftWaiting int
	// Warnings are the merge's own warnings, also kept in the receipt's warnings.jsonl.
	Warnings []receipt.Warning
}

// DecidesNothing reports whether the merge made no look that could stop a lane: a
// sequential run whose merged data do not reach its first look (min-pairs rounds).
func (r *MergeResult) DecidesNothing(plan *receipt.Plan) bool {
	seq := plan.Protocol.Sequential
	if seq == nil || r.Stopped {
		return false
	}
	return len(r.Looks) == 0 || r.Looks[len(r.Looks)-1].Round < seq.MinPairs
}

// MissingShard is a shard of a merged stage that was not given.
type MissingShard struct {
	Index, Count       int
	FromRound, ToRound int
	Pairs              []receipt.Pair
}

// Name names the missing shard as receipt.Shard.Name does.
func (m MissingShard) Name() string {
	s := receipt.Shard{Index: m.Index, Count: m.Count, FromRound: m.FromRound, ToRound: m.ToRound}
	return s.Name()
}

// shardInput is one shard receipt read for a merge.
type shardInput struct {
	dir      string
	plan     *receipt.Plan
	recs     []receipt.Record
	env      receipt.Env
	kept     []receipt.Warning
	manifest string // the SHA-256 of its manifest.json
	hosts    []Host
}

func (in *shardInput) shard() *receipt.Shard { return in.plan.Shard }

// stageInputs are the shard receipts of one stage.
type stageInputs struct {
	from, to, count int
	lanes           []string
	byIndex         map[int]*shardInput
}

// Merge joins shard receipts into one receipt under job.Results: the plan of the shards
// (the shard field naming them), the raw runs of every shard in the schedule's order, the
// host snapshots of every shard, their kept warnings, a manifest and the page, rendered
// by Finish. Its drift check is the one a run of the same pairs on one machine gives. It
// refuses shards of different runs (protocol, seed, arms, binaries, lanes: the first
// difference, named), a shard given twice, a shard that is not finished or whose files
// changed, and a pass pair whose two passes ran on different hosts. A missing shard is
// not refused: the merged receipt names it and its pairs, which are then insufficient in
// the drift check. A sequential run's looks are made over the merged data, round by
// round as one machine would have made them (runs a look stopped are left out); the
// result says whether the run stopped or which stage comes next.
func Merge(job MergeJob, opts Options) (*MergeResult, error) {
	ins, err := loadShards(job.Dirs)
	if err != nil {
		return nil, err
	}
	stages, err := checkShards(ins)
	if err != nil {
		return nil, err
	}
	have, from, err := shardRecords(ins)
	if err != nil {
		return nil, err
	}
	plan := *ins[0].plan
	res := &MergeResult{}
	shardSources(&plan, stages, res)
	plan.Command = job.Command
	kept, err := keptRecords(job, &plan, have, from, stages, opts, res)
	if err != nil {
		return nil, err
	}
	countMerged(&plan, res, have, from, kept)

	label := job.Label
	if label == "" {
		label = plan.Label
	}
	stamp, f, err := receipt.Create(job.Results, plan.Experiment, label, opts.Clock)
	if err != nil {
		return nil, err
	}
	dir := string(f)
	plan.Stamp = stamp
	res.Dir = dir
	res.Warnings = mergeWarnings(&plan, res, dir)
	if err := writeMerged(dir, &plan, ins, kept, res); err != nil {
		f.Discard()
		return nil, err
	}
	if res.Page, err = Finish(dir); err != nil {
		f.Discard()
		return nil, fmt.Errorf("writing the merged receipt %s: %w", dir, err)
	}
	return res, nil
}

// checkShards refuses shards of different runs (the first difference of their plans,
// named) and shards whose pass pairs span hosts, and groups them by stage.
func checkShards(ins []*shardInput) ([]*stageInputs, error) {
	ref := ins[0]
	for _, in := range ins[1:] {
		if d := DiffPlans(ref.plan, in.plan); d != nil {
			return nil, fmt.Errorf("%s: %s: %s, but %s has %s; the shards of one run share one plan: the same page, flags and binaries", in.dir, d.What, d.B, ref.dir, d.A)
		}
	}
	stages, err := groupStages(ins)
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		if err := checkHosts(in); err != nil {
			return nil, err
		}
	}
	return stages, nil
}

// shardRecords gathers every shard's records by key, with the shard each came from; a
// record outside its shard's pairs and lanes, or in two shards, is refused.
func shardRecords(ins []*shardInput) (map[receipt.Key]receipt.Record, map[receipt.Key]*shardInput, error) {
	have := map[receipt.Key]receipt.Record{}
	from := map[receipt.Key]*shardInput{}
	for _, in := range ins {
		for _, rec := range in.recs {
			k := rec.Key()
			if !in.shard().Has(receipt.Run{Collection: rec.Collection, Pass: rec.Pass, Lane: rec.Lane, Arm: rec.Arm}) {
				return nil, nil, fmt.Errorf("%s: run %+v is not one of %s's pairs and lanes; its raw.jsonl was not written by its plan", in.dir, k, in.shard().Name())
			}
			if other := from[k]; other != nil {
				return nil, nil, fmt.Errorf("run %+v is in both %s and %s: their stages overlap", k, other.dir, in.dir)
			}
			have[k], from[k] = rec, in
		}
	}
	return have, from, nil
}

// shardSources names every stage's shard receipts in the merged plan's shard field, and
// lists in res the shards of each stage that were not given.
func shardSources(plan *receipt.Plan, stages []*stageInputs, res *MergeResult) {
	for _, st := range stages {
		for i := 1; i <= st.count; i++ {
			in := st.byIndex[i]
			if in == nil {
				if pairs := AssignPairs(plan, st.from, st.to, st.count)[i-1]; len(pairs) > 0 {
					res.Missing = append(res.Missing, MissingShard{Index: i, Count: st.count, FromRound: st.from, ToRound: st.to, Pairs: pairs})
				}
				continue
			}
			src := receipt.ShardSource{Receipt: filepath.Base(in.dir), ManifestSHA256: in.manifest, Index: i, Count: st.count,
				FromRound: st.from, ToRound: st.to, Pairs: in.shard().Pairs}
			for _, h := range in.hosts {
				src.Hosts = append(src.Hosts, h.String())
			}
			res.Sources = append(res.Sources, src)
		}
	}
	plan.Shard = &receipt.Shard{Count: len(res.Sources), Sources: res.Sources}
}

// keptRecords returns the records the merged receipt keeps, in the schedule's order: of
// a fixed protocol every planned run given; of a sequential one those the looks replayed
// over the stages reach (the page's rule, or job.Pending, says which lanes each look
// leaves pending), setting res.Next when a later stage is due.
func keptRecords(job MergeJob, plan *receipt.Plan, have map[receipt.Key]receipt.Record, from map[receipt.Key]*shardInput,
	stages []*stageInputs, opts Options, res *MergeResult) ([]receipt.Record, error) {
	if plan.Protocol.Sequential == nil {
		var kept []receipt.Record
		for _, r := range plan.Runs {
			if rec, ok := have[r.Key()]; ok {
				kept = append(kept, rec)
			}
		}
		return kept, nil
	}
	pending := job.Pending
	if pending == nil {
		if job.Spec == nil {
			return nil, fmt.Errorf("merging a sequential run needs its page, whose decision rule says which lanes each look leaves pending")
		}
		e := job.Spec
		pending = func(rep driftcheck.Report) []string {
			return decide.Pending(decide.Input{Spec: e, Plan: plan, Analysis: rep})
		}
	}
	kept, err := replay(plan, have, stages, pending, shardsElapsed(from), opts.events(), res)
	if err != nil {
		return nil, err
	}
	if res.Next != nil {
		*res.Next = NextStage(plan, res.Next.FromRound-1, res.Next.Lanes, stages[len(stages)-1].count)
	}
	return kept, nil
}

// countMerged counts each source's kept runs, keeps as missing only the shards the looks
// wait for (of a sequential run: later stages would have measured what a look stopped),
// names their pairs in the plan, and counts the runs left out and those left waiting for
// an incomplete round.
func countMerged(plan *receipt.Plan, res *MergeResult, have map[receipt.Key]receipt.Record, from map[receipt.Key]*shardInput, kept []receipt.Record) {
	index := map[string]int{}
	for i, src := range res.Sources {
		index[src.Receipt] = i
	}
	for _, r := range kept {
		res.Sources[index[filepath.Base(from[r.Key()].dir)]].Runs++
	}
	if plan.Protocol.Sequential != nil {
		var need []MissingShard
		for _, m := range res.Missing {
			if m.FromRound <= res.Incomplete && res.Incomplete <= m.ToRound {
				need = append(need, m)
			}
		}
		res.Missing = need
	}
	for _, m := range res.Missing {
		plan.Shard.Missing = append(plan.Shard.Missing, m.Pairs...)
	}
	res.LeftOut = len(have) - len(kept)
	if res.LeftOut == 0 {
		return
	}
	// Runs of the rounds the looks reached were stopped by a look; later ones wait for an
	// incomplete round.
	in := map[receipt.Key]bool{}
	for _, r := range kept {
		in[r.Key()] = true
	}
	end := res.Incomplete
	if res.Next != nil {
		end = res.Next.FromRound
	}
	for k := range have {
		if !in[k] && end > 0 && receipt.Round(k.Pass) > end {
			res.LeftWaiting++
		}
	}
}

// loadShards reads the shard receipts of dirs, ordered by stage and shard; each must be
// a finished shard receipt whose files match its manifest, given once.
func loadShards(dirs []string) ([]*shardInput, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no shard receipts to merge")
	}
	var ins []*shardInput
	seen := map[string]string{}
	for _, d := range dirs {
		dir := ReceiptDirOf(filepath.Clean(d))
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[abs]; ok {
			if strings.HasSuffix(prev, ".md") != strings.HasSuffix(d, ".md") {
				continue // the receipt's page and its folder (a glob of both): one receipt
			}
			return nil, fmt.Errorf("%s given twice (as %s and %s)", dir, prev, d)
		}
		seen[abs] = d
		in, err := loadShard(dir)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
	}
	slices.SortStableFunc(ins, func(a, b *shardInput) int {
		if c := a.shard().FromRound - b.shard().FromRound; c != 0 {
			return c
		}
		return a.shard().Index - b.shard().Index
	})
	return ins, nil
}

// loadShard reads one shard receipt.
func loadShard(dir string) (*shardInput, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a receipt data folder", dir)
	}
	manifest := filepath.Join(dir, receipt.ManifestFile)
	if _, err := os.Stat(manifest); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is not finished (it has no %s): flipbench ab --resume %s finishes it", dir, receipt.ManifestFile, dir)
	}
	if err := receipt.VerifyManifest(dir); err != nil {
		return nil, fmt.Errorf("%s does not match its manifest; refusing a changed receipt: %s", dir, firstLine(err.Error()))
	}
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case plan.Merged():
		return nil, fmt.Errorf("%s is a merged receipt; merge the shard receipts it joins (and any new ones) instead", dir)
	case !plan.Part():
		return nil, fmt.Errorf("%s is not a shard receipt (its plan.json has no shard): merge joins the receipts of flipbench ab --shard i/n", dir)
	}
	in := &shardInput{dir: dir, plan: plan}
	if in.recs, err = receipt.ReadRecords(dir); err != nil {
		return nil, err
	}
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.EnvFile), &in.env); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if in.kept, err = receipt.ReadWarnings(dir); err != nil {
		return nil, err
	}
	if in.manifest, err = receipt.HashFile(manifest); err != nil {
		return nil, err
	}
	for _, s := range in.env.Snapshots {
		if h := HostOf(s); !slices.Contains(in.hosts, h) {
			in.hosts = append(in.hosts, h)
		}
	}
	return in, nil
}

// groupStages groups the shard receipts by stage, in round order, and refuses a shard
// given twice, shards of one stage dealt differently, and stages that overlap.
func groupStages(ins []*shardInput) ([]*stageInputs, error) {
	var stages []*stageInputs
	byFrom := map[int]*stageInputs{}
	first := map[*stageInputs]*shardInput{}
	for _, in := range ins {
		s := in.shard()
		st := byFrom[s.FromRound]
		if st == nil {
			st = &stageInputs{from: s.FromRound, to: s.ToRound, count: s.Count, lanes: s.Lanes, byIndex: map[int]*shardInput{}}
			byFrom[s.FromRound] = st
			first[st] = in
			stages = append(stages, st)
		}
		f := first[st]
		switch {
		case s.Count != st.count || s.ToRound != st.to:
			return nil, fmt.Errorf("%s is %s, but %s is %s: the shards of one stage are dealt to one count", in.dir, s.Name(), f.dir, f.shard().Name())
		case !slices.Equal(s.Lanes, st.lanes):
			return nil, fmt.Errorf("%s runs lanes %s, but %s runs %s in the same stage: they continued different merges", in.dir, strings.Join(s.Lanes, ","), f.dir, strings.Join(st.lanes, ","))
		case st.byIndex[s.Index] != nil:
			return nil, fmt.Errorf("%s given twice: %s and %s; merge one receipt of each shard", s.Name(), st.byIndex[s.Index].dir, in.dir)
		}
		if want := AssignPairs(in.plan, s.FromRound, s.ToRound, s.Count)[s.Index-1]; !slices.Equal(want, s.Pairs) {
			return nil, fmt.Errorf("%s: its pairs are not those the seed deals to %s; its plan.json was not written by flipbench ab --shard", in.dir, s.Name())
		}
		st.byIndex[s.Index] = in
	}
	for i := 1; i < len(stages); i++ {
		if stages[i].from <= stages[i-1].to {
			return nil, fmt.Errorf("%s (%s) overlaps %s (%s): a stage starts after the rounds of the one before",
				first[stages[i]].dir, receipt.RoundsText(stages[i].from, stages[i].to), first[stages[i-1]].dir, receipt.RoundsText(stages[i-1].from, stages[i-1].to))
		}
	}
	if stages[0].from != 1 {
		return nil, fmt.Errorf("no shard of the first stage (round 1 on): %s starts at round %d; merge the shard receipts of every stage", first[stages[0]].dir, stages[0].from)
	}
	if ins[0].plan.Protocol.Sequential == nil && len(stages) != 1 {
		return nil, fmt.Errorf("%s: a fixed protocol has one stage of every round, not %s", first[stages[len(stages)-1]].dir,
			receipt.RoundsText(stages[len(stages)-1].from, stages[len(stages)-1].to))
	}
	return stages, nil
}

// checkHosts refuses a shard receipt with a pass pair whose passes ran on different hosts
// (a shard resumed on another machine): a pair compares its two orders on one machine.
func checkHosts(in *shardInput) error {
	hosts := map[receipt.Pair][]Host{}
	for _, s := range in.env.Snapshots {
		p := receipt.PairOf(s.Collection, s.Pass)
		if h := HostOf(s); !slices.Contains(hosts[p], h) {
			hosts[p] = append(hosts[p], h)
		}
	}
	measured := map[receipt.Pair]bool{}
	for _, r := range in.recs {
		measured[receipt.PairOf(r.Collection, r.Pass)] = true
	}
	for _, p := range in.shard().Pairs {
		switch hs := hosts[p]; {
		case measured[p] && len(hs) == 0:
			return fmt.Errorf("%s: %s has no host snapshot in %s, so whether it ran on one machine is unknown", in.dir, p, receipt.EnvFile)
		case len(hs) > 1:
			var names []string
			for _, h := range hs {
				names = append(names, h.String())
			}
			return fmt.Errorf("%s: %s ran on %d hosts (%s); a pass pair compares its two orders on one machine: run %s again on one", in.dir, p, len(hs), strings.Join(names, "; "), in.shard().Name())
		}
	}
	return nil
}

// replay makes a sequential run's looks over the merged records have, round by round, as
// the run would have made them on one machine (the sequence controller's look), and
// returns the records the run would have measured. It stops at the first round with no
// runs (res.Next: the stage to run next), at the first round some of whose runs are
// missing (res.Incomplete), or where a look stops the run (res.Stopped).
func replay(plan *receipt.Plan, have map[receipt.Key]receipt.Record, stages []*stageInputs, pending PendingFunc,
	elapsed func([]receipt.Record) time.Duration, events Events, res *MergeResult) ([]receipt.Record, error) {
	s := &sequence{plan: plan, pending: pending, events: events, logged: map[int]bool{}, byRound: map[int][]receipt.Run{}, elapsed: elapsed}
	s.lanes = lanesOf(plan)
	for _, r := range plan.Runs {
		k := receipt.Round(r.Pass)
		s.byRound[k] = append(s.byRound[k], r)
		s.maxRound = max(s.maxRound, k)
	}
	for k := 1; k <= s.maxRound; k++ {
		s.logged[k] = true // the merge writes the looks itself
	}
	covered := func(round int) *stageInputs {
		for _, st := range stages {
			if st.from <= round && round <= st.to {
				return st
			}
		}
		return nil
	}
	var kept []receipt.Record
	for round := 1; round <= s.maxRound; round++ {
		if st := covered(round); st != nil && st.from == round && !slices.Equal(st.lanes, s.lanes) {
			return nil, fmt.Errorf("the shards of %s run lanes %s, but the looks of the merged data leave %s pending after round %d: they continued another merge; merge the shard receipts that merge joined with them",
				receipt.RoundsText(st.from, st.to), strings.Join(st.lanes, ","), strings.Join(s.lanes, ","), round-1)
		}
		var present []receipt.Record
		missing := 0
		for _, r := range s.byRound[round] {
			if !slices.Contains(s.lanes, r.Lane) {
				continue
			}
			if rec, ok := have[r.Key()]; ok {
				present = append(present, rec)
			} else {
				missing++
			}
		}
		if len(present) == 0 && covered(round) == nil {
			res.Next = &Stage{FromRound: round, ToRound: round, Lanes: s.lanes}
			break
		}
		kept = append(kept, present...)
		if missing > 0 {
			res.Incomplete = round
			break
		}
		l, ok := s.look(kept, round)
		if !ok {
			return nil, s.err
		}
		res.Looks = append(res.Looks, l)
		s.lanes = l.Pending
		if l.Stop != "" {
			res.Stopped = true
			break
		}
	}
	return kept, nil
}

// shardsElapsed returns the measured wall time of merged records, for the budget: per
// round, the longest of the shards' parts of it (the shards of a stage run side by side,
// so a round takes as long as its slowest shard), summed.
func shardsElapsed(from map[receipt.Key]*shardInput) func([]receipt.Record) time.Duration {
	return func(recs []receipt.Record) time.Duration {
		type part struct {
			round int
			in    *shardInput
		}
		parts := map[part][]receipt.Record{}
		for _, r := range recs {
			k := part{receipt.Round(r.Pass), from[r.Key()]}
			parts[k] = append(parts[k], r)
		}
		perRound := map[int]time.Duration{}
		for k, rs := range parts {
			perRound[k.round] = max(perRound[k.round], elapsed(rs))
		}
		var total time.Duration
		for _, d := range perRound {
			total += d
		}
		return total
	}
}

// mergeWarnings says what a merged receipt lacks: missing shards and their pairs, runs
// left out, and a sequential run that is not finished.
func mergeWarnings(plan *receipt.Plan, res *MergeResult, dir string) []receipt.Warning {
	var out []receipt.Warning
	warn := func(format string, args ...any) {
		out = append(out, receipt.Warning{Stage: receipt.StageMerge, Text: fmt.Sprintf(format, args...)})
	}
	for _, m := range res.Missing {
		var pairs []string
		for _, p := range m.Pairs {
			pairs = append(pairs, p.String())
		}
		warn("%s is missing: its %d pass pairs (%s) have no runs here, so the drift check has fewer pairs than planned and the decision rule calls the receipt under-powered; run it (flipbench ab %s --shard %d/%d%s) and merge every shard receipt again",
			m.Name(), len(m.Pairs), strings.Join(pairs, ", "), pageArg(plan), m.Index, m.Count, continueArg(m.FromRound))
	}
	if n := res.LeftOut - res.LeftWaiting; n > 0 {
		warn("%d runs of the shards are left out: their stage measured them after the look that stopped their lane, which one machine would not have run; they are kept in the shard receipts", n)
	}
	if n := res.LeftWaiting; n > 0 {
		end := res.Incomplete
		if res.Next != nil {
			end = res.Next.FromRound
		}
		warn("%d runs of the shards are left out until round %d is complete: the looks cannot go past it; they are kept in the shard receipts", n, end)
	}
	if n := res.Next; n != nil {
		warn("the sequential run is not finished: the look after round %d leaves %s pending; run %s on the shards (flipbench ab %s --shard i/n --continue DIR, DIR this receipt's folder %s) and merge every shard receipt again",
			n.FromRound-1, strings.Join(n.Lanes, ", "), receipt.RoundsText(n.FromRound, n.ToRound), pageArg(plan), filepath.Base(dir))
	}
	return out
}

// pageArg is the page argument of flipbench ab for plan's experiment.
func pageArg(plan *receipt.Plan) string { return fmt.Sprint(plan.Experiment) }

// continueArg is the --continue flag a shard of a stage starting at round from needs.
func continueArg(from int) string {
	if from > 1 {
		return " --continue MERGED"
	}
	return ""
}

// writeMerged writes the merged receipt's run files into dir: plan.json, raw.jsonl,
// env.json (every shard's snapshots, in stage and shard order), warnings.jsonl (the
// shards' kept warnings, each naming its shard, then the merge's), looks.jsonl and the
// incidence report of the first shard of the first stage, if it measured one.
func writeMerged(dir string, plan *receipt.Plan, ins []*shardInput, kept []receipt.Record, res *MergeResult) error {
	f := receipt.Folder(dir)
	if err := f.WritePlan(plan); err != nil {
		return err
	}
	if err := f.WriteRecords(kept); err != nil {
		return err
	}
	var env receipt.Env
	var ws []receipt.Warning
	for _, in := range ins {
		env.Snapshots = append(env.Snapshots, in.env.Snapshots...)
		for _, w := range in.kept {
			ws = append(ws, receipt.Warning{Stage: w.Stage, Text: in.shard().Name() + ": " + w.Text})
		}
	}
	if err := f.WriteEnv(env); err != nil {
		return err
	}
	if err := f.AppendWarnings(append(ws, res.Warnings...)...); err != nil {
		return err
	}
	for _, l := range res.Looks {
		if err := f.AppendLook(l); err != nil {
			return err
		}
	}
	for _, in := range ins {
		if s := in.shard(); s.Index == 1 && s.FromRound == 1 && incidence.Exists(in.dir) {
			if err := f.CopyIncidence(receipt.Folder(in.dir)); err != nil {
				return err
			}
		}
	}
	return nil
}
