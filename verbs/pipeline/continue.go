package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// A run that continues earlier receipts (flipbench gate --continue, docs/gate.md): a gate
// that ended undecided because its budget was cut short can be rerun on the same base and
// candidate binaries and add its pairs to the earlier ones, instead of restarting its test
// on fresh looks. The continued run's plan names the receipt it continues
// (receipt.Plan.Continues); every look and the decision analyse the earlier runs and this
// run's as one data set, this run's passes numbered after theirs, and the gate reads them
// with confidence sequences (gate.Anytime), valid at any number of pairs.

// Prior is the data of the earlier receipts a run continues.
type Prior struct {
	// Dirs are the receipt folders, oldest first.
	Dirs []string
	// Rounds is how many rounds (pass pairs per collection) they hold.
	Rounds int
	// Records are their runs' records, passes renumbered to follow each other.
	Records []receipt.Record
	// Plan is the newest receipt's plan.
	Plan *receipt.Plan
	// Tuned is the rounds the continuing run's confidence sequences are tightest at
	// (receipt.Plan.ContinueTuned), set by the verb that continues (TuneFor).
	Tuned int
}

// TuneFor sets and returns the rounds the confidence sequences of a run continuing p are
// tightest at: those the first continuation fixed, when p is itself a continuation, else
// p's rounds and the continuing run's maxPairs.
func (p *Prior) TuneFor(maxPairs int) int {
	p.Tuned = p.Plan.ContinueTuned
	if p.Tuned == 0 {
		p.Tuned = p.Rounds + max(maxPairs, 1)
	}
	return p.Tuned
}

// Undecided returns an error when the newest receipt of p ended decided: its last look
// stopped because every lane was decided, or at the rule's last look (the binding end
// decides every lane there). Such a gate is not continued: adding pairs to a decided run
// until it says something else is how a result gets picked. A receipt without looks (a
// fixed protocol, a run interrupted before its first look) may be continued.
func (p *Prior) Undecided() error {
	dir := p.Dirs[len(p.Dirs)-1]
	looks, err := receipt.ReadLooks(dir)
	if err != nil || len(looks) == 0 {
		return nil
	}
	last := looks[len(looks)-1]
	if last.Stop == receipt.StopDecided || last.Stop == receipt.StopMaxPairs {
		return fmt.Errorf("--continue %s: that run ended decided (stop: %s, after round %d); only a run its budget cut short is continued", dir, last.Stop, last.Round)
	}
	return nil
}

// LoadPrior reads the receipt in dir and, when it continues one itself, the receipts
// before it.
func LoadPrior(dir string) (*Prior, error) {
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	if plan.Part() || plan.Merged() {
		return nil, fmt.Errorf("a shard's receipt cannot be continued")
	}
	p := &Prior{}
	if plan.Continues != "" {
		if p, err = LoadPrior(ContinuedDir(dir, plan)); err != nil {
			return nil, err
		}
	}
	recs, err := receipt.ReadRecords(dir)
	if err != nil {
		return nil, err
	}
	rounds := 0
	for _, r := range recs {
		rounds = max(rounds, r.MeasuredRound())
		p.Records = append(p.Records, shiftRounds(r, p.Rounds))
	}
	if rounds == 0 {
		return nil, fmt.Errorf("the receipt has no runs to continue")
	}
	p.Dirs = append(p.Dirs, dir)
	p.Rounds += rounds
	p.Plan = plan
	return p, nil
}

// ContinuedDir returns the folder of the receipt that the plan in dir continues.
func ContinuedDir(dir string, plan *receipt.Plan) string {
	if filepath.IsAbs(plan.Continues) {
		return plan.Continues
	}
	return filepath.Join(filepath.Dir(dir), plan.Continues)
}

