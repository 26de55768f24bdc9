package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Reasons why the decision rule rejects a candidate arm: a closed vocabulary, documented in
// docs/decision-rule.md.
const (
	// ReasonBelowSignal: a primary lane did not reproduce its expected effect beyond the
	// effect floor in some collection (it read neutral or mixed).
	ReasonBelowSignal = "below-signal"
	// ReasonRegression: a guard lane, or a primary lane expected faster or neutral,
	// REPRODUCED slower, and the primary lanes did not all deliver their gain.
	ReasonRegression = "regression"
	// ReasonTradeoff: every primary lane delivered its gain, but a guard lane REPRODUCED
	// slower: the change buys one thing with another.
	ReasonTradeoff = "tradeoff"
	// ReasonPremiseRefuted: the mechanism the hypothesis relies on is not there: a primary
	// lane moved against its prediction, the predicted shape does not hold, or the
	// incidence gate shows the situation is too rare to matter.
	ReasonPremiseRefuted = "premise-refuted"
	// ReasonDrift: a primary lane's pairs were drift-suspected in every collection: the
	// apparent effect follows the run order or time, not the arm.
	ReasonDrift = "drift"
)

// RejectionReasons returns the closed vocabulary of rejection reasons.
func RejectionReasons() []string {
	return []string{ReasonBelowSignal, ReasonRegression, ReasonTradeoff, ReasonPremiseRefuted, ReasonDrift}
}

// Reasons why the decision rule can neither accept nor reject a candidate arm: the
// measurement cannot answer the question yet. Also a closed vocabulary.
const (
	// OpenDrift: a primary lane's verdict is drift in some but not all collections, or a
	// guard lane's is drift with its median or mean pass delta at or beyond the floor on the
	// slower side (in any number of collections); rerun on a quiet host.
	OpenDrift = "drift"
	// OpenInsufficient: a primary or guard lane, or a lane of the predicted shape, lacks
	// data in some collection.
	OpenInsufficient = "insufficient"
	// OpenControl: a control lane did not read neutral (or lacks data), so the
	// measurement itself is suspect (or cannot be checked); this overrides any rejection.
	OpenControl = "control"
	// OpenNotMeasured: a lane the rule needs is not in the receipt.
	OpenNotMeasured = "not-measured"
	// OpenSpecChanged: the page changed after the run: a lane's role, expectation or
	// better direction differs from the one the receipt ran, a lane or candidate arm the
	// receipt ran is no longer on the page, or the profile the receipt ran is gone (which
	// overrides any rejection, as the evidence the spec asks for is then unknown).
	OpenSpecChanged = "spec-changed"
	// OpenMixed: a primary lane expected neutral read mixed (material, but not reproduced
	// in one direction), or a guard lane read mixed with a slower median at or beyond the
	// floor, or with a pair that reproduced slower: a regression cannot be ruled out.
	OpenMixed = "mixed"
	// OpenIncidence: the spec has an incidence gate and it was not measured, or the
	// measurement is broken, counted other counters than the spec names, had a silent
	// positive control, or counted no events.
	OpenIncidence = "incidence"
	// OpenUnderPowered: the receipt ran fewer collections, passes or samples than the
	// spec's protocol for the receipt's profile asks for, so it cannot settle the
	// experiment either way; this overrides any rejection.
	OpenUnderPowered = "under-powered"
)

// InconclusiveReasons returns the closed vocabulary of reasons for an inconclusive arm.
func InconclusiveReasons() []string {
	return []string{OpenDrift, OpenInsufficient, OpenControl, OpenNotMeasured, OpenSpecChanged, OpenMixed, OpenIncidence, OpenUnderPowered}
}

// DirectionsFile is the directions registry under the ledger root.
const DirectionsFile = "experiments/directions.yaml"

// Direction is one entry of the directions registry: a line of work that experiments
// belong to.
type Direction struct {
	Name        string
	Description string
	// Line is the entry's line in the registry.
	Line int
}

// DirectionPattern is what a direction's name must match.
const DirectionPattern = `^[a-z0-9][a-z0-9-]*$`

// ReadDirections reads the directions registry at path: a YAML mapping of direction name
// to a one-line description. Problems are returned as *Problem values joined with
// errors.Join; a missing file is an error that wraps os.ErrNotExist.
func ReadDirections(path string) ([]Direction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseDirections(path, data)
}

// ParseDirections parses the directions registry data read from path; see ReadDirections.
func ParseDirections(path string, data []byte) ([]Direction, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Problem{File: path, Line: yamlLine(err), Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(bytes.TrimSpace(data)) == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Problem{File: path, Line: root.Line, Msg: "must be a mapping of direction name to a one-line description"}
	}
	directionName := regexp.MustCompile(DirectionPattern)
	var out []Direction
	var errs []error
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		bad := func(format string, args ...any) {
			errs = append(errs, &Problem{File: path, Line: k.Line, Msg: fmt.Sprintf(format, args...)})
		}
		switch first, dup := seen[k.Value]; {
		case k.Kind != yaml.ScalarNode:
			bad("direction names must be strings")
			continue
		case !directionName.MatchString(k.Value):
			bad("direction %q: invalid name (lower case, digits and -)", k.Value)
		case dup:
			bad("direction %s: given twice (first at line %d)", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		switch {
		case v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str":
			bad("direction %s: the description must be one line of text", k.Value)
		case strings.TrimSpace(v.Value) == "":
			bad("direction %s: the description must not be empty", k.Value)
		case strings.Contains(strings.TrimSpace(v.Value), "\n"):
			bad("direction %s: the description must be one line", k.Value)
		}
		out = append(out, Direction{Name: k.Value, Description: strings.TrimSpace(v.Value), Line: k.Line})
	}
	return out, errors.Join(errs...)
}

// yamlLine returns the line number a YAML error mentions, or 1.
func yamlLine(err error) int {
	if m := regexp.MustCompile(`line (\d+)`).FindStringSubmatch(err.Error()); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	return 1
}

// directionsPath returns the registry's path under root.
func directionsPath(root string) string {
	return filepath.Join(root, filepath.FromSlash(DirectionsFile))
}
