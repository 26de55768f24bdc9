package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
)

// Look prints a sequential run's look: the round, each lane's pooled verdict, and what
// comes next.
func (p *progress) Look(l receipt.Look) {
	next := "next round: " + laneList(l.Pending)
	if l.Stop != "" {
		next = "stop: " + l.Stop
	}
	p.mu.Lock()
	first := p.minPairs
	if l.Stop == "" && l.LastLook == 0 && p.budget > 0 && l.Round > 1 {
		// The one forecast, updated at every look from the latest round's time per lane
		// (roundsLeft, which the ETA uses too).
		if left := p.roundsLeft(l); left > 0 {
			rounds := map[bool]string{true: "round", false: "rounds"}[left == 1]
			next += fmt.Sprintf(" (the budget left buys about %d more %s, to round %d of at most %d)", left, rounds, l.Round+left, p.maxPairs)
		}
	}
	p.mu.Unlock()
	if l.Round < first {
		// Not a look of the rule: nothing is decided before its first look, so no verdict
		// is shown.
		p.note("round %d measured (%s); the rule's first look is after round %d; %s", l.Round, l.Elapsed.Round(time.Second), first, next)
	} else {
		p.note("look after round %d (%s measured): %s; %s", l.Round, l.Elapsed.Round(time.Second), p.changed(l), next)
	}
	if l.LastLook > 0 {
		if l.Round == 1 {
			p.note("the budget buys %d rounds at round 1's time: the rule's last look, where every lane is passed or failed, moves to round %d", l.LastLook, l.LastLook)
		} else {
			p.note("the budget is spent: this look, round %d, becomes the rule's last, where every lane is passed or failed", l.LastLook)
		}
	}
	p.mu.Lock()
	if l.LastLook > 0 {
		p.rounds, p.maxPairs = min(p.rounds, l.LastLook), l.LastLook
	}
	if p.perLane > 0 {
		p.reach = p.done + p.roundsLeft(l)*len(l.Pending)*p.perLane
	}
	p.lastElapsed, p.lastLanes = l.Elapsed, len(l.Pending)
	p.mu.Unlock()
}

// changed says what a look changed: the lanes whose verdict differs from the previous
// look's (at the first look, those decided), then how many lanes the rule has settled
// (no longer pending: decided, cleared, passed or given up): "Seek/cand reproduced-slower
// +6672%; 3 of 7 lanes settled", "no verdict changed; 3 of 7 lanes settled".
func (p *progress) changed(l receipt.Look) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := p.verdicts == nil
	if first {
		p.verdicts = map[string]string{}
	}
	var parts, lanes []string
	for _, ll := range l.Lanes {
		key, v := ll.Lane+"/"+ll.Arm, string(ll.Verdict)
		if !slices.Contains(lanes, ll.Lane) {
			lanes = append(lanes, ll.Lane)
		}
		if old, ok := p.verdicts[key]; (first && ll.Verdict.Decided()) || (!first && (!ok || old != v)) {
			parts = append(parts, fmt.Sprintf("%s %s %s", key, v, human.Delta(ll.EstimatePct)))
		}
		p.verdicts[key] = v
	}
	what := strings.Join(parts, ", ")
	if what == "" {
		what = "no verdict changed"
	}
	settled := 0
	for _, name := range lanes {
		if !slices.Contains(l.Pending, name) {
			settled++
		}
	}
	return fmt.Sprintf("%s; %d of %s settled", what, settled, human.Count(len(lanes), "lane", "lanes"))
}

// laneList names the lanes a round measures, the first eight and how many more.
func laneList(lanes []string) string {
	const shown = 8
	if len(lanes) <= shown {
		return strings.Join(lanes, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(lanes[:shown], ", "), len(lanes)-shown)
}

// roundsLeft is how many more rounds the run can measure after look l: to the rule's
// last round, or fewer when the budget ends first at the latest round's time per lane for
// the lanes still pending (later rounds measure fewer lanes, so the forecast's rounds
// undercount them). It expects p.mu held.
func (p *progress) roundsLeft(l receipt.Look) int {
	if l.Stop != "" || len(l.Pending) == 0 {
		return 0
	}
	d := l.Elapsed - p.lastElapsed
	if p.budget <= 0 || d <= 0 || p.lastLanes <= 0 || p.maxPairs <= 0 {
		return max(p.rounds-l.Round, 0) // the forecast's rounds
	}
	perRound := d * time.Duration(len(l.Pending)) / time.Duration(p.lastLanes)
	return min(max(p.maxPairs-l.Round, 0), max(int((p.budget-l.Elapsed)/perRound), 0))
}
