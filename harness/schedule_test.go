package harness

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestArmDesign checks the Williams property for 2 to 7 arms: over the design's orders and
// their reverses every arm takes every place equally often and follows every other arm
// equally often.
func TestArmDesign(t *testing.T) {
	for k := 2; k <= 7; k++ {
		d := ArmDesign(k)
		want := map[bool]string{true: "flip", false: "williams"}[k == 2]
		if d.Kind != want {
			t.Errorf("k=%d: kind %s, want %s", k, d.Kind, want)
		}
		places := make([][]int, k)
		for i := range places {
			places[i] = make([]int, k)
		}
		follows := map[[2]int]int{}
		for _, o := range d.Orders {
			rev := slices.Clone(o)
			slices.Reverse(rev)
			for _, row := range [][]int{o, rev} {
				if s := slices.Sorted(slices.Values(row)); !slices.Equal(s, seq(k)) {
					t.Fatalf("k=%d: order %v is not a permutation", k, row)
				}
				for pos, a := range row {
					places[a][pos]++
					if pos > 0 {
						follows[[2]int{row[pos-1], a}]++
					}
				}
			}
		}
		for a := range k {
			for pos := range k {
				if places[a][pos] != places[0][0] {
					t.Errorf("k=%d: arm %d at place %d %d times, arm 0 at place 0 %d times", k, a, pos, places[a][pos], places[0][0])
				}
			}
			for b := range k {
				if a != b && follows[[2]int{a, b}] != follows[[2]int{0, 1}] {
					t.Errorf("k=%d: %d then %d %d times, 0 then 1 %d times", k, a, b, follows[[2]int{a, b}], follows[[2]int{0, 1}])
				}
			}
		}
	}
	if got := ArmDesign(2).Orders; !cmp.Equal(got, [][]int{{0, 1}}) {
		t.Errorf("two arms: %v, want the flip [[0 1]]", got)
	}
}

func seq(k int) []int {
	s := make([]int, k)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestScheduleDesign checks a three-arm schedule: it validates as a plan, every lane runs
// an order and its reverse in each pair, the lanes of a pass alternate orders, and over a
// collection's rotation every arm takes every place of every lane equally often.
func TestScheduleDesign(t *testing.T) {
	arms := []string{"base", "candA", "candB"}
	lanes := []string{"x", "y", "z", "w"}
	for _, separate := range []bool{false, true} {
		t.Run(fmt.Sprint("separate=", separate), func(t *testing.T) {
			runs := Schedule(arms, lanes, 2, 6, 275, separate)
			plan := designPlan(arms, lanes, 2, 6, runs)
			if err := plan.Validate(); err != nil {
				t.Fatal(err)
			}
			places := map[[3]string]int{} // lane, arm, place
			for _, pass := range groupPasses(runs) {
				orders := map[string]string{}
				for i, r := range pass {
					orders[r.Lane] = r.Order
					if !separate && i%len(arms) > 0 && r.Lane != pass[i-1].Lane {
						t.Fatalf("collection %d pass %d: lane %s interleaved with %s", r.Collection, r.Pass, r.Lane, pass[i-1].Lane)
					}
					if separate && i > 0 && r.Lane == pass[i-1].Lane {
						t.Fatalf("collection %d pass %d: two runs of lane %s back to back", r.Collection, r.Pass, r.Lane)
					}
					places[[3]string{r.Lane, r.Arm, fmt.Sprint(r.Position)}]++
				}
				fwd := 0
				for _, o := range orders {
					if o == driftcheck.OrderForward {
						fwd++
					}
				}
				if fwd != len(lanes)/2 {
					t.Errorf("collection %d pass %d: %d of %d lanes forward, want half", pass[0].Collection, pass[0].Pass, fwd, len(lanes))
				}
			}
			for _, l := range lanes {
				for _, a := range arms {
					for pos := 1; pos <= len(arms); pos++ {
						if n := places[[3]string{l, a, fmt.Sprint(pos)}]; n != 4 {
							t.Errorf("lane %s arm %s at place %d %d times, want 4 (2 collections x 2 of 6 passes)", l, a, pos, n)
						}
					}
				}
			}
		})
	}
}

// TestSchedulePairs checks two arms: in every pair each lane runs base first in one pass
// and the candidate first in the other.
func TestSchedulePairs(t *testing.T) {
	runs := Schedule([]string{"base", "cand"}, []string{"a", "b", "c"}, 3, 6, 1, false)
	first := map[[3]int]map[string]int{} // collection, pair, pass-in-pair -> lane -> base's place
	for _, r := range runs {
		if r.Arm != "base" {
			continue
		}
		key := [3]int{r.Collection, receipt.Round(r.Pass), (r.Pass - 1) % 2}
		if first[key] == nil {
			first[key] = map[string]int{}
		}
		first[key][r.Lane] = r.Position
		if want := map[string]int{driftcheck.OrderForward: 1, driftcheck.OrderReverse: 2}[r.Order]; r.Position != want {
			t.Errorf("%+v: base at place %d in a %s pass, want %d", r, r.Position, r.Order, want)
		}
	}
	for key, lanes := range first {
		if key[2] == 1 {
			continue
		}
		for lane, pos := range lanes {
			if other := first[[3]int{key[0], key[1], 1}][lane]; other+pos != 3 {
				t.Errorf("collection %d pair %d lane %s: base at place %d then %d", key[0], key[1], lane, pos, other)
			}
		}
	}
}

func TestScheduleSeed(t *testing.T) {
	arms, lanes := []string{"base", "cand"}, []string{"a", "b", "c", "d", "e", "f"}
	a := Schedule(arms, lanes, 2, 8, 42, false)
	b := Schedule(arms, lanes, 2, 8, 42, false)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different plans (-first +second):\n%s", diff)
	}
	c := Schedule(arms, lanes, 2, 8, 43, false)
	if cmp.Equal(a, c) {
		t.Fatal("seeds 42 and 43 gave the same lane orders")
	}
	// The lane order changes between passes (with 6 lanes, 16 identical shuffles in a row
	// would be a broken shuffle).
	passes := groupPasses(a)
	same := 0
	for i := 1; i < len(passes); i++ {
		if passes[i][0].Lane == passes[i-1][0].Lane && passes[i][2].Lane == passes[i-1][2].Lane {
			same++
		}
	}
	if same == len(passes)-1 {
		t.Fatal("lane order never changes between passes")
	}
}

