package freshness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flipbench/flipbench/examples/freshness"
)

// scale is the wall time one scenario second takes while a lane runs: a scenario of one
// second runs in half a second. Faster scales multiply the host's timer and scheduling
// delays into scenario time (at 0.25 a 2 ms wake-up delay reads as 8 ms of a 66 ms
// max_age).
const scale = 0.5

// sampleSeed numbers the scenario runs of this process: run k uses seed k, so run k of
// every process, of every arm, sees the same frames with the same runtimes, and only the
// policy (and the host's timing) differs. The testing package calls a lane's benchmark
// function once per sample and keeps nothing else between samples.
var sampleSeed atomic.Uint64

// BenchmarkOverload125 is the decision record's scenario A: 125% load, max_age 66 ms,
// p99 x 1.10 + transport = 71 ms, three seconds of frames.
func BenchmarkOverload125(b *testing.B) {
	lane(b, freshness.ScenarioA(), freshness.CheckLoad, freshness.CheckConservative)
}

// BenchmarkVariants is the scenario with two variants, a promise apart from max_age and
// variant hysteresis: frames no variant can promise are where the policies differ.
func BenchmarkVariants(b *testing.B) { lane(b, freshness.Variants(), freshness.CheckConservative) }

// BenchmarkComfortable is a scenario every policy serves alike: 50% load, max_age 250 ms.
func BenchmarkComfortable(b *testing.B) { lane(b, freshness.Comfortable()) }

// BenchmarkUnderload is 80% load with a max_age 5 ms above p99 x 1.10 + transport.
func BenchmarkUnderload(b *testing.B) { lane(b, freshness.Underload()) }

// lane runs the scenario b.N times with the build's policy on a real clock and reports
// the counters. Every run carries the doctor's diagnosis, made before it ran; the lane
// fails unless the doctor found exactly the over-commitments named in failing (none: the
// contract holds), so a lane cannot measure a contract other than the one it states.
func lane(b *testing.B, sc freshness.Scenario, failing ...string) {
	runs := make([]freshness.Stats, 0, b.N)
	for range b.N {
		clock, err := freshness.NewRealClock(scale)
		if err != nil {
			b.Fatal(err)
		}
		st, err := freshness.Run(context.Background(), clock, sc, lanePolicy, sampleSeed.Add(1))
		if err != nil {
			b.Fatal(err)
		}
		if err := checkDoctor(st.Doctor, failing); err != nil {
			b.Fatal(err)
		}
		if len(runs) == 0 && doctorOnce.CompareAndSwap(false, true) {
			// once per process, into the receipt's stderr tail
			fmt.Fprintf(os.Stderr, "freshness lane %s, policy %s: doctor before the run: %s\n", sc.Name, lanePolicy, summarize(st.Doctor))
		}
		runs = append(runs, st)
	}
	for _, m := range metrics(runs) {
		b.ReportMetric(m.value, m.unit)
	}
}

// doctorOnce is set once the process has printed the doctor's diagnosis.
var doctorOnce atomic.Bool

// checkDoctor returns an error unless the diagnosis failed exactly the checks in want.
func checkDoctor(d freshness.Diagnosis, want []string) error {
	var got []string
	for _, f := range d.Failed() {
		got = append(got, f.Check)
	}
	if len(d.Findings) == 0 || !slices.Equal(got, want) {
		return fmt.Errorf("scenario %s: the doctor failed checks %v, the lane expects %v: %s", d.Scenario, got, want, summarize(d))
	}
	return nil
}

