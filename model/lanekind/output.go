package lanekind

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/flipbench/flipbench/model/receipt"
)

// Samples is what one run's output yields.
type Samples struct {
	Values  []float64            // the lane's primary metric, one per sample
	Unit    string               // its unit as printed (ns/op stays ns/op)
	Metrics map[string][]float64 // every other metric, by unit
	// Counting is set by the instruction counter (Counted).
	Counting *receipt.Counting
	// Iters is each sample's iteration count (b.N of a Go benchmark), as printed.
	Iters []int
	// Config holds the file configuration lines the lane printed before its results
	// (goos, goarch, pkg, cpu for a Go test binary), as of its first kept result.
	Config map[string]string
	// Lines is the output line (1-based) of each sample, when the samples are lines of
	// one process's output (ParseOutput); nil otherwise.
	Lines []int
}

// ParseOutput reads a lane process's stdout in Go benchmark format. It expects exactly
// drop+want result lines (a gotest lane prints its warmup results too; drop says how many
// leading results to discard) and returns the last want. Every result must be lane's own:
// named Benchmark<lane>, with at most a -N GOMAXPROCS suffix; a lane printing another
// benchmark's results (a wrong -test.bench pattern, an exec lane that runs the wrong
// case) would otherwise be recorded as samples of the lane it was asked for. unit selects
// the primary metric; empty means the first metric of each line. A line that does not
// parse, another benchmark's name, a missing or NaN value, a negative time or a wrong
// count is an error naming the line.
func ParseOutput(out []byte, lane string, want, drop int, unit string) (Samples, error) {
	r := benchfmt.NewReader(bytes.NewReader(out), "stdout")
	var s Samples
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return Samples{}, fmt.Errorf("output line %d: %s", rec.Line, rec.Msg)
		case *benchfmt.Result:
			n++
			_, line := rec.Pos()
			if !ownResult(rec.Name, lane) {
				return Samples{}, fmt.Errorf("output line %d: Benchmark%s is not this lane's benchmark (want Benchmark%s)", line, rec.Name.Full(), lane)
			}
			if n <= drop {
				continue
			}
			if err := s.add(rec, unit); err != nil {
				return Samples{}, fmt.Errorf("output line %d: %v", line, err)
			}
			s.Iters = append(s.Iters, rec.Iters)
			s.Lines = append(s.Lines, line)
			if s.Config == nil {
				for _, c := range rec.Config {
					if c.File {
						if s.Config == nil {
							s.Config = map[string]string{}
						}
						s.Config[c.Key] = string(c.Value)
					}
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return Samples{}, fmt.Errorf("reading output: %v", err)
	}
	if n != want+drop {
		if drop > 0 {
			return Samples{}, fmt.Errorf("printed %d results, want %d (%d warmup + %d samples)", n, want+drop, drop, want)
		}
		return Samples{}, fmt.Errorf("printed %d results, want %d", n, want)
	}
	return s, nil
}

// ownResult reports whether a result's name (benchfmt drops the "Benchmark" prefix) is
// the lane's, optionally followed by -N (the GOMAXPROCS suffix go test adds).
func ownResult(name benchfmt.Name, lane string) bool {
	rest, ok := strings.CutPrefix(string(name.Full()), lane)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	digits, ok := strings.CutPrefix(rest, "-")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

func (s *Samples) add(res *benchfmt.Result, unit string) error {
	if len(res.Values) == 0 {
		return fmt.Errorf("%s: no values", res.Name.Full())
	}
	primary := -1
	for i, v := range res.Values {
		u := origUnit(v)
		if unit == "" && i == 0 || u == unit || v.Unit == unit {
			primary = i
			break
		}
	}
	if primary < 0 {
		return fmt.Errorf("%s: no %q metric", res.Name.Full(), unit)
	}
	seen := map[string]bool{}
	for i, v := range res.Values {
		u, x := origUnit(v), origValue(v)
		if seen[u] {
			return fmt.Errorf("%s: %s given twice on one line", res.Name.Full(), u)
		}
		seen[u] = true
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: %s is %v", res.Name.Full(), u, x)
		}
		if x < 0 && (v.Unit == "sec/op" || u == "ns/op") {
			return fmt.Errorf("%s: negative time %v %s", res.Name.Full(), x, u)
		}
		if i == primary {
			if s.Unit != "" && s.Unit != u {
				return fmt.Errorf("%s: unit %s, earlier lines used %s", res.Name.Full(), u, s.Unit)
			}
			s.Unit = u
			s.Values = append(s.Values, x)
			continue
		}
		if s.Metrics == nil {
			s.Metrics = map[string][]float64{}
		}
		s.Metrics[u] = append(s.Metrics[u], x)
	}
	return nil
}

// origUnit and origValue undo benchfmt's tidying (ns/op -> sec/op), so values are kept in
// the unit the lane printed.
func origUnit(v benchfmt.Value) string {
	if v.OrigUnit != "" {
		return v.OrigUnit
	}
	return v.Unit
}

func origValue(v benchfmt.Value) float64 {
	if v.OrigUnit != "" {
		return v.OrigValue
	}
	return v.Value
}
