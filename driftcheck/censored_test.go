package driftcheck

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// censoredInput is one lane over 6 pass pairs in each of 2 collections, 1% noise within and
// between runs, the candidate effect times slower (1.3: 30% slower), with the run of arm
// in collection 1, pass 3 timed out with a bound of bound (in the lane's unit: a normal
// run's level is 100).
func censoredInput(effect float64, arm string, bound float64, higher bool) Input {
	rng := rand.New(rand.NewPCG(5, 6))
	in := Input{Base: "base", Candidates: []string{"cand"}, Lanes: []Lane{{Name: "L", HigherIsBetter: higher}}, Collections: 2, Passes: 12}
	for c := 1; c <= 2; c++ {
		for p := 1; p <= 12; p++ {
			for _, a := range []string{"base", "cand"} {
				o := Observation{Collection: c, Pass: p, Lane: "L", Arm: a}
				if c == 1 && p == 3 && a == arm {
					o.Failed, o.TimedOut, o.AtLeast = "timed out after 1s and was killed", true, bound
					in.Observations = append(in.Observations, o)
					continue
				}
				level := 100 * (1 + 0.01*rng.NormFloat64())
				if a == "cand" {
					level *= effect
				}
				for range 10 {
					x := level * (1 + 0.01*rng.NormFloat64())
					if higher {
						x = 1e4 / x
					}
					o.Samples = append(o.Samples, x)
				}
				in.Observations = append(in.Observations, o)
			}
		}
	}
	return in
}

// TestCensoredPairs checks that a timed-out run enters its pair as a bound that counts in
// one direction only: a candidate that timed out can make its lane slower, never faster or
// neutral, and rules out no regression; a base that timed out, the reverse; a
// higher-is-better lane's bound points the other way. Every timed-out run is named in
// Report.Unfinished with the direction its pair counts toward.
func TestCensoredPairs(t *testing.T) {
	for _, c := range []struct {
		name    string
		effect  float64
		arm     string
		bound   float64
		higher  bool
		verdict LaneVerdict
		bounded string // the censored pass's PassDelta.Bound
		toward  string
		slower  int // CensoredSlower of the pooled summary
		faster  int
	}{
		{"candidate times out, 30% slower: slower", 1.3, "cand", 5000, false, LaneReproducedSlower, BoundAtLeast, DirectionSlower, 1, 0},
		{"candidate times out, 30% faster: not faster", 0.7, "cand", 5000, false, LaneUndecided, BoundAtLeast, DirectionSlower, 1, 0},
		{"candidate times out, no effect: not neutral", 1, "cand", 5000, false, LaneUndecided, BoundAtLeast, DirectionSlower, 1, 0},
		{"base times out, 30% faster: faster", 0.7, "base", 5000, false, LaneReproducedFaster, BoundAtMost, DirectionFaster, 0, 1},
		{"base times out, 30% slower: not slower", 1.3, "base", 5000, false, LaneUndecided, BoundAtMost, DirectionFaster, 0, 1},
		{"base times out, no effect: not neutral", 1, "base", 5000, false, LaneUndecided, BoundAtMost, DirectionFaster, 0, 1},
		{"a rate lane's candidate at least its bound: toward faster", 0.7, "cand", 1e4, true, LaneReproducedFaster, BoundAtMost, DirectionFaster, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Analyze(censoredInput(c.effect, c.arm, c.bound, c.higher), Config{})
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Pooled[0]
			if p.Verdict != c.verdict || p.CensoredSlower != c.slower || p.CensoredFaster != c.faster {
				t.Errorf("pooled %s (censored slower %d, faster %d): %s; want %s, %d, %d", p.Verdict, p.CensoredSlower, p.CensoredFaster, p.Reason, c.verdict, c.slower, c.faster)
			}
			if c.verdict == LaneUndecided && !strings.Contains(p.Reason, "timed out in 1 pass") {
				t.Errorf("reason %q: want it to say the run timed out", p.Reason)
			}
			if c.slower > 0 && (p.NoWorseThanPct != 0 || p.UpperBelow(50, 0) || !strings.Contains(p.RuledOut(), "no bound on a regression")) {
				t.Errorf("no worse than %v, upper below +50%% %v, %q: a timed-out candidate rules out no regression", p.NoWorseThanPct, p.UpperBelow(50, 0), p.RuledOut())
			}
			if c.faster > 0 && (p.NoBetterThanPct != 0 || p.LowerAbove(-50, 0)) {
				t.Errorf("no better than %v, lower above -50%% %v: a timed-out base shows no regression", p.NoBetterThanPct, p.LowerAbove(-50, 0))
			}
			var pd PassDelta
			for _, x := range rep.Passes {
				if x.Collection == 1 && x.Pass == 3 {
					pd = x
				}
			}
			wantSide := SideCandidate
			if c.arm == "base" {
				wantSide = SideBase
			}
			if !pd.Usable || pd.Bound != c.bounded || pd.Censored != wantSide || pd.HostBlip {
				t.Errorf("pass 3: %+v; want a usable pass bounded %s, censored on the %s side, no host blip", pd, c.bounded, wantSide)
			}
			if len(rep.Unfinished) != 1 {
				t.Fatalf("unfinished %+v: want the timed-out run", rep.Unfinished)
			}
			u := rep.Unfinished[0]
			if !u.Censored || !u.TimedOut || u.Toward != c.toward || u.Arm != c.arm || u.Pass != 3 || !strings.Contains(u.Outcome, "toward "+c.toward) {
				t.Errorf("unfinished %+v: want the %s run censored toward %s", u, c.arm, c.toward)
			}
		})
	}
}

