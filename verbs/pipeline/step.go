package pipeline

import (
	"slices"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// StepInput is what a sequential run's look decides from, after the analysis of rounds
// 1..Round.
type StepInput struct {
	Plan *receipt.Plan
	Rep  driftcheck.Report
	// Round is the round just measured; Pending the lanes the rule still needs of those
	// that ran in it (every lane before the first look); Elapsed the measured time so far.
	Round   int
	Pending []string
	Elapsed time.Duration
	// RoundTime prices a round of the given lanes from the rounds so far (nextRound).
	RoundTime func(lanes []string) time.Duration
	// MaxRound, when above 0, is a last round the run was given besides max-pairs (a
	// shard's stage); Named the lanes earlier looks named undecidable.
	MaxRound int
	Named    map[string]bool
}

// Step is what a look decides: the lanes the next round measures, the lanes it names
// undecidable within the budget, why the run stops ("" when it goes on), and the round
// the rule's last look moves to (0: it stays).
type Step struct {
	Pending     []string
	Undecidable []receipt.UndecidableLane
	Stop        string
	Fit         int
}

// NextStep is the stopping rule of a sequential run, as the pipeline applies it after
// every round and the simulator replays it: stop when every lane is decided or max-pairs
// ran; when a round of every pending lane would end past the budget, move the last look
// to this round for a plan fitted to its budget, else measure the pending lanes one more
// pair buys the most (budgetRound) and stop when none fits; otherwise name the lanes the
// budget cannot decide, and stop measuring them only where the plan says so
// (receipt.Sequential.StopUndecidable, which older plans recorded).
func NextStep(in StepInput) Step {
	seq := in.Plan.Protocol.Sequential
	st := Step{Pending: in.Pending, Fit: fitBudget(seq, in.Round, in.Elapsed)}
	first := max(seq.MinPairs, 2)
	next := in.RoundTime(in.Pending)
	switch {
	case len(in.Pending) == 0:
		st.Stop = receipt.StopDecided
	case in.Round >= seq.MaxPairs || in.MaxRound > 0 && in.Round >= in.MaxRound:
		st.Stop = receipt.StopMaxPairs
	case seq.Budget > 0 && in.Elapsed+next > seq.Budget:
		if seq.FitBudget && in.Round >= first && in.Round < seq.MaxPairs {
			st.Fit = in.Round
		} else if in.Round >= first {
			st.Pending = budgetRound(in.Rep, in.Pending, seq.Budget-in.Elapsed, in.RoundTime)
		}
		if st.Fit > 0 || len(st.Pending) == 0 || in.Round < first {
			st.Stop = receipt.StopBudget
		}
	case in.Round >= first:
		st.Undecidable, st.Pending = undecidable(in, next)
		if len(st.Pending) == 0 {
			st.Stop = receipt.StopUndecidable
		}
	}
	if st.Stop != "" {
		st.Pending = []string{}
	}
	return st
}

// fitBudget returns the round the rule's last look moves to after round (0: it stays):
// for a plan that fits its rule to the budget (receipt.Sequential.FitBudget), after round
// 1, the rounds the budget buys at round 1's time when that is fewer than max-pairs and
// at least the first look's round. Round 1 takes no decision (min-pairs is at least 2
// wherever a decision is read), so moving the last look spends no error rate twice.
func fitBudget(seq *receipt.Sequential, round int, elapsed time.Duration) int {
	if !seq.FitBudget || round != 1 || seq.Budget <= 0 || elapsed <= 0 {
		return 0
	}
	fit := int(seq.Budget / elapsed)
	if fit >= seq.MaxPairs || fit < max(seq.MinPairs, 2) {
		return 0
	}
	return fit
}

// undecidable finds the pending lanes that cannot be decided within the budget at their
// noise (Undecidable, at next per round), leaving out lanes an earlier look named; it
// returns them, marking those it stops, and the lanes still pending. A lane is stopped
// when the plan's rule stops undecidable lanes and the decision rule does not read it
// (RuleReads).
func undecidable(in StepInput, next time.Duration) ([]receipt.UndecidableLane, []string) {
	rep := in.Rep
	rep.Pooled = slices.DeleteFunc(slices.Clone(rep.Pooled), func(p driftcheck.LaneSummary) bool {
		return in.Named[p.Lane] || !slices.Contains(in.Pending, p.Lane)
	})
	b := BudgetOf(in.Plan, receipt.Look{Round: in.Round, Elapsed: in.Elapsed})
	b.PerRound = next
	us := Undecidable(rep, b)
	stop := in.Plan.Protocol.Sequential.StopUndecidable
	pending := in.Pending
	for i := range us {
		if stop && !RuleReads(in.Plan, us[i].Lane) {
			us[i].Stopped = true
			pending = slices.DeleteFunc(slices.Clone(pending), func(n string) bool { return n == us[i].Lane })
		}
	}
	return us, pending
}
