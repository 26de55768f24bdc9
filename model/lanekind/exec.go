package lanekind

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/model/receipt"
)

// execKind runs any program that speaks the Go benchmark format: the harness's command
// template, once per run, printing exactly one result line per recorded sample (its
// warmup operations print nothing).
type execKind struct{}

func (execKind) Name() string { return Exec }

func (execKind) Check(h Harness, gate bool) []Problem {
	var ps []Problem
	if len(h.Command) == 0 {
		ps = append(ps, Problem{"command", "is required for kind exec"})
	} else if !containsPlaceholder(h.Command, "{bin}") {
		ps = append(ps, Problem{"command", "must contain {bin}"})
	}
	ps = append(ps, unknownPlaceholders("command", h.Command, Placeholders())...)
	if len(h.Build) > 0 && !containsPlaceholder(h.Build, "{out}") {
		ps = append(ps, Problem{"build", "must contain {out}"})
	}
	ps = append(ps, unknownPlaceholders("build", h.Build, BuildPlaceholders())...)
	if gate && len(h.Build) == 0 {
		ps = append(ps, Problem{"build", "is required: the gate builds both arms from git, so an exec harness needs a build command (e.g. [go, build, -o, \"{out}\", ./cmd/lane])"})
	}
	if h.Benchtime != "" {
		ps = append(ps, Problem{"benchtime", "only for kind gotest"})
	}
	return ps
}

func (execKind) Build(h Harness) (Build, *Problem) {
	if len(h.Build) == 0 {
		return Build{}, &Problem{"build", "is required to build arms from git with an exec harness (e.g. [go, build, -o, \"{out}\", ./cmd/lane])"}
	}
	return Build{Template: h.Build, Bin: "harness"}, nil
}

func (execKind) Command(h Harness) []string { return h.Command }

// An exec program has no listing: its lanes are whatever its command accepts.
func (execKind) ListArgs(string) []string { return nil }

func (execKind) Lanes([]byte) []string { return nil }

func (execKind) Offers(listed []string, lane string) bool { return slices.Contains(listed, lane) }

// An exec program's operations are its own: no b.N loop.
func (execKind) Benchtime([]string) (string, bool) { return "", false }

func (execKind) Prepare(r Run) []Proc { return runOnce(r) }

func (execKind) Collect(r Run, outs []Output) (Samples, error) {
	out, err := one(outs)
	if err != nil {
		return Samples{}, err
	}
	return ParseOutput(out.Stdout, r.Lane, r.Samples, 0, r.Unit)
}

// containsPlaceholder reports whether an argument of template contains p.
func containsPlaceholder(template []string, p string) bool {
	return slices.ContainsFunc(template, func(s string) bool { return strings.Contains(s, p) })
}

// Counter counts from an entry of harness.op-start to the next entry of harness.op-end,
// one operation each.
func (execKind) Counter(h Harness, _ string) (receipt.Counter, *Problem) {
	for _, f := range []struct{ name, v, when string }{{"op-start", h.OpStart, "before"}, {"op-end", h.OpEnd, "after"}} {
		if f.v == "" {
			return receipt.Counter{}, &Problem{f.name, fmt.Sprintf("is required for an exec harness with lanes that count instructions (metric: instructions): the function the lane program calls right %s each operation, e.g. main.%s", f.when, map[string]string{"op-start": "opStart", "op-end": "opEnd"}[f.name])}
		}
	}
	return receipt.Counter{Tool: CounterTool, Start: h.OpStart, End: h.OpEnd, Iterations: 1}, nil
}