// summarize states every finding on one line.
func summarize(d freshness.Diagnosis) string {
	var parts []string
	for _, f := range d.Findings {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// metric is one reported metric.
type metric struct {
	unit  string
	value float64
}

// metrics returns what a lane reports for its runs: usable results per second of
// scenario time (the lane's value), each counter per run, stale compute in ms of
// scenario time per run, and the age at delivery's p50 and p99 over every delivered
// result (left out when nothing was delivered).
func metrics(runs []freshness.Stats) []metric {
	var all freshness.Stats
	for _, st := range runs {
		all.Duration += st.Duration
		all.Usable += st.Usable
		all.CompletedObsolete += st.CompletedObsolete
		all.DiscardedBeforeDispatch += st.DiscardedBeforeDispatch
		all.Superseded += st.Superseded
		all.StaleCompute += st.StaleCompute
		all.Ages = append(all.Ages, st.Ages...)
		all.Frames += st.Frames
		all.Switches += st.Switches
		all.DeadlineMissed += st.DeadlineMissed
	}
	n := float64(len(runs))
	out := []metric{
		{"usable/s", all.UsablePerSecond()},
		{"usable/op", float64(all.Usable) / n},
		{"completed-obsolete/op", float64(all.CompletedObsolete) / n},
		{"discarded-before-dispatch/op", float64(all.DiscardedBeforeDispatch) / n},
		{"superseded/op", float64(all.Superseded) / n},
		{"stale-compute-ms/op", msOf(all.StaleCompute) / n},
		{"frames/op", float64(all.Frames) / n},
		{"usable-pct", 100 * float64(all.Usable) / float64(max(all.Frames, 1))},
		{"past-promise/op", float64(all.DeadlineMissed) / n},
		{"variant-switches/op", float64(all.Switches) / n},
	}
	slices.Sort(all.Ages)
	if p50, ok := all.AgeQuantile(0.5); ok {
		p99, _ := all.AgeQuantile(0.99)
		out = append(out, metric{"age-p50-ms", msOf(p50)}, metric{"age-p99-ms", msOf(p99)})
	}
	return out
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestMetrics checks what a lane reports, on two runs of scenario A on the virtual clock.
func TestMetrics(t *testing.T) {
	var runs []freshness.Stats
	for seed := uint64(1); seed <= 2; seed++ {
		st, err := freshness.Simulate(freshness.ScenarioA(), freshness.Optimistic, seed)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, st)
	}
	got := map[string]float64{}
	var units []string
	for _, m := range metrics(runs) {
		got[m.unit] = m.value
		units = append(units, m.unit)
	}
	want := []string{"usable/s", "usable/op", "completed-obsolete/op", "discarded-before-dispatch/op", "superseded/op",
		"stale-compute-ms/op", "frames/op", "usable-pct", "past-promise/op", "variant-switches/op", "age-p50-ms", "age-p99-ms"}
	if !slices.Equal(units, want) {
		t.Fatalf("units %v, want %v", units, want)
	}
	a, b := runs[0], runs[1]
	if w := float64(a.Usable+b.Usable) / 2; got["usable/s"] != w/3 || got["usable/op"] != w {
		t.Errorf("usable %v/s, %v/op; want %v/s and %v/op for two three-second runs", got["usable/s"], got["usable/op"], w/3, w)
	}
	if w := 100 * float64(a.Usable+b.Usable) / float64(a.Frames+b.Frames); got["usable-pct"] != w || got["frames/op"] != 361 {
		t.Errorf("usable-pct %v (want %v), frames/op %v (want 361)", got["usable-pct"], w, got["frames/op"])
	}
	if w := msOf(a.StaleCompute+b.StaleCompute) / 2; got["stale-compute-ms/op"] != w || w == 0 {
		t.Errorf("stale compute %v ms/op, want %v (and above 0)", got["stale-compute-ms/op"], w)
	}
	if !(got["age-p50-ms"] > 0 && got["age-p50-ms"] <= got["age-p99-ms"]) {
		t.Errorf("ages p50 %v, p99 %v", got["age-p50-ms"], got["age-p99-ms"])
	}

	// Nothing delivered: no age metrics, and every counter still reported.
	st, _ := freshness.Simulate(freshness.ScenarioA(), freshness.Pessimistic, 1)
	ms := metrics([]freshness.Stats{st})
	if len(ms) != 10 || ms[0].value != 0 || ms[3].value != float64(st.Frames) {
		t.Errorf("pessimistic: %+v", ms)
	}
}

// TestDoctorAsserted: the lanes' contracts are what the doctor finds (scenario A and the
// variants scenario over-committed by the named checks, the others holding), and a lane
// whose contract differed would fail.
func TestDoctorAsserted(t *testing.T) {
	for _, tc := range []struct {
		sc      freshness.Scenario
		failing []string
	}{
		{freshness.ScenarioA(), []string{freshness.CheckLoad, freshness.CheckConservative}},
		{freshness.Variants(), []string{freshness.CheckConservative}},
		{freshness.Comfortable(), nil},
		{freshness.Underload(), nil},
	} {
		st, err := freshness.Simulate(tc.sc, lanePolicy, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkDoctor(st.Doctor, tc.failing); err != nil {
			t.Error(err)
		}
		if err := checkDoctor(st.Doctor, []string{freshness.CheckTypical}); err == nil {
			t.Errorf("%s: a wrong expectation passed the lane's check", tc.sc.Name)
		}
	}
}
