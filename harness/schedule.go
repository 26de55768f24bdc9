package harness

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

// Schedule returns every run of a protocol in execution order. For each collection and
// each pass p (1-based), the arm order is forward (base, then candidates as listed) when p is
// odd and reverse (candidates in reverse, then base) when p is even, so passes 2k-1 and 2k
// form a pass-pair that sees the same lanes in opposite orders. The lane order is shuffled
// anew for every pass from seed, so the same seed always gives the same plan. arms[0] is the
// base.
func Schedule(arms, lanes []string, collections, passes int, seed int64) []receipt.Run {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x666c697062656e63)) // "flipbenc"
	reversed := make([]string, len(arms))
	for i, a := range arms {
		reversed[len(arms)-1-i] = a
	}
	var runs []receipt.Run
	for c := 1; c <= collections; c++ {
		for p := 1; p <= passes; p++ {
			order, armOrder := driftcheck.OrderForward, arms
			if p%2 == 0 {
				order, armOrder = driftcheck.OrderReverse, reversed
			}
			laneOrder := append([]string(nil), lanes...)
			rng.Shuffle(len(laneOrder), func(i, j int) { laneOrder[i], laneOrder[j] = laneOrder[j], laneOrder[i] })
			for _, lane := range laneOrder {
				for _, arm := range armOrder {
					runs = append(runs, receipt.Run{Collection: c, Pass: p, Order: order, Lane: lane, Arm: arm})
				}
			}
		}
	}
	return runs
}

// InRounds reorders a schedule for a sequential run: round by round (pass pair k of every
// collection, collection 1 first), each pass keeping its lane order. Collections then
// interleave pair by pair, so that a run stopped after round k has k pairs in each.
func InRounds(runs []receipt.Run) []receipt.Run {
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b receipt.Run) int {
		return cmp.Or(cmp.Compare(receipt.Round(a.Pass), receipt.Round(b.Pass)), cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Pass, b.Pass))
	})
	return out
}
