package compare

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// TestBrief: a comment of 16 lanes fits in 15 lines, the lanes that are not neutral
// first (slower, then faster, then the rest) and the neutral ones named on one line; more
// than BriefRows such lanes are counted, not listed.
func TestBrief(t *testing.T) {
	var rows []Row
	for i := range 14 {
		rows = append(rows, Row{Lane: fmt.Sprintf("N%02d", i), Unit: "ns/op", Effect: lane(driftcheck.LaneNeutral, 0.1, -1, 1.2)})
	}
	rows = append(rows,
		Row{Lane: "Undec", Unit: "ns/op", Effect: lane(driftcheck.LaneUndecided, 1, -2.5, 4.8)},
		Row{Lane: "Parse", Unit: "ns/op", Effect: lane(driftcheck.LaneReproducedSlower, 80, 75, 85)})
	var b strings.Builder
	if err := brief(&b, rows, [2]string{"base", "cand"}, "90%", Names{Base: "main", Cand: "HEAD"}, "`results/x.md`"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 15 {
		t.Errorf("%d lines for 16 lanes, want at most 15:\n%s", len(lines), out)
	}
	for _, want := range []string{
		"## flipbench compare: 1 slower, 14 unchanged within 3%, 1 undecided",
		"| `Parse` ", "| `Undec` ", "Neutral (14): `N00`, `N01`", "and 2 more.",
		"Every lane, with the notes and the memory table: `results/x.md`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "`Parse`") > strings.Index(out, "`Undec`") {
		t.Errorf("the reproduced lane is not listed first:\n%s", out)
	}
	if strings.Contains(out, "| `N00`") {
		t.Errorf("a neutral lane has a row:\n%s", out)
	}

	// Twelve undecided lanes: BriefRows rows, the others counted.
	rows = rows[:0]
	for i := range 12 {
		rows = append(rows, Row{Lane: fmt.Sprintf("U%02d", i), Unit: "ns/op", Effect: lane(driftcheck.LaneUndecided, 1, -2.5, 4.8)})
	}
	b.Reset()
	if err := brief(&b, rows, [2]string{"base", "cand"}, "90%", Names{Base: "main", Cand: "HEAD"}, "here"); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if n := strings.Count(out, "| `U"); n != BriefRows {
		t.Errorf("%d rows, want %d:\n%s", n, BriefRows, out)
	}
	if !strings.Contains(out, "4 more lanes are not neutral: see the full table.") {
		t.Errorf("the rest are not counted:\n%s", out)
	}
	if strings.Contains(out, "Neutral (") {
		t.Errorf("a neutral line without neutral lanes:\n%s", out)
	}
}