// Check reports whether the run planned in plan may continue p: its arms run the same
// binaries with the same arguments, environment and commands, and it measures the same
// lanes with the same samples, warmup, collections and schedule (Carry gives it the same
// iteration counts). Pairs of different binaries or protocols would not estimate one
// effect. The error names the first difference.
func (p *Prior) Check(plan *receipt.Plan) error {
	old := p.Plan
	where := "--continue " + p.Dirs[len(p.Dirs)-1]
	if len(old.Arms) != len(plan.Arms) {
		return fmt.Errorf("%s: it measured %d arms, this run %d", where, len(old.Arms), len(plan.Arms))
	}
	for i, a := range plan.Arms {
		o := old.Arms[i]
		if o.Name != a.Name || !sameProgram(o, a) {
			return fmt.Errorf("%s: arm %s ran another binary or command (sha256 %s, now %s): only the same base and candidate binaries can be continued",
				where, a.Name, receipt.ShortHash(o.SHA256), receipt.ShortHash(a.SHA256))
		}
	}
	op, np := old.Protocol, plan.Protocol
	switch {
	case op.Samples != np.Samples || op.Warmup != np.Warmup:
		return fmt.Errorf("%s: it ran %d samples after %d warmup per process, this run %d after %d", where, op.Samples, op.Warmup, np.Samples, np.Warmup)
	case op.Collections != np.Collections:
		return fmt.Errorf("%s: it ran %d collections, this run %d", where, op.Collections, np.Collections)
	case op.Design != np.Design || op.SeparateArms != np.SeparateArms:
		return fmt.Errorf("%s: it ran another schedule (%q), this run %q", where, op.Design, np.Design)
	case (op.Sequential == nil) != (np.Sequential == nil):
		return fmt.Errorf("%s: one of the runs is sequential and the other is not", where)
	}
	same := len(old.Lanes) == len(plan.Lanes)
	for i := 0; same && i < len(plan.Lanes); i++ {
		same = old.Lanes[i].Name == plan.Lanes[i].Name && old.Lanes[i].Metric == plan.Lanes[i].Metric
	}
	if !same {
		return fmt.Errorf("%s: it measured lanes %s, this run %s", where, names(lanesOf(old)), names(lanesOf(plan)))
	}
	return nil
}

// Carry gives plan the earlier receipts' fixed iteration counts, so that both runs time
// the same work (and no calibration runs for those lanes).
func (p *Prior) Carry(plan *receipt.Plan) {
	for i := range plan.Lanes {
		if j := slices.IndexFunc(p.Plan.Lanes, func(l receipt.Lane) bool { return l.Name == plan.Lanes[i].Name }); j >= 0 {
			plan.Lanes[i].Iterations, plan.Lanes[i].ArmIterations = p.Plan.Lanes[j].Iterations, p.Plan.Lanes[j].ArmIterations
		}
	}
}

// From returns how the plan of a receipt in dir names the newest receipt p continues
// (receipt.Plan.Continues): relative to dir's parent when they share it, else absolute.
func (p *Prior) From(dir string) string {
	last := p.Dirs[len(p.Dirs)-1]
	if rel, err := filepath.Rel(filepath.Dir(dir), last); err == nil && filepath.Dir(rel) == "." {
		return rel
	}
	if abs, err := filepath.Abs(last); err == nil {
		return abs
	}
	return last
}

// Combine returns the plan and records of one analysis over p's runs and recs, the runs
// of the run planned in plan: this run's passes numbered after p's, and its stopping rule
// extended by p's rounds. A nil p continues nothing: plan and recs come back as they are.
func (p *Prior) Combine(plan *receipt.Plan, recs []receipt.Record) (*receipt.Plan, []receipt.Record) {
	if p == nil {
		return plan, recs
	}
	c := *plan
	c.Protocol.Passes += 2 * p.Rounds
	if c.Drift.MaxPairs > 0 { // a sequential rule's last look moves by p's rounds
		c.Drift.MaxPairs += p.Rounds
	}
	if s := plan.Protocol.Sequential; s != nil {
		seq := *s
		seq.MaxPairs += p.Rounds
		c.Protocol.Sequential = &seq
	}
	out := slices.Clone(p.Records)
	for _, r := range recs {
		out = append(out, shiftRounds(r, p.Rounds))
	}
	return &c, out
}

// shiftRounds returns r numbered after rounds earlier rounds: its pass, and the round
// that measured a re-measure.
func shiftRounds(r receipt.Record, rounds int) receipt.Record {
	r.Pass += 2 * rounds
	if r.Round > 0 {
		r.Round += rounds
	}
	return r
}

// Own returns the pass of this run that pass of an analysis over p's runs and this run's
// (Combine) is, and false for a pass of p's runs.
func (p *Prior) Own(pass int) (int, bool) {
	if p == nil {
		return pass, true
	}
	return pass - 2*p.Rounds, pass > 2*p.Rounds
}

// Analyze analyses p's runs and recs as one data set (Combine; recs alone for a nil p).
func (p *Prior) Analyze(plan *receipt.Plan, recs []receipt.Record) (driftcheck.Report, []receipt.Record, error) {
	c, all := p.Combine(plan, recs)
	rep, err := loaded.Analyze(c, all)
	return rep, all, err
}

// PriorOf loads the receipts the plan in dir continues, or returns nil when it continues
// none.
func PriorOf(dir string, plan *receipt.Plan) (*Prior, error) {
	if plan.Continues == "" {
		return nil, nil
	}
	p, err := LoadPrior(ContinuedDir(dir, plan))
	if err != nil {
		return nil, fmt.Errorf("the run continues %s: %w", plan.Continues, err)
	}
	return p, nil
}
