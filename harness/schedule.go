package harness

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

// Schedule returns every run of a protocol in execution order, on the design ArmDesign
// returns for the arms (arms[0] is the base). Pass-pair k of a collection (passes 2k-1 and
// 2k) takes one of the design's arm orders, rotating with the pair and the collection so
// that every order is used equally often; each lane runs that order in one pass of the
// pair and its reverse in the other, so linear drift cancels within the pair, and the
// lanes of a pass alternate between the order and its reverse, so that every arm follows
// every other arm's process, its own included. The lane order is shuffled anew for every
// pass from seed, so the same seed always gives the same plan. Run.Position is the arm's
// place among its lane's runs in the pass; Run.Order is forward for the design's order and
// reverse for its reverse. With separate, a pass runs every lane's first arm, then every
// lane's second, and so on, so that other lanes' processes lie between the arms of one
// lane (for a lane whose run carries over into the next process).
func Schedule(arms, lanes []string, collections, passes int, seed int64, separate bool) []receipt.Run {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x666c697062656e63)) // "flipbenc"
	orders := ArmDesign(len(arms)).Orders
	var runs []receipt.Run
	for c := 1; c <= collections; c++ {
		var first map[string]bool // lanes that ran the design's order in the pair's first pass
		for p := 1; p <= passes; p++ {
			order := orders[(receipt.Round(p)-1+c-1)%len(orders)]
			laneOrder := slices.Clone(lanes)
			rng.Shuffle(len(laneOrder), func(i, j int) { laneOrder[i], laneOrder[j] = laneOrder[j], laneOrder[i] })
			if p%2 == 1 {
				first = map[string]bool{}
				for i, lane := range laneOrder {
					first[lane] = i%2 == 0
				}
			}
			groups := make([][]receipt.Run, len(laneOrder))
			for i, lane := range laneOrder {
				forward := first[lane] == (p%2 == 1)
				for pos := range arms {
					at := pos
					if !forward {
						at = len(arms) - 1 - pos
					}
					r := receipt.Run{Collection: c, Pass: p, Order: driftcheck.OrderForward, Lane: lane, Arm: arms[order[at]], Position: pos + 1}
					if !forward {
						r.Order = driftcheck.OrderReverse
					}
					groups[i] = append(groups[i], r)
				}
			}
			if separate {
				for pos := range arms {
					for _, g := range groups {
						runs = append(runs, g[pos])
					}
				}
				continue
			}
			for _, g := range groups {
				runs = append(runs, g...)
			}
		}
	}
	return runs
}

// Design is a set of arm orders, as indexes into the arms (0 is the base), each used with
// its reverse in a pass-pair.
type Design struct {
	// Kind names the construction: "flip" for two arms, "williams" for more.
	Kind string
	// Orders are the forward orders of the design's pass-pairs.
	Orders [][]int
}

// ArmDesign returns the Williams design for k arms, as pairs of an order and its reverse.
// A Williams design is a set of orders in which every arm takes every position equally
// often and follows every other arm equally often: first-order carryover is balanced. Its
// first order is 0, 1, k-1, 2, k-2, ...; the others add 1, 2, ... k-1 to it modulo k; for
// odd k the reversed orders join them. Both halves of every pass-pair come from it: for
// even k the order plus k/2 is the reverse of the order, for odd k the reverses are the
// mirror half. Two arms give the plain flip (0 1, then 1 0).
func ArmDesign(k int) Design {
	if k < 2 {
		return Design{Kind: "single", Orders: [][]int{make([]int, k)}}
	}
	base := make([]int, k)
	lo, hi := 1, k-1
	for i := 1; i < k; i++ {
		if i%2 == 1 {
			base[i], lo = lo, lo+1
		} else {
			base[i], hi = hi, hi-1
		}
	}
	shift := func(d int) []int {
		row := make([]int, k)
		for i, v := range base {
			row[i] = (v + d) % k
		}
		return row
	}
	n := k // odd k: every shift is a pair's forward order, its reverse the mirror half
	if k%2 == 0 {
		n = k / 2 // even k: the shift by k/2 is the reverse of the shift by 0
	}
	d := Design{Kind: "williams", Orders: make([][]int, n)}
	if k == 2 {
		d.Kind = "flip"
	}
	for i := range n {
		d.Orders[i] = shift(i)
	}
	return d
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
