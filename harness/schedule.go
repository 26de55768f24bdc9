package harness

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// Schedule returns every run of a protocol in execution order, on the design ArmDesign
// returns for the arms (arms[0] is the base). Pass-pair k of a collection (passes 2k-1 and
// 2k) takes one of the design's arm orders, rotating with the pair and the collection so
// that every order is used equally often; each lane runs that order in one pass of the
// pair and its reverse in the other, so linear drift cancels within the pair, and the
// lanes of a pass alternate between the order and its reverse (Seat), in both passes of
// the pair, so that every arm follows every other arm's process, its own included, and
// with two arms each lane's runs follow the same arm. The lane order is shuffled anew for
// every pass from seed (before seating), so the same seed always gives the same plan.
// Run.Position is the arm's place among its lane's runs in the pass; Run.Order is forward
// for the design's order and reverse for its reverse. With separate, a pass runs every
// lane's first arm, then every lane's second, and so on, so that other lanes' processes
// lie between the arms of one lane (for a lane whose run carries over into the next
// process).
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
			runs = append(runs, slices.Concat(groups...)...)
		}
	}
	if separate {
		return runs
	}
	return Seat(runs, "")
}

// Seat reorders the lanes of each pass in runs (runs in execution order, each lane's runs
// of a pass back to back) so that lanes running the forward order and lanes running the
// reverse alternate as far as their numbers allow, each kind keeping its order; prev is
// the arm of the process that ran just before runs ("" for none). With two arms a lane
// then starts with the arm the process before it ended with, so a process that slows the
// next one (heat) slows both runs of a lane alike and cancels in its delta, instead of
// falling on the base in every reversed pass. A sequential run seats each round's pending
// lanes again, since a stopped lane leaves a gap.
func Seat(runs []receipt.Run, prev string) []receipt.Run {
	out := make([]receipt.Run, 0, len(runs))
	for _, pass := range passSegments(runs) {
		out = append(out, slices.Concat(seat(LaneGroups(pass), prev)...)...)
		prev = out[len(out)-1].Arm
	}
	return out
}

// SeatRound seats a sequential run's round (Seat); with two arms it first runs the second
// pass of a collection's pair before its first when only that one can start with the arm
// that ran last: a lane left alone in its pass (the others stopped) cannot be seated, so
// the order of the pair's passes is the one choice left that keeps heat out of its
// deltas. (With more arms the design's orders balance what follows what; they are left.)
func SeatRound(runs []receipt.Run, prev string) []receipt.Run {
	segs := passSegments(runs)
	var out []receipt.Run
	for i := 0; i < len(segs); i++ {
		a := seat(LaneGroups(segs[i]), prev)
		if len(a[0]) == 2 && i+1 < len(segs) && segs[i+1][0].Collection == segs[i][0].Collection && receipt.Round(segs[i+1][0].Pass) == receipt.Round(segs[i][0].Pass) {
			if b := seat(LaneGroups(segs[i+1]), prev); a[0][0].Arm != prev && b[0][0].Arm == prev {
				out = append(out, slices.Concat(b...)...)
				segs[i+1] = segs[i]
				prev = out[len(out)-1].Arm
				continue
			}
		}
		out = append(out, slices.Concat(a...)...)
		prev = out[len(out)-1].Arm
	}
	return out
}

// SeatPasses seats whole lane passes from different passes (the passes a look sends to be
// measured again, each lane's runs of a pass back to back) as Seat seats the lanes of one
// pass, after a process of arm prev: lanes of the forward and the reverse order alternate,
// starting, on a tie, with the kind whose first arm is prev. Each lane pass keeps its own
// order (a pass's order is part of its pair).
func SeatPasses(runs []receipt.Run, prev string) []receipt.Run {
	groups := splitRuns(runs, func(a, b receipt.Run) bool {
		return a.Collection == b.Collection && a.Pass == b.Pass && a.Lane == b.Lane
	})
	return slices.Concat(seat(groups, prev)...)
}

// passSegments splits runs into its passes' runs, each (collection, pass) back to back.
func passSegments(runs []receipt.Run) [][]receipt.Run {
	return splitRuns(runs, func(a, b receipt.Run) bool { return a.Collection == b.Collection && a.Pass == b.Pass })
}

// LaneGroups splits one pass's runs into its lanes' runs, each lane's back to back.
func LaneGroups(pass []receipt.Run) [][]receipt.Run {
	return splitRuns(pass, func(a, b receipt.Run) bool { return a.Lane == b.Lane })
}

// splitRuns splits runs where two neighbours are not the same by same.
func splitRuns(runs []receipt.Run, same func(a, b receipt.Run) bool) [][]receipt.Run {
	var out [][]receipt.Run
	for i, r := range runs {
		if i == 0 || !same(runs[i-1], r) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

// seat interleaves the lane groups of one pass by their order (forward, reverse), each
// kind keeping its order, starting with the larger kind; on a tie, with the kind whose
// first arm is prev (the arm that ran last), else the first group's.
func seat(groups [][]receipt.Run, prev string) [][]receipt.Run {
	if len(groups) == 0 {
		return groups
	}
	var kinds [2][][]receipt.Run
	for _, g := range groups {
		k := 0
		if g[0].Order != groups[0][0].Order {
			k = 1
		}
		kinds[k] = append(kinds[k], g)
	}
	if n0, n1 := len(kinds[0]), len(kinds[1]); n1 > n0 || n1 == n0 && kinds[0][0][0].Arm != prev && kinds[1][0][0].Arm == prev {
		kinds[0], kinds[1] = kinds[1], kinds[0]
	}
	out := make([][]receipt.Run, 0, len(groups))
	for i := range kinds[0] {
		out = append(out, kinds[0][i])
		if i < len(kinds[1]) {
			out = append(out, kinds[1][i])
		}
	}
	// The larger kind's surplus ends the pass: n0 lanes of one kind and n1 < n0 of the
	// other cannot have fewer than n0 - n1 - 1 neighbours of the same kind.
	return out
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
