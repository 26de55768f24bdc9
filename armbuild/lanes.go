package armbuild

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// listTimeout bounds one test binary's -test.list.
const listTimeout = time.Minute

// checkLanes lists the benchmarks of every gotest arm (bin -test.list '^Benchmark') and
// checks that each lane of the spec is there, so that a lane missing in one arm is an
// error before anything is measured rather than a column of failed runs. Exec harnesses
// have no listing and are not checked.
func checkLanes(ctx context.Context, exp *spec.Experiment, arms []receipt.Arm) error {
	for _, a := range arms {
		if a.Kind != spec.KindGotest {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		out, err := run(lctx, command{Args: []string{a.Bin, "-test.list", "^Benchmark"}, Env: a.Env})
		cancel()
		if err != nil {
			return fmt.Errorf("arm %s: listing the benchmarks of %s: %w", a.Name, a.Bin, err)
		}
		have := benchmarkNames(string(out))
		if missing := missingLanes(exp.Lanes, have); len(missing) > 0 {
			return fmt.Errorf("arm %s: %s not in the arm's test binary (it has: %s)",
				a.Name, lanePhrase(missing), orNone(have))
		}
	}
	return nil
}

// benchmarkNames picks the benchmark names out of -test.list output.
func benchmarkNames(out string) []string {
	var names []string
	for l := range strings.SplitSeq(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Benchmark") {
			names = append(names, l)
		}
	}
	return names
}

// missingLanes returns the lanes with no benchmark in have. A sub-benchmark lane
// ("Get/size=10") needs its top-level benchmark (BenchmarkGet): -test.list does not list
// sub-benchmarks.
func missingLanes(lanes []spec.Lane, have []string) []string {
	var missing []string
	for _, l := range lanes {
		top, _, _ := strings.Cut(l.Name, "/")
		if !slices.Contains(have, "Benchmark"+top) {
			missing = append(missing, l.Name)
		}
	}
	return missing
}

// lanePhrase names missing lanes: "lane X (BenchmarkX) is" or "lanes X, Y (...) are".
func lanePhrase(lanes []string) string {
	var bench []string
	for _, l := range lanes {
		top, _, _ := strings.Cut(l, "/")
		bench = append(bench, "Benchmark"+top)
	}
	if len(lanes) == 1 {
		return fmt.Sprintf("lane %s (%s) is", lanes[0], bench[0])
	}
	return fmt.Sprintf("lanes %s (%s) are", strings.Join(lanes, ", "), strings.Join(bench, ", "))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no benchmarks"
	}
	return strings.Join(names, ", ")
}
