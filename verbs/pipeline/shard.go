package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// ShardRequest asks for one shard of a run (flipbench ab --shard Index/Count): the pass
// pairs of one stage dealt to this machine. A pass pair runs whole on one machine, both
// orders on the same host; different pairs need not.
type ShardRequest struct {
	Index, Count int
	// Continue is the data folder of a merged receipt of a sequential run's earlier
	// stages: the shard measures its part of the rounds after the merged receipt's last
	// look, for the lanes that look left pending. Empty for a first stage.
	Continue string
}

// ErrNothingToRun is wrapped by the error of a shard that has nothing to measure: the
// merged run it continues has stopped, or no pair of the stage falls to it. No receipt
// is written.
var ErrNothingToRun = errors.New("nothing to run")

// Stage is one stage of a sharded run: its rounds (pass pairs per collection), the lanes
// it runs and the pairs dealt to each shard.
type Stage struct {
	FromRound, ToRound int
	Lanes              []string
	// Shards holds shard i's pairs at index i-1.
	Shards [][]receipt.Pair
}

// Pairs returns how many pass pairs the stage has.
func (s Stage) Pairs() int {
	n := 0
	for _, p := range s.Shards {
		n += len(p)
	}
	return n
}

// FirstStage returns the first stage of plan dealt to count shards. A fixed protocol's
// only stage is every round. A sequential run's first stage is the rounds before its
// first look can stop a lane (min-pairs), or more when the shards would otherwise not
// all have a pair, every lane of each.
func FirstStage(plan *receipt.Plan, count int) Stage {
	to := plan.Protocol.Passes / 2
	if seq := plan.Protocol.Sequential; seq != nil {
		to = min(to, max(seq.MinPairs, ceilDiv(count, plan.Protocol.Collections)))
	}
	return NewStage(plan, 1, to, lanesOf(plan), count)
}

// NextStage returns the stage of a sequential plan that follows the look after round
// round, which left lanes pending, dealt to count shards: the next round, or as many
// rounds as give every shard a pair, up to the plan's last round.
func NextStage(plan *receipt.Plan, round int, lanes []string, count int) Stage {
	from := round + 1
	to := min(plan.Protocol.Passes/2, from+ceilDiv(count, plan.Protocol.Collections)-1)
	return NewStage(plan, from, to, lanes, count)
}

// NewStage deals the pass pairs of rounds from to to of every collection of plan to
// count shards (AssignPairs).
func NewStage(plan *receipt.Plan, from, to int, lanes []string, count int) Stage {
	return Stage{FromRound: from, ToRound: to, Lanes: lanes, Shards: AssignPairs(plan, from, to, count)}
}

// AssignPairs deals the pass pairs of rounds from to to of every collection of plan to
// count shards, deterministically from the plan's seed and from: each collection's
// rounds in a seeded shuffle, dealt in turn from a seeded first shard, so that every
// shard gets as many pairs as another or one fewer, and each collection's pairs spread
// over the shards (a collection is not one machine's). Shard i's pairs are at index i-1,
// in the schedule's order.
func AssignPairs(plan *receipt.Plan, from, to, count int) [][]receipt.Pair {
	out := make([][]receipt.Pair, count)
	if count < 1 || from > to {
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(plan.Protocol.Seed), 0x7368617264<<16|uint64(from))) // "shard"
	next := rng.IntN(count)
	for c := 1; c <= plan.Protocol.Collections; c++ {
		var rounds []int
		for k := from; k <= to; k++ {
			rounds = append(rounds, k)
		}
		rng.Shuffle(len(rounds), func(i, j int) { rounds[i], rounds[j] = rounds[j], rounds[i] })
		for _, k := range rounds {
			out[next] = append(out[next], receipt.Pair{Collection: c, Round: k})
			next = (next + 1) % count
		}
	}
	rank := map[receipt.Pair]int{}
	for i, r := range plan.Runs {
		if _, ok := rank[receipt.PairOf(r.Collection, r.Pass)]; !ok {
			rank[receipt.PairOf(r.Collection, r.Pass)] = i
		}
	}
	for i := range out {
		slices.SortFunc(out[i], func(a, b receipt.Pair) int { return rank[a] - rank[b] })
	}
	return out
}

func ceilDiv(a, b int) int {
	if b < 1 {
		return a
	}
	return (a + b - 1) / b
}

