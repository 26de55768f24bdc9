package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// TestEvidenceTableLevel: the tables state the level an interval holds at every look
// (90% pooled, 95% a collection's at alpha 5%), never the look's own level, which a
// sequential rule's look makes higher and different per lane.
func TestEvidenceTableLevel(t *testing.T) {
	rep := driftcheck.Report{Base: "base", Config: driftcheck.Config{Alpha: 0.05}}
	for _, tc := range []struct {
		collection int
		want       string
	}{{0, "effect [90% CI]"}, {1, "effect [95% CI]"}} {
		sums := []driftcheck.LaneSummary{{Lane: "L", Arm: "cand", Collection: tc.collection, Bounded: true, Confidence: 0.987, UsablePairs: 9}}
		var b bytes.Buffer
		if err := EvidenceTable(&b, rep, sums, nil, nil); err != nil {
			t.Fatal(err)
		}
		if first := strings.SplitN(b.String(), "\n", 2)[0]; !strings.Contains(first, tc.want) {
			t.Errorf("collection %d: header %q, want %q", tc.collection, first, tc.want)
		}
	}
	if got := LevelSentence(driftcheck.Report{Config: driftcheck.Config{Alpha: 0.1}}); !strings.Contains(got, "pooled ones at 80%") || !strings.Contains(got, "each collection's at 90%") {
		t.Errorf("LevelSentence at alpha 0.1: %q", got)
	}
}
