package gate

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

func lane(name string, c int, v driftcheck.LaneVerdict, delta float64) driftcheck.LaneSummary {
	return driftcheck.LaneSummary{Lane: name, Arm: "cand", Collection: c, Verdict: v, MedianDeltaPct: delta, Reason: string(v)}
}

func TestEvaluate(t *testing.T) {
	const (
		slow    = driftcheck.LaneReproducedSlower
		fast    = driftcheck.LaneReproducedFaster
		neutral = driftcheck.LaneNeutral
		drift   = driftcheck.LaneDrift
		mixed   = driftcheck.LaneMixed
		insuff  = driftcheck.LaneInsufficient
	)
	tests := []struct {
		name   string
		lanes  []driftcheck.LaneSummary
		want   Outcome
		reason string
	}{
		{"all neutral", []driftcheck.LaneSummary{lane("a", 1, neutral, 1), lane("a", 2, neutral, -1)}, Pass, "no reproduced regression beyond 5% (+1.0%, -1.0%)"},
		{"faster is fine", []driftcheck.LaneSummary{lane("a", 1, fast, -20), lane("a", 2, fast, -19)}, Pass, "no reproduced regression"},
		{"slower in both collections", []driftcheck.LaneSummary{lane("a", 1, slow, 20), lane("a", 2, slow, 18)}, Regression, "slower in every collection (+20.0%, +18.0%)"},
		{"slower below threshold passes", []driftcheck.LaneSummary{lane("a", 1, slow, 4), lane("a", 2, slow, 4)}, Pass, "no reproduced regression beyond 5%"},
		{"slower in one collection only", []driftcheck.LaneSummary{lane("a", 1, slow, 20), lane("a", 2, neutral, 1)}, Rerun, "some collections but not all"},
		{"drift", []driftcheck.LaneSummary{lane("a", 1, drift, 9), lane("a", 2, neutral, 0)}, Rerun, "collection 1: drift"},
		{"insufficient", []driftcheck.LaneSummary{lane("a", 1, insuff, 0), lane("a", 2, neutral, 0)}, Rerun, "collection 1: insufficient"},
		{"mixed leaning slower", []driftcheck.LaneSummary{lane("a", 1, mixed, 6), lane("a", 2, neutral, 0)}, Rerun, "mixed, leaning slower at +6.0%"},
		{"mixed leaning faster", []driftcheck.LaneSummary{lane("a", 1, mixed, -6), lane("a", 2, neutral, 0)}, Pass, ""},
		{"worst lane wins", []driftcheck.LaneSummary{lane("a", 1, drift, 0), lane("b", 1, slow, 30)}, Regression, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Evaluate(driftcheck.Report{Lanes: tt.lanes}, 5)
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s, want %s (%+v)", res.Outcome, tt.want, res.Findings)
			}
			if tt.reason != "" && !strings.Contains(res.Findings[0].Reason, tt.reason) {
				t.Fatalf("reason %q, want it to contain %q", res.Findings[0].Reason, tt.reason)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	good := "harness: {kind: gotest, package: ./lanes/release}\nlanes:\n  - {name: ChatSim}\n  - {name: FeedPaging}\nthreshold-pct: 8\n"
	s, err := ParseSpec("gate.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Lanes) != 2 || s.Lanes[0].Role != "guard" || s.ThresholdPct != 8 {
		t.Fatalf("parsed %+v", s)
	}
	bad := []struct{ name, in, want string }{
		{"unknown field", "harness: {kind: gotest, package: x}\nlanes: [{name: a}]\nthreshold: 3\n", "gate.yaml:3: field threshold not found in type gate.Spec"},
		{"no lanes", "harness: {kind: gotest, package: x}\n", "gate.yaml: lanes: list at least one lane"},
		{"bad kind", "harness: {kind: docker}\nlanes: [{name: a}]\n", `gate.yaml: harness.kind: "docker": want exec or gotest`},
		{"exec without build", "harness: {kind: exec, command: [\"{bin}\"]}\nlanes: [{name: a}]\n", "gate.yaml: harness.build: the gate builds both arms from git"},
		{"odd passes", "harness: {kind: gotest, package: x}\nlanes: [{name: a}]\nprotocol: {passes: 3}\n", "gate.yaml: protocol.passes: 3: must be even"},
		{"negative threshold", "harness: {kind: gotest, package: x}\nlanes: [{name: a}]\nthreshold-pct: -1\n", "gate.yaml: threshold-pct: -1: must not be negative"},
		{"syntax", "harness: [\n", "gate.yaml:"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec("gate.yaml", []byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