// shardOf returns the shard of plan that req asks for, or an error wrapping
// ErrNothingToRun when the shard has nothing to measure.
func shardOf(plan *receipt.Plan, req ShardRequest) (*receipt.Shard, error) {
	if req.Count < 1 || req.Index < 1 || req.Index > req.Count {
		return nil, fmt.Errorf("--shard %d/%d: want i/n with 1 <= i <= n", req.Index, req.Count)
	}
	var st Stage
	sh := &receipt.Shard{Index: req.Index, Count: req.Count}
	if req.Continue == "" {
		st = FirstStage(plan, req.Count)
		if n := st.Pairs(); req.Count > n {
			return nil, fmt.Errorf("--shard %d/%d: the run has %d pass pairs to deal (%d collections x %s); use at most %d shards",
				req.Index, req.Count, n, plan.Protocol.Collections, receipt.RoundsText(st.FromRound, st.ToRound), n)
		}
	} else {
		var err error
		if st, err = continueStage(plan, req, sh); err != nil {
			return nil, err
		}
	}
	sh.FromRound, sh.ToRound, sh.Lanes, sh.Pairs = st.FromRound, st.ToRound, st.Lanes, st.Shards[req.Index-1]
	if len(sh.Pairs) == 0 {
		return nil, fmt.Errorf("%w: %s deals %d pass pairs to %d shards, none to %s", ErrNothingToRun,
			receipt.RoundsText(st.FromRound, st.ToRound), st.Pairs(), req.Count, sh.Name())
	}
	return sh, nil
}

// continueStage returns the stage after the last look of the merged receipt
// req.Continue, whose plan must be plan's, and records in sh what it continues.
func continueStage(plan *receipt.Plan, req ShardRequest, sh *receipt.Shard) (Stage, error) {
	dir := ReceiptDirOf(filepath.Clean(req.Continue))
	fail := func(format string, args ...any) (Stage, error) {
		return Stage{}, fmt.Errorf("--continue %s: "+format, append([]any{dir}, args...)...)
	}
	if plan.Protocol.Sequential == nil {
		return fail("the run has a fixed protocol: its only stage is every pair (flipbench ab --shard i/n without --continue)")
	}
	if _, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); err != nil {
		return fail("not a finished receipt (no %s): give the folder flipbench merge wrote", receipt.ManifestFile)
	}
	if err := receipt.VerifyManifest(dir); err != nil {
		return fail("changed since it was merged: %s", firstLine(err.Error()))
	}
	merged, err := receipt.ReadPlan(dir)
	if err != nil {
		return fail("%v", err)
	}
	if !merged.Merged() {
		return fail("not a merged receipt (flipbench merge writes them); a shard continues the merge of the shards before it")
	}
	if d := DiffPlans(merged, plan); d != nil {
		return fail("%s: %s here, but the merged run has %s; a stage runs the plan of the stages before it (the same page, flags and binaries)", d.What, d.B, d.A)
	}
	looks, err := receipt.ReadLooks(dir)
	if err != nil {
		return fail("%v", err)
	}
	if len(looks) == 0 {
		return fail("the merged receipt has no look yet: its first stage is incomplete; run the missing shards of the first stage and merge again")
	}
	last := looks[len(looks)-1]
	if last.Stop != "" {
		return Stage{}, fmt.Errorf("%w: the merged run %s stopped after round %d (%s)", ErrNothingToRun, dir, last.Round, last.Stop)
	}
	sum, err := receipt.HashFile(filepath.Join(dir, receipt.ManifestFile))
	if err != nil {
		return fail("%v", err)
	}
	sh.Continues, sh.ContinuesSHA256 = filepath.Base(dir), sum
	return NextStage(plan, last.Round, last.Pending, req.Count), nil
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// checkExpectArms refuses arms whose binaries differ from the expected ones (flipbench
// build --json of the machine that built them): a shard measuring another build would
// be refused by the merge after it ran.
func checkExpectArms(arms, expect []receipt.Arm, source string) error {
	for _, want := range expect {
		i := slices.IndexFunc(arms, func(a receipt.Arm) bool { return a.Name == want.Name })
		if i < 0 {
			return fmt.Errorf("--arms %s: arm %s is not an arm of the experiment", source, want.Name)
		}
		if got := arms[i]; got.SHA256 != want.SHA256 {
			return fmt.Errorf("--arms %s: arm %s: this machine's binary %s has sha256 %s, %s says %s; the shards would measure different builds",
				source, want.Name, got.Bin, receipt.ShortHash(got.SHA256), source, receipt.ShortHash(want.SHA256))
		}
	}
	return nil
}

// ReadArms reads the arms of flipbench build --json from path.
func ReadArms(path string) ([]receipt.Arm, error) {
	var arms []receipt.Arm
	if err := receipt.ReadJSON(path, &arms); err != nil {
		return nil, err
	}
	for i, a := range arms {
		if a.Name == "" || a.SHA256 == "" {
			return nil, fmt.Errorf("%s: arms[%d]: want a name and a sha256 (the output of flipbench build --json)", path, i)
		}
	}
	return arms, nil
}

// Host is a machine that measured pass pairs: its name and its fingerprint (CPU model,
// cores, kernel, Go version; calibrate.Host).
type Host struct {
	Name string `json:"hostname"`
	calibrate.Host
}

// HostOf returns the host of a snapshot.
func HostOf(s receipt.Snapshot) Host { return Host{Name: s.Hostname, Host: calibrate.HostOf(s)} }

