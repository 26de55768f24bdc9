package driftcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MaxScenarioPasses bounds the passes of a hand-collected scenario, as the spec bounds a
// run's: "pass100000000" would otherwise size the analysis.
const MaxScenarioPasses = 1000

// Arm names used by ParseScenarios.
const (
	ScenarioBase      = "baseline"
	ScenarioCandidate = "candidate"
)

// ParseScenarios reads the hand-collected form of a drift check:
//
//	{"scenarios": [
//	  {"label": "point-read",
//	   "pass1": {"baseline": [12.1, 12.3], "candidate": [10.9, 11.0]},
//	   "pass2": {"baseline": [...], "candidate": [...]}}]}
//
// Each scenario becomes a lower-is-better lane named by its label, measured on the
// arms ScenarioBase and ScenarioCandidate in one collection. Passes are pass1, pass2, ...
// with no gap and in pairs (pass1 forward, pass2 reverse, pass3 forward, ...); the Input's
// Passes is the largest count, and a scenario with fewer passes has fewer pairs.
// An empty sample array is a failed run. Errors name the scenario and the field.
func ParseScenarios(data []byte) (Input, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Input{}, fmt.Errorf("scenarios: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "scenarios" {
			return Input{}, fmt.Errorf("field %q: unknown (want \"scenarios\")", k)
		}
	}
	rawList, ok := top["scenarios"]
	if !ok {
		return Input{}, errors.New("scenarios: missing")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(rawList, &raw); err != nil {
		return Input{}, fmt.Errorf("scenarios: %w", err)
	}
	if len(raw) == 0 {
		return Input{}, errors.New("scenarios: empty list")
	}
	in := Input{Base: ScenarioBase, Candidates: []string{ScenarioCandidate}, Collections: 1}
	labels := map[string]int{}
	for i, r := range raw {
		obs, passes, label, err := parseScenario(i, r)
		if err != nil {
			return Input{}, err
		}
		if j, dup := labels[label]; dup {
			return Input{}, fmt.Errorf("scenario %q: label: duplicate of scenarios[%d]", label, j)
		}
		labels[label] = i
		in.Lanes = append(in.Lanes, Lane{Name: label})
		in.Observations = append(in.Observations, obs...)
		in.Passes = max(in.Passes, passes)
	}
	return in, nil
}

// parseScenario reads scenarios[i] and returns its observations, pass count and label.
func parseScenario(i int, data json.RawMessage) ([]Observation, int, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, 0, "", fmt.Errorf("scenarios[%d]: %w", i, err)
	}
	var label string
	rawLabel, ok := fields["label"]
	if !ok {
		return nil, 0, "", fmt.Errorf("scenarios[%d]: label: missing", i)
	}
	if err := json.Unmarshal(rawLabel, &label); err != nil {
		return nil, 0, "", fmt.Errorf("scenarios[%d]: label: %w", i, err)
	}
	if strings.TrimSpace(label) == "" {
		return nil, 0, "", fmt.Errorf("scenarios[%d]: label: empty", i)
	}
	where := fmt.Sprintf("scenario %q", label)
	last := 0
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if k == "label" {
			continue
		}
		n, ok := passNumber(k)
		if !ok {
			return nil, 0, "", fmt.Errorf("%s: field %q: unknown (want label or pass1, pass2, ...)", where, k)
		}
		if n > MaxScenarioPasses {
			return nil, 0, "", fmt.Errorf("%s: %s: more than %d passes", where, k, MaxScenarioPasses)
		}
		last = max(last, n)
	}
	if last == 0 {
		return nil, 0, "", fmt.Errorf("%s: pass1: missing (want pass1 and pass2 at least)", where)
	}
	if last%2 == 1 {
		return nil, 0, "", fmt.Errorf("%s: pass%d: has no partner pass%d (passes come in forward/reverse pairs)", where, last, last+1)
	}
	var obs []Observation
	for p := 1; p <= last; p++ {
		key := fmt.Sprintf("pass%d", p)
		raw, ok := fields[key]
		if !ok {
			return nil, 0, "", fmt.Errorf("%s: %s: missing (passes run pass1 to pass%d without a gap)", where, key, last)
		}
		var sides map[string]json.RawMessage
		if err := json.Unmarshal(raw, &sides); err != nil || sides == nil {
			if err == nil {
				err = errors.New("null")
			}
			return nil, 0, "", fmt.Errorf("%s: %s: want an object with baseline and candidate: %w", where, key, err)
		}
		for _, s := range slices.Sorted(maps.Keys(sides)) {
			if s != ScenarioBase && s != ScenarioCandidate {
				return nil, 0, "", fmt.Errorf("%s: %s.%s: unknown field (want baseline or candidate)", where, key, s)
			}
		}
		for _, arm := range []string{ScenarioBase, ScenarioCandidate} {
			rs, ok := sides[arm]
			if !ok {
				return nil, 0, "", fmt.Errorf("%s: %s.%s: missing", where, key, arm)
			}
			var xs []float64
			if err := json.Unmarshal(rs, &xs); err != nil {
				return nil, 0, "", fmt.Errorf("%s: %s.%s: want an array of numbers: %w", where, key, arm, err)
			}
			if xs == nil {
				xs = []float64{}
			}
			for j, x := range xs {
				// Scenarios are timings, as a lane's output is, and a lane printing a
				// negative time fails its run: a hand-collected one is refused alike.
				if x < 0 {
					return nil, 0, "", fmt.Errorf("%s: %s.%s[%d]: negative time %v", where, key, arm, j, x)
				}
			}
			obs = append(obs, Observation{Collection: 1, Pass: p, Lane: label, Arm: arm, Samples: xs})
		}
	}
	return obs, last, label, nil
}

// passNumber parses "passN" with N >= 1 written without leading zeros.
func passNumber(k string) (int, bool) {
	digits, ok := strings.CutPrefix(k, "pass")
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}
