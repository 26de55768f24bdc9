package freshness

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDoctorScenarioA: the doctor reports the record's scenario A as over-committed
// before anything runs, with its numbers: load 125%, and p99 x 1.10 + transport =
// 68 + 3 = 71 ms above max_age 66 ms. A typical run (41 + 3 = 44 ms) still fits.
func TestDoctorScenarioA(t *testing.T) {
	d, err := Doctor(ScenarioA())
	if err != nil {
		t.Fatal(err)
	}
	if !d.OverCommitted() {
		t.Fatalf("scenario A passes the doctor: %+v", d)
	}
	var failed []string
	for _, f := range d.Failed() {
		failed = append(failed, f.Check)
	}
	if diff := cmp.Diff([]string{CheckLoad, CheckConservative}, failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
	want := map[string]string{
		CheckLoad: "FAIL load: load 125% > 100%: 4 workers get 120.1 frames/s of 41.64 ms mean work (variant fast), 25% more than they can do; " +
			"the queue stays full and frames are superseded or late whatever stage B does: add workers or lower the frame rate",
		CheckTypical: "ok   typical: max_age 66 ms >= p50 + transport = 41 ms + 3 ms = 44 ms (variant fast): a typical run is fresh with 22 ms to wait for a worker",
		CheckConservative: "FAIL conservative: max_age 66 ms < p99 x 1.10 + transport = 68 ms + 3 ms = 71 ms (variant fast): by the conservative forecast a frame is too old " +
			"before any queueing, so a stage B that discards on it (pessimistic, ADR-0009) discards every frame and delivers nothing; " +
			"max_age is of the order of the runtime: raise max_age to at least 71 ms, add a faster variant, or discard only on p50 (optimistic, ADR-0010)",
	}
	for _, f := range d.Findings {
		if f.String() != want[f.Check] {
			t.Errorf("%s:\n got %s\nwant %s", f.Check, f, want[f.Check])
		}
	}
}

// TestDoctorPasses: the comfortable and the under-loaded scenarios keep their contracts.
func TestDoctorPasses(t *testing.T) {
	for _, sc := range []Scenario{Comfortable(), Underload()} {
		d, err := Doctor(sc)
		if err != nil {
			t.Fatal(err)
		}
		if d.OverCommitted() {
			t.Errorf("%s: over-committed: %v", sc.Name, d.Failed())
		}
		if len(d.Findings) != 3 {
			t.Errorf("%s: %d findings, want one per check", sc.Name, len(d.Findings))
		}
	}
	d, _ := Doctor(Comfortable())
	if got := d.Findings[2].String(); got != "ok   conservative: max_age 250 ms >= p99 x 1.10 + transport = 68 ms + 3 ms = 71 ms (variant fast): the conservative forecast fits with 179 ms to wait for a worker" {
		t.Errorf("comfortable: %s", got)
	}
}

// TestDoctorTypical: a max_age below p50 + transport fails every policy, and the doctor
// says so; a faster second variant makes the conservative check pass.
func TestDoctorTypical(t *testing.T) {
	sc := ScenarioA()
	sc.Load = 0.5
	sc.MaxAge = 40 * ms1
	d, err := Doctor(sc)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range d.Failed() {
		failed = append(failed, f.Check)
	}
	if diff := cmp.Diff([]string{CheckTypical, CheckConservative}, failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
	if msg := d.Failed()[0].Message; !strings.Contains(msg, "max_age 40 ms < p50 + transport = 41 ms + 3 ms = 44 ms") {
		t.Errorf("typical: %s", msg)
	}

	sc = ScenarioA()
	sc.Load = 0.5
	sc.Variants = append(sc.Variants, Variant{Name: "tiny", P50: 20 * ms1, P99: 30 * ms1}) // 33 + 3 = 36 ms
	d, _ = Doctor(sc)
	if d.OverCommitted() {
		t.Errorf("a 36 ms variant under max_age 66 ms: %v", d.Failed())
	}
	if _, err := Doctor(Scenario{Name: "empty"}); err == nil {
		t.Error("the doctor accepted an invalid scenario")
	}
}