// String describes the host in a line: "name: fingerprint".
func (h Host) String() string { return h.Name + ": " + h.Host.String() }

// PlanDiff is the first difference between two plans of one run: what differs and its
// value in each.
type PlanDiff struct {
	What string
	A, B string
}

// DiffPlans returns the first difference between plans a and b that would keep their
// runs from being one run, or nil. The shard, the stamp and the command line are not
// compared, nor where the arms' binaries and working folders are on each machine: their
// contents are compared by hash.
func DiffPlans(a, b *receipt.Plan) *PlanDiff {
	diff := func(what string, x, y any) *PlanDiff {
		if reflect.DeepEqual(x, y) {
			return nil
		}
		return &PlanDiff{What: what, A: text(x), B: text(y)}
	}
	checks := []func() *PlanDiff{
		func() *PlanDiff { return diff("experiment", a.Experiment, b.Experiment) },
		func() *PlanDiff { return diff("page", a.Page, b.Page) },
		func() *PlanDiff { return diff("protocol", protocolText(a.Protocol), protocolText(b.Protocol)) },
		func() *PlanDiff { return diff("seed", a.Protocol.Seed, b.Protocol.Seed) },
		func() *PlanDiff { return diff("profile", a.Profile, b.Profile) },
		func() *PlanDiff { return diff("label", a.Label, b.Label) },
		func() *PlanDiff { return diff("arms", armNames(a), armNames(b)) },
		func() *PlanDiff {
			for i := range a.Arms {
				if d := diff("arm "+a.Arms[i].Name+"'s binary", "sha256 "+a.Arms[i].SHA256, "sha256 "+b.Arms[i].SHA256); d != nil {
					return d
				}
				if d := diff("arm "+a.Arms[i].Name, armSetup(a.Arms[i]), armSetup(b.Arms[i])); d != nil {
					return d
				}
			}
			return nil
		},
		func() *PlanDiff { return diff("lanes", strings.Join(lanesOf(a), ","), strings.Join(lanesOf(b), ",")) },
		func() *PlanDiff {
			for i := range a.Lanes {
				if d := diff("lane "+a.Lanes[i].Name, a.Lanes[i], b.Lanes[i]); d != nil {
					return d
				}
			}
			return nil
		},
		func() *PlanDiff { return diff("drift check settings", a.Drift, b.Drift) },
		func() *PlanDiff { return diff("decision rule", a.Rule, b.Rule) },
		func() *PlanDiff { return diff("title", a.Title, b.Title) },
		func() *PlanDiff { return diff("schedule", a.Runs, b.Runs) },
	}
	for _, c := range checks {
		if d := c(); d != nil {
			return d
		}
	}
	return nil
}

// text formats a compared value: strings and numbers as they are, others as JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return `""`
		}
		return x
	case int, int64:
		return fmt.Sprint(x)
	case receipt.Lane:
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// protocolText describes a protocol apart from its seed: "sequential (pairs 2 to 6,
// budget 10m0s), 8 samples, 0 warmup, 12 passes, 2 collections, timeout 0s".
func protocolText(p receipt.Protocol) string {
	kind := "fixed"
	if s := p.Sequential; s != nil {
		kind = fmt.Sprintf("sequential (pairs %d to %d, budget %s)", s.MinPairs, s.MaxPairs, s.Budget)
	}
	return fmt.Sprintf("%s, %d samples, %d warmup, %d passes, %d collections, timeout %s", kind, p.Samples, p.Warmup, p.Passes, p.Collections, p.Timeout)
}

// armNames lists a plan's arms, comma-separated.
func armNames(p *receipt.Plan) string {
	var names []string
	for _, a := range p.Arms {
		names = append(names, a.Name)
	}
	return strings.Join(names, ",")
}

// armSetup is an arm apart from its binary's path, hash and working folder: what must be
// the same on every machine.
func armSetup(a receipt.Arm) receipt.Arm {
	a.Bin, a.SHA256, a.Dir = "", "", ""
	return a
}

// shardSuffix is what a shard's receipt folder adds to its label: "-shard1of2", and the
// first round of a later stage ("-shard1of2-round3").
func shardSuffix(s *receipt.Shard) string {
	suffix := fmt.Sprintf("-shard%dof%d", s.Index, s.Count)
	if s.FromRound > 1 {
		suffix += fmt.Sprintf("-round%d", s.FromRound)
	}
	return suffix
}

// measuresIncidence reports whether a run of plan measures the spec's incidence suite:
// a whole run does, and of a sharded one the first shard of the first stage, whose
// report the merge takes.
func measuresIncidence(plan *receipt.Plan) bool {
	return plan.Shard == nil || plan.Shard.Index == 1 && plan.Shard.FromRound == 1
}

// once is a harness.Next that returns runs once.
func once(runs []receipt.Run) harness.Next {
	given := false
	return func([]receipt.Record) []receipt.Run {
		if given {
			return nil
		}
		given = true
		return runs
	}
}