// TestValidateDesign checks that a designed plan whose pair does not reverse its places
// fails validation.
func TestValidateDesign(t *testing.T) {
	arms, lanes := []string{"base", "candA", "candB"}, []string{"x"}
	runs := Schedule(arms, lanes, 1, 2, 1, false)
	for i := range runs {
		if runs[i].Pass == 2 {
			runs[i].Position = 4 - runs[i].Position // the first pass's places again
		}
	}
	plan := designPlan(arms, lanes, 1, 2, runs)
	if err := plan.Validate(); err == nil {
		t.Fatal("a pair that does not reverse its places validated")
	}
}

// designPlan wraps runs in a plan that Validate can check.
func designPlan(arms, lanes []string, collections, passes int, runs []receipt.Run) *receipt.Plan {
	p := &receipt.Plan{Protocol: receipt.Protocol{Samples: 3, Passes: passes, Collections: collections}, Runs: runs}
	for _, a := range arms {
		p.Arms = append(p.Arms, receipt.Arm{Name: a, Bin: "x", Command: []string{"x"}})
	}
	for _, l := range lanes {
		p.Lanes = append(p.Lanes, receipt.Lane{Name: l})
	}
	return p
}

// TestSeat checks that the lanes of every pass alternate between the forward and the
// reverse order, in both passes of a pair, that a pass starts where the last ended when
// it can, and that seating a round's pending lanes again
// closes the gap a stopped lane leaves: with two arms, each lane's runs then follow the
// same arm's process, so heat from the previous process cancels in its delta.
func TestSeat(t *testing.T) {
	arms := []string{"base", "cand"}
	for _, lanes := range [][]string{{"a", "b", "c", "d"}, {"a", "b", "c", "d", "e"}} {
		runs := Schedule(arms, lanes, 2, 8, 7, false)
		passes := groupPasses(runs)
		for i, pass := range passes {
			checkAlternates(t, pass, len(lanes))
			// With as many lanes of each order, a pass starts with the arm the last one
			// ended with.
			if len(lanes)%2 == 0 && i > 0 && pass[0].Arm != passes[i-1][len(passes[i-1])-1].Arm {
				t.Errorf("collection %d pass %d starts with %s after a pass that ended with %s", pass[0].Collection, pass[0].Pass, pass[0].Arm, passes[i-1][len(passes[i-1])-1].Arm)
			}
		}
		// Lane "b" stopped: the plan's runs without it, seated again.
		pending := slices.DeleteFunc(slices.Clone(runs), func(r receipt.Run) bool { return r.Lane == "b" })
		seated := Seat(pending, "")
		if len(seated) != len(pending) {
			t.Fatalf("seated %d runs, want %d", len(seated), len(pending))
		}
		for _, pass := range groupPasses(seated) {
			checkAlternates(t, pass, len(lanes)-1)
		}
	}
}

