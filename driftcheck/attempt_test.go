package driftcheck

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// attemptInput is one lane over 4 pass pairs in one collection, 1% noise, with the base run
// of pass 1 disturbed (50% noise) and the pass measured again attempts more times, the
// last of them disturbed too when lastDisturbed is set.
func attemptInput(attempts int, lastDisturbed bool) Input {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(noise float64) []float64 {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = 100 * (1 + noise*rng.NormFloat64())
		}
		return xs
	}
	in := Input{Base: "base", Candidates: []string{"cand"}, Lanes: []Lane{{Name: "L"}}, Collections: 1, Passes: 8}
	for p := 1; p <= 8; p++ {
		for _, arm := range []string{"base", "cand"} {
			noise := 0.01
			if p == 1 && arm == "base" {
				noise = 0.5
			}
			in.Observations = append(in.Observations, Observation{Collection: 1, Pass: p, Lane: "L", Arm: arm, Samples: draw(noise)})
		}
	}
	for a := 1; a <= attempts; a++ {
		for _, arm := range []string{"base", "cand"} {
			noise := 0.01
			if a == attempts && lastDisturbed && arm == "base" {
				noise = 0.5
			}
			in.Observations = append(in.Observations, Observation{Collection: 1, Pass: 1, Lane: "L", Arm: arm, Samples: draw(noise), Attempt: a})
		}
	}
	return in
}

// TestAttempts checks that the latest measurement of a pass is analysed: a pass measured
// again replaces its earlier attempt (both arms' runs named as measured again) and its
// pair is used; when the latest attempt is disturbed too, its pair is left out.
func TestAttempts(t *testing.T) {
	pair1 := func(rep Report) Pair {
		for _, p := range rep.Pairs {
			if p.Pair == 1 {
				return p
			}
		}
		t.Fatalf("no pair 1 in %+v", rep.Pairs)
		return Pair{}
	}
	for _, c := range []struct {
		name          string
		attempts      int
		lastDisturbed bool
		replaced      int  // runs named as measured again
		asideAt       int  // the attempt of the run set aside, -1 for none
		pairAside     bool // pair 1 left out
	}{
		{"one measurement", 0, false, 0, 0, true},
		{"measured again", 1, false, 2, -1, false},
		{"measured again, disturbed again", 1, true, 2, 1, true},
		{"measured twice more, the last disturbed", 2, true, 4, 2, true},
	} {
		rep, err := Analyze(attemptInput(c.attempts, c.lastDisturbed), Config{})
		if err != nil {
			t.Fatal(err)
		}
		replaced, asideAt := 0, -1
		for _, a := range rep.SetAside {
			if a.Remeasured {
				replaced++
			} else {
				asideAt = a.Attempt
			}
		}
		p := pair1(rep)
		if replaced != c.replaced || asideAt != c.asideAt || p.SetAside != c.pairAside || p.Attempt1 != c.attempts {
			t.Errorf("%s: set aside %+v, pair 1 %+v: want %d runs measured again, a run set aside at attempt %d, pair left out %v, pass 1 at attempt %d",
				c.name, rep.SetAside, p, c.replaced, c.asideAt, c.pairAside, c.attempts)
		}
	}

	bad := attemptInput(0, false)
	bad.Observations[0].Attempt = -1
	if _, err := Analyze(bad, Config{}); err == nil || !strings.Contains(err.Error(), "observation 0: attempt -1") {
		t.Errorf("negative attempt: %v", err)
	}
	dup := attemptInput(1, false)
	dup.Observations = append(dup.Observations, dup.Observations[len(dup.Observations)-1])
	if _, err := Analyze(dup, Config{}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("an attempt recorded twice: %v", err)
	}
}
