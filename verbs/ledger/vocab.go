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
