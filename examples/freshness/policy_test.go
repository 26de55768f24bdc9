package freshness

import (
	"testing"
	"time"
)

const ms1 = time.Millisecond

// TestSeedProfile pins the decision record's numbers: p99 x 1.10 = 68 ms, p50 = 41 ms.
func TestSeedProfile(t *testing.T) {
	v := SeedVariant()
	if got := v.Conservative(); got != 68*ms1 {
		t.Errorf("conservative runtime %v, want 68ms", got)
	}
	if got := v.Optimistic(); got != 41*ms1 {
		t.Errorf("optimistic runtime %v, want 41ms", got)
	}
	if got := v.Runtime(0); got != v.P50 {
		t.Errorf("runtime at z=0 is %v, want the median %v", got, v.P50)
	}
	if got, want := v.Runtime(z99), v.P99; got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("runtime at z=%.3f is %v, want the p99 %v", z99, got, want)
	}
	sc := ScenarioA()
	if sc.MaxAge != 66*ms1 || sc.Transport != 3*ms1 || sc.Load != 1.25 {
		t.Errorf("scenario A: max_age %v, transport %v, load %v; want 66ms, 3ms, 1.25", sc.MaxAge, sc.Transport, sc.Load)
	}
}

// TestDecide pins stage B's arithmetic for every policy, first with the record's
// scenario A: a frame generated at 0 reaches the scheduler at 3 ms and finds a free
// worker. Conservatively it would finish at 3 + 68 = 71 ms > 66 ms: the pessimistic
// policy discards it. Optimistically at 3 + 41 = 44 ms <= 66 ms: the optimistic policy
// starts it.
func TestDecide(t *testing.T) {
	a := ScenarioA()
	two := ScenarioA()
	two.Variants = []Variant{{Name: "full", P50: 80 * ms1, P99: 100 * ms1}, SeedVariant()} // full: 110 ms conservative
	tests := []struct {
		name     string
		sc       Scenario
		maxAge   time.Duration // 0 keeps the scenario's
		policy   Policy
		gen, now time.Duration
		want     Decision
	}{
		{name: "A pessimistic: 68 + 3 > 66 discards", sc: a, policy: Pessimistic, now: 3 * ms1,
			want: Decision{Split: true, Forecast: 71 * ms1}},
		{name: "A optimistic: 41 + 3 <= 66 starts the fastest variant", sc: a, policy: Optimistic, now: 3 * ms1,
			want: Decision{Start: true, Split: true, Forecast: 44 * ms1}},
		{name: "A fifo starts whatever the forecast", sc: a, policy: FIFO, now: 3 * ms1,
			want: Decision{Start: true, Split: true, Forecast: 44 * ms1}},
		{name: "A optimistic after 22 ms in the queue: 25 + 41 = 66 still fits", sc: a, policy: Optimistic, now: 25 * ms1,
			want: Decision{Start: true, Split: true, Forecast: 66 * ms1}},
		{name: "A optimistic a nanosecond later discards", sc: a, policy: Optimistic, now: 25*ms1 + 1,
			want: Decision{Forecast: 66*ms1 + 1}},
		{name: "A fifo starts a hopeless frame", sc: a, policy: FIFO, now: 40 * ms1,
			want: Decision{Start: true, Forecast: 81 * ms1}},
		{name: "a later generation shifts the deadline", sc: a, policy: Optimistic, gen: 100 * ms1, now: 125 * ms1,
			want: Decision{Start: true, Split: true, Forecast: 66 * ms1}},
		{name: "pessimistic keeps a contract of 71 ms", sc: a, maxAge: 71 * ms1, policy: Pessimistic, now: 3 * ms1,
			want: Decision{Start: true, Feasible: true, Forecast: 71 * ms1}},
		{name: "feasibility prefers the first variant that fits", sc: two, maxAge: 150 * ms1, policy: Pessimistic, now: 3 * ms1,
			want: Decision{Start: true, Feasible: true, Forecast: 113 * ms1}},
		{name: "feasibility falls back to a later variant that fits", sc: two, maxAge: 100 * ms1, policy: Pessimistic, now: 3 * ms1,
			want: Decision{Start: true, Variant: 1, Feasible: true, Forecast: 71 * ms1}},
		{name: "nothing fits: pessimistic discards", sc: two, policy: Pessimistic, now: 3 * ms1,
			want: Decision{Split: true, Forecast: 71 * ms1}},
		{name: "nothing fits: optimistic starts the fastest variant, not the preferred one", sc: two, policy: Optimistic, now: 3 * ms1,
			want: Decision{Start: true, Variant: 1, Split: true, Forecast: 44 * ms1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.sc
			if tc.maxAge != 0 {
				sc.MaxAge = tc.maxAge
			}
			if got := sc.Decide(tc.policy, tc.gen, tc.now); got != tc.want {
				t.Errorf("Decide(%s, gen %v, now %v) = %+v, want %+v", tc.policy, tc.gen, tc.now, got, tc.want)
			}
		})
	}
}

// TestUsable pins stage C: a result exactly max_age old is usable, a nanosecond older
// is not.
func TestUsable(t *testing.T) {
	sc := ScenarioA()
	for _, tc := range []struct {
		gen, done time.Duration
		want      bool
	}{
		{0, 44 * ms1, true},
		{0, 66 * ms1, true},
		{0, 66*ms1 + 1, false},
		{10 * ms1, 76 * ms1, true},
		{10 * ms1, 81 * ms1, false},
	} {
		if got := sc.Usable(tc.gen, tc.done); got != tc.want {
			t.Errorf("Usable(gen %v, done %v) = %v, want %v", tc.gen, tc.done, got, tc.want)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range Policies() {
		got, err := ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("eager"); err == nil || err.Error() != `unknown policy "eager" (want fifo, pessimistic or optimistic)` {
		t.Errorf("ParsePolicy(eager): %v", err)
	}
}

func TestValidate(t *testing.T) {
	bad := Scenario{Name: "x", Variants: []Variant{{Name: "v", P50: 10 * ms1, P99: 5 * ms1}, {P50: ms1, P99: ms1}}, Load: -1}
	err := bad.Validate()
	want := "scenario x: workers 0: want at least 1\n" +
		"variant v: p99 5ms is below its p50 10ms\n" +
		"variants[1]: no name\n" +
		"max_age 0s: want a positive duration\n" +
		"load -1: want a positive factor (1.25 is 125%)\n" +
		"queue 0: want at least 1\n" +
		"duration 0s: want a positive duration"
	if err == nil || err.Error() != want {
		t.Errorf("Validate:\n%v\nwant:\n%s", err, want)
	}
	for _, sc := range Scenarios() {
		if err := sc.Validate(); err != nil {
			t.Errorf("scenario %s: %v", sc.Name, err)
		}
	}
}