// TestCensoredBoundBelowMaterial checks that a bound inside the lane's range stands in at
// the bound, not at the lane's largest pass: a candidate timed out at half the base's
// level says only that its delta is at least -50%, so its pair is not material.
func TestCensoredBoundBelowMaterial(t *testing.T) {
	rep, err := Analyze(censoredInput(1, "cand", 50, false), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Pairs {
		if p.Collection == 1 && p.Pair == 2 && (p.Verdict == Reproduced || p.Censored1 != BoundAtLeast || !strings.Contains(p.Reason, "at least -5")) {
			t.Errorf("pair %+v: want a pair bounded at least about -50%%, not REPRODUCED", p)
		}
	}
}

// TestFailedRuns checks that a run that failed without a bound (a crash, or a timeout whose
// operations are unknown) leaves its pair insufficient and is named, and that a pass
// measured again replaces it.
func TestFailedRuns(t *testing.T) {
	in := censoredInput(1.3, "cand", 0, false)
	for i, o := range in.Observations {
		if len(o.Samples) == 0 {
			in.Observations[i].TimedOut = false
			in.Observations[i].Failed = "exited with status 2"
		}
	}
	rep, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unfinished) != 1 || rep.Unfinished[0].Censored || rep.Unfinished[0].Remeasured || !strings.Contains(rep.Unfinished[0].Outcome, "pair 2 insufficient") {
		t.Errorf("unfinished %+v: want the crashed run, its pair 2 insufficient", rep.Unfinished)
	}
	for _, p := range rep.Pairs {
		if p.Collection == 1 && p.Pair == 2 && p.Verdict != Insufficient {
			t.Errorf("pair %+v: want insufficient", p)
		}
	}
	for _, arm := range []string{"base", "cand"} {
		in.Observations = append(in.Observations, Observation{Collection: 1, Pass: 3, Lane: "L", Arm: arm, Attempt: 1, Round: 7,
			Samples: []float64{100, 101, 99, 100, 100, 101, 99, 100, 100, 100}})
	}
	if rep, err = Analyze(in, Config{}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Unfinished) != 1 || !rep.Unfinished[0].Remeasured || !strings.Contains(rep.Unfinished[0].Outcome, "measured again") {
		t.Errorf("unfinished %+v: want the crashed run measured again", rep.Unfinished)
	}
	for _, a := range rep.SetAside {
		if a.Arm == "cand" && a.Pass == 3 && a.Attempt == 0 {
			t.Errorf("set aside %+v: a run without samples is named in Unfinished only", a)
		}
	}
}

// TestCensoredMalformed checks the bound's validation.
func TestCensoredMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Observation
		want string
	}{
		{"negative", Observation{TimedOut: true, AtLeast: -1}, "at_least -1: want a positive number"},
		{"with samples", Observation{TimedOut: true, AtLeast: 5, Samples: []float64{1, 2}}, "only a timed-out run without samples"},
		{"not timed out", Observation{AtLeast: 5}, "only a timed-out run without samples"},
	} {
		in := Input{Base: "base", Candidates: []string{"cand"}, Lanes: []Lane{{Name: "L"}}, Collections: 1, Passes: 2}
		c.o.Collection, c.o.Pass, c.o.Lane, c.o.Arm = 1, 1, "L", "cand"
		in.Observations = []Observation{c.o}
		if _, err := Analyze(in, Config{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
