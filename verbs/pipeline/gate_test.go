package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/steps/gate"
)

// TestGateReach checks what the gate says before a run that cannot reach its decision: a
// budget that buys one round (the rule decides from round 2), and a lane whose noise puts
// the threshold out of reach; a note without --strict, a *RequestError with it.
func TestGateReach(t *testing.T) {
	oneRound := Forecast{PerRound: 4 * time.Minute, From: "from the iteration calibration", Budget: 5 * time.Minute, Rounds: 1, MaxPairs: 20, Collections: 2,
		Lanes: []LaneForecast{{Lane: "InsertG"}}}
	noisy := Forecast{PerRound: 10 * time.Second, Budget: 10 * time.Minute, Rounds: 6, MaxPairs: 6, Collections: 2, Drift: driftcheck.DefaultConfig(),
		Lanes: []LaneForecast{{Lane: "quiet", NoisePct: 0.2, NoiseFrom: "round 1"}, {Lane: "noisy", NoisePct: 8, NoiseFrom: "round 1"}}}
	for _, tc := range []struct {
		name string
		f    Forecast
		want string
	}{
		{"one round", oneRound, "the 5m0s budget buys 1 round at about 4m0s a round (from the iteration calibration), and the rule decides from round 2: unless the rounds run faster, the gate ends undecided (exit 4); raise --budget to at least 10m0s"},
		{"out of reach", noisy, "noisy: 6 rounds at noise 8% (from round 1) cannot tell a no-op from a 10% regression (twice the 5% threshold)"},
	} {
		ev := &planEvents{}
		if err := (gateReach{opts: Options{Events: ev}, rule: gate.Rule{ThresholdPct: 5}}).check(tc.f); err != nil {
			t.Fatalf("%s: without --strict: %v", tc.name, err)
		}
		notes := strings.Join(ev.notes, "\n")
		if !strings.HasPrefix(notes, "note: ") || !strings.Contains(notes, tc.want) || strings.Contains(notes, "quiet") {
			t.Errorf("%s: note %q, want one with %q", tc.name, notes, tc.want)
		}
		ev = &planEvents{}
		err := (gateReach{opts: Options{Events: ev}, strict: true, rule: gate.Rule{ThresholdPct: 5}}).check(tc.f)
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "--strict: ") || !strings.Contains(err.Error(), tc.want) || len(ev.notes) != 0 {
			t.Errorf("%s: with --strict: %v (notes %q), want a request error with %q", tc.name, err, ev.notes, tc.want)
		}
	}
	// Many lanes out of reach: five named, the rest counted, with a threshold all reach.
	var many []LaneForecast
	for i := range 8 {
		many = append(many, LaneForecast{Lane: fmt.Sprintf("L%d", i), NoisePct: 9 + float64(i), NoiseFrom: "round 1"})
	}
	lots := &planEvents{}
	wide := noisy
	wide.Lanes = many
	if err := (gateReach{opts: Options{Events: lots}, rule: gate.Rule{ThresholdPct: 5}}).check(wide); err != nil {
		t.Fatal(err)
	}
	if got := len(lots.notes); got != 6 || !strings.Contains(lots.notes[5], "threshold out of reach for 3 more lanes (8 of 8 in all): a threshold of ") {
		t.Errorf("8 lanes out of reach: %d lines\n%s", got, strings.Join(lots.notes, "\n"))
	}
	// Within reach: nothing said, nothing refused.
	quiet := &planEvents{}
	noisy.Lanes = noisy.Lanes[:1]
	if err := (gateReach{opts: Options{Events: quiet}, strict: true, rule: gate.Rule{ThresholdPct: 5}}).check(noisy); err != nil || len(quiet.notes) != 0 {
		t.Errorf("within reach: %v, %q", err, quiet.notes)
	}
}

// TestGateLevel: the gate states the level its intervals hold at every look, not the
// last look's own (which was 92.4% to 98% on real runs), and a continued gate the
// confidence sequences' level.
func TestGateLevel(t *testing.T) {
	rep := driftcheck.Report{Config: driftcheck.Config{Alpha: 0.05}, Pooled: []driftcheck.LaneSummary{{Confidence: 0.924}}}
	if got := gateLevel(rep, false); got != "90%" {
		t.Errorf("gate level %q, want 90%%", got)
	}
	if got := gateLevel(rep, true); got != "95%" {
		t.Errorf("continued gate level %q, want 95%%", got)
	}
}
