package armbuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// checkLanes lists, through st, the lanes of every arm whose kind can list them (a gotest
// binary's -test.list) and checks that each lane of the spec is there, so that a lane
// missing in one arm is an error before anything is measured rather than a column of
// failed runs. Kinds without a listing (exec) are not checked.
func checkLanes(ctx context.Context, st harness.Starter, exp *spec.Experiment, arms []receipt.Arm) error {
	for _, a := range arms {
		have, listed, err := harness.ListLanes(ctx, st, a)
		if err != nil || !listed {
			if err != nil {
				return err
			}
			continue
		}
		kind, _ := lanekind.Lookup(a.Kind)
		if missing := missingLanes(kind, exp.Lanes, have); len(missing) > 0 {
			return fmt.Errorf("arm %s: %s not in the arm's binary (it has: %s)",
				a.Name, lanePhrase(missing), orNone(have))
		}
	}
	return nil
}

// missingLanes returns the lanes that kind does not find among the listed ones.
func missingLanes(kind lanekind.Kind, lanes []spec.Lane, have []string) []string {
	var missing []string
	for _, l := range lanes {
		if !kind.Offers(have, l.Name) {
			missing = append(missing, l.Name)
		}
	}
	return missing
}

// lanePhrase names missing lanes: "lane X is" or "lanes X, Y are".
func lanePhrase(lanes []string) string {
	if len(lanes) == 1 {
		return fmt.Sprintf("lane %s is", lanes[0])
	}
	return fmt.Sprintf("lanes %s are", strings.Join(lanes, ", "))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no lanes"
	}
	return strings.Join(names, ", ")
}