// checkAlternates fails unless the lane blocks of pass alternate in order as far as their
// numbers allow: n lanes have at most one pair of same-order neighbours when n is odd, and
// none when even (half forward, half reverse), and each lane's runs of the pass are back
// to back.
func checkAlternates(t *testing.T, pass []receipt.Run, n int) {
	t.Helper()
	var orders []string
	for i, r := range pass {
		if i == 0 || r.Lane != pass[i-1].Lane {
			orders = append(orders, r.Order)
		}
	}
	if len(orders) != n {
		t.Fatalf("collection %d pass %d: %d lane blocks, want %d", pass[0].Collection, pass[0].Pass, len(orders), n)
	}
	fwd, same := 0, 0
	for i, o := range orders {
		if o == driftcheck.OrderForward {
			fwd++
		}
		if i > 0 && o == orders[i-1] {
			same++
		}
	}
	if want := max(abs(2*fwd-n)-1, 0); same != want {
		t.Errorf("collection %d pass %d: orders %v have %d same-order neighbours, want %d", pass[0].Collection, pass[0].Pass, orders, same, want)
	}
}

func abs(x int) int { return max(x, -x) }

// TestSeatRound checks the order of a round with one lane left: with two arms the pair of
// a collection whose first pass cannot start with the arm that ran last runs its second
// pass first, so every pass starts with the arm the one before it ended with; with three
// arms the passes keep the plan's order.
func TestSeatRound(t *testing.T) {
	run := func(c, p int, order string, arms ...string) []receipt.Run {
		var out []receipt.Run
		for i, a := range arms {
			out = append(out, receipt.Run{Collection: c, Pass: p, Lane: "x", Arm: a, Order: order, Position: i + 1})
		}
		return out
	}
	f, r := driftcheck.OrderForward, driftcheck.OrderReverse
	round := slices.Concat(run(1, 1, f, "base", "cand"), run(1, 2, r, "cand", "base"), run(2, 1, r, "cand", "base"), run(2, 2, f, "base", "cand"))
	var passes []int
	got := SeatRound(round, "")
	for i, x := range got {
		if i > 0 && x.Pass != got[i-1].Pass {
			if x.Arm != got[i-1].Arm {
				t.Errorf("collection %d pass %d starts with %s after %s", x.Collection, x.Pass, x.Arm, got[i-1].Arm)
			}
		}
		if i%2 == 0 {
			passes = append(passes, x.Collection*10+x.Pass)
		}
	}
	if want := []int{11, 12, 22, 21}; !slices.Equal(passes, want) {
		t.Errorf("passes ran as %v (collection x 10 + pass), want %v", passes, want)
	}
	three := slices.Concat(run(2, 1, r, "candB", "candA", "base"), run(2, 2, f, "base", "candA", "candB"))
	if got := SeatRound(three, "base"); !slices.Equal(got, three) {
		t.Errorf("three arms: the passes were reordered: %v", got)
	}
}

// TestSeatPasses: passes of several lanes and passes sent to be measured again are seated
// as one pass's lanes: the forward and reverse kinds alternate and, on a tie, the first
// starts with the arm that ran last; each lane pass keeps its runs' order.
func TestSeatPasses(t *testing.T) {
	run := func(c, p int, lane, order string, arms ...string) []receipt.Run {
		var out []receipt.Run
		for i, a := range arms {
			out = append(out, receipt.Run{Collection: c, Pass: p, Lane: lane, Arm: a, Order: order, Position: i + 1})
		}
		return out
	}
	f, r := driftcheck.OrderForward, driftcheck.OrderReverse
	again := slices.Concat(run(1, 3, "x", f, "base", "cand"), run(1, 5, "x", f, "base", "cand"), run(2, 4, "y", r, "cand", "base"), run(1, 4, "x", r, "cand", "base"))
	got := SeatPasses(again, "cand")
	var arms []string
	for _, x := range got {
		arms = append(arms, x.Arm)
	}
	if want := []string{"cand", "base", "base", "cand", "cand", "base", "base", "cand"}; !slices.Equal(arms, want) {
		t.Errorf("arms ran as %v, want %v", arms, want)
	}
	for i := 0; i < len(got); i += 2 {
		if got[i].Pass != got[i+1].Pass || got[i].Lane != got[i+1].Lane || got[i].Position != 1 {
			t.Errorf("lane pass split or reordered at %d: %v", i, got)
		}
	}
}
