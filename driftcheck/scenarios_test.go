package driftcheck_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
)

func TestParseScenarios(t *testing.T) {
	data := `{"scenarios": [
	  {"label": "point-read",
	   "pass1": {"baseline": [12, 12.2, 12.4], "candidate": [10.8, 11, 11.2]},
	   "pass2": {"baseline": [12.1, 12.3, 12.2], "candidate": [11, 10.9, 11.1]},
	   "pass3": {"candidate": [11, 11.1], "baseline": [12, 12.1]},
	   "pass4": {"baseline": [12, 12.1], "candidate": []}},
	  {"label": "bulk", "pass2": {"baseline": [5, 5], "candidate": [5, 5]},
	   "pass1": {"baseline": [5, 5.1], "candidate": [5.1, 5]}}]}`
	in, err := driftcheck.ParseScenarios([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	obs := func(p int, lane, arm string, xs ...float64) driftcheck.Observation {
		return driftcheck.Observation{Collection: 1, Pass: p, Lane: lane, Arm: arm, Samples: append([]float64{}, xs...)}
	}
	want := driftcheck.Input{
		Base: "baseline", Candidates: []string{"candidate"}, Collections: 1, Passes: 4,
		Lanes: []driftcheck.Lane{{Name: "point-read"}, {Name: "bulk"}},
		Observations: []driftcheck.Observation{
			obs(1, "point-read", "baseline", 12, 12.2, 12.4), obs(1, "point-read", "candidate", 10.8, 11, 11.2),
			obs(2, "point-read", "baseline", 12.1, 12.3, 12.2), obs(2, "point-read", "candidate", 11, 10.9, 11.1),
			obs(3, "point-read", "baseline", 12, 12.1), obs(3, "point-read", "candidate", 11, 11.1),
			obs(4, "point-read", "baseline", 12, 12.1), obs(4, "point-read", "candidate"),
			obs(1, "bulk", "baseline", 5, 5.1), obs(1, "bulk", "candidate", 5.1, 5),
			obs(2, "bulk", "baseline", 5, 5), obs(2, "bulk", "candidate", 5, 5),
		},
	}
	if d := cmp.Diff(want, in); d != "" {
		t.Fatalf("input (-want +got):\n%s", d)
	}

	r, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Pairs {
		got = append(got, p.Lane+": "+string(p.Verdict)+": "+p.Reason)
	}
	wantPairs := []string{
		"point-read: REPRODUCED: both passes faster beyond the 3% floor: -9.8% then -9.8%",
		"point-read: insufficient: pass 4: no candidate samples",
		"bulk: neutral: both passes within the 3% floor: 0.0% then 0.0%",
	}
	if d := cmp.Diff(wantPairs, got); d != "" {
		t.Errorf("pairs (-want +got):\n%s", d)
	}
}

func TestParseScenariosErrors(t *testing.T) {
	tests := []struct {
		name, data, errMsg string
	}{
		{name: "not json", data: `{"scenarios": [`,
			errMsg: "scenarios: unexpected end of JSON input"},
		{name: "unknown top-level field", data: `{"scenarios": [], "senarios": []}`,
			errMsg: `field "senarios": unknown (want "scenarios")`},
		{name: "no scenarios field", data: `{}`,
			errMsg: "scenarios: missing"},
		{name: "null list", data: `{"scenarios": null}`,
			errMsg: "scenarios: empty list"},
		{name: "empty list", data: `{"scenarios": []}`,
			errMsg: "scenarios: empty list"},
		{name: "missing label", data: `{"scenarios": [{"pass1": {}}]}`,
			errMsg: "scenarios[0]: label: missing"},
		{name: "empty label", data: `{"scenarios": [{"label": " "}]}`,
			errMsg: "scenarios[0]: label: empty"},
		{name: "label not a string", data: `{"scenarios": [{"label": 7}]}`,
			errMsg: "scenarios[0]: label: json: cannot unmarshal number into Go value of type string"},
		{name: "no passes", data: `{"scenarios": [{"label": "x"}]}`,
			errMsg: `scenario "x": pass1: missing (want pass1 and pass2 at least)`},
		{name: "unknown scenario field", data: `{"scenarios": [{"label": "x", "pass1": {}, "pass2": {}, "notes": "hi"}]}`,
			errMsg: `scenario "x": field "notes": unknown (want label or pass1, pass2, ...)`},
		{name: "pass0", data: `{"scenarios": [{"label": "x", "pass0": {}}]}`,
			errMsg: `scenario "x": field "pass0": unknown (want label or pass1, pass2, ...)`},
		{name: "odd pass count", data: `{"scenarios": [{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass2": {"baseline": [1], "candidate": [1]}, "pass3": {}}]}`,
			errMsg: `scenario "x": pass3: has no partner pass4 (passes come in forward/reverse pairs)`},
		{name: "gap", data: `{"scenarios": [{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass4": {}}]}`,
			errMsg: `scenario "x": pass2: missing (passes run pass1 to pass4 without a gap)`},
		{name: "pass not an object", data: `{"scenarios": [{"label": "x", "pass1": [1, 2], "pass2": {}}]}`,
			errMsg: `scenario "x": pass1: want an object with baseline and candidate: json: cannot unmarshal array into Go value of type map[string]json.RawMessage`},
		{name: "misspelt side", data: `{"scenarios": [{"label": "x", "pass1": {"basline": [1], "candidate": [1]}, "pass2": {}}]}`,
			errMsg: `scenario "x": pass1.basline: unknown field (want baseline or candidate)`},
		{name: "missing candidate", data: `{"scenarios": [{"label": "x", "pass1": {"baseline": [1, 2]}, "pass2": {}}]}`,
			errMsg: `scenario "x": pass1.candidate: missing`},
		{name: "non-numeric sample", data: `{"scenarios": [{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass2": {"baseline": [1, "2"], "candidate": [1]}}]}`,
			errMsg: `scenario "x": pass2.baseline: want an array of numbers: json: cannot unmarshal string into Go value of type float64`},
		{name: "negative sample", data: `{"scenarios": [{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass2": {"baseline": [1, -2], "candidate": [1]}}]}`,
			errMsg: `scenario "x": pass2.baseline[1]: negative time -2`},
		{name: "too many passes", data: `{"scenarios": [{"label": "x", "pass100000000": {"baseline": [1], "candidate": [1]}}]}`,
			errMsg: `scenario "x": pass100000000: more than 1000 passes`},
		{name: "duplicate label", data: `{"scenarios": [
			{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass2": {"baseline": [1], "candidate": [1]}},
			{"label": "x", "pass1": {"baseline": [1], "candidate": [1]}, "pass2": {"baseline": [1], "candidate": [1]}}]}`,
			errMsg: `scenario "x": label: duplicate of scenarios[0]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := driftcheck.ParseScenarios([]byte(tc.data))
			if err == nil || err.Error() != tc.errMsg {
				t.Errorf("error %v\nwant %q", err, tc.errMsg)
			}
		})
	}
}
