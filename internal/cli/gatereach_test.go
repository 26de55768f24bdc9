package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/pipeline"
)

// TestGateReach checks what the gate says before a run that cannot reach its decision: a
// budget that buys one round (the rule decides from round 2), and a lane whose noise puts
// the threshold out of reach; a note without --strict, a usage error with it.
func TestGateReach(t *testing.T) {
	oneRound := pipeline.Forecast{PerRound: 4 * time.Minute, From: "from the iteration calibration", Budget: 5 * time.Minute, Rounds: 1, MaxPairs: 20, Collections: 2,
		Lanes: []pipeline.LaneForecast{{Lane: "InsertG"}}}
	noisy := pipeline.Forecast{PerRound: 10 * time.Second, Budget: 10 * time.Minute, Rounds: 6, MaxPairs: 6, Collections: 2, Drift: driftcheck.DefaultConfig(),
		Lanes: []pipeline.LaneForecast{{Lane: "quiet", NoisePct: 0.2, NoiseFrom: "round 1"}, {Lane: "noisy", NoisePct: 8, NoiseFrom: "round 1"}}}
	for _, tc := range []struct {
		name string
		f    pipeline.Forecast
		want string
	}{
		{"one round", oneRound, "the 5m0s budget buys 1 round at about 4m0s a round (from the iteration calibration), and the rule decides from round 2: unless the rounds run faster, the gate ends undecided (exit 4); raise --budget to at least 10m0s"},
		{"out of reach", noisy, "noisy: 6 rounds at noise 8% (from round 1) cannot tell a no-op from a 10% regression (twice the 5% threshold)"},
	} {
		var errs strings.Builder
		if err := gateReach(Streams{Err: &errs}, false, 5, nil, nil)(tc.f); err != nil {
			t.Fatalf("%s: without --strict: %v", tc.name, err)
		}
		if !strings.Contains(errs.String(), "flipbench: note: ") || !strings.Contains(errs.String(), tc.want) || strings.Contains(errs.String(), "quiet") {
			t.Errorf("%s: note %q, want one with %q", tc.name, errs.String(), tc.want)
		}
		errs.Reset()
		err := gateReach(Streams{Err: &errs}, true, 5, nil, nil)(tc.f)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitUsage || !strings.Contains(err.Error(), "--strict: ") || !strings.Contains(err.Error(), tc.want) || errs.Len() != 0 {
			t.Errorf("%s: with --strict: %v (stderr %q), want a usage error with %q", tc.name, err, errs.String(), tc.want)
		}
	}
	// Many lanes out of reach: five named, the rest counted, with a threshold all reach.
	var many []pipeline.LaneForecast
	for i := range 8 {
		many = append(many, pipeline.LaneForecast{Lane: fmt.Sprintf("L%d", i), NoisePct: 9 + float64(i), NoiseFrom: "round 1"})
	}
	var lots strings.Builder
	wide := noisy
	wide.Lanes = many
	if err := gateReach(Streams{Err: &lots}, false, 5, nil, nil)(wide); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(lots.String(), "\n"); got != 6 || !strings.Contains(lots.String(), "threshold out of reach for 3 more lanes (8 of 8 in all): a threshold of ") {
		t.Errorf("8 lanes out of reach: %d lines\n%s", got, lots.String())
	}
	// Within reach: nothing said, nothing refused.
	var errs strings.Builder
	noisy.Lanes = noisy.Lanes[:1]
	if err := gateReach(Streams{Err: &errs}, true, 5, nil, nil)(noisy); err != nil || errs.Len() != 0 {
		t.Errorf("within reach: %v, %q", err, errs.String())
	}
}
