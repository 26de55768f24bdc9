package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/spec"
)

// PageInput is what a saved comparison's page says beyond its experiment.
type PageInput struct {
	// Command is the flipbench compare command line.
	Command string
	// Names say what the arms are ("main (merge base 1a2b3c4d5e6f)").
	Names Names
	// Bench is the --bench expression, "" for every benchmark.
	Bench string
	// CandRef and CandPatch, when CandRef is set, are what the page's cand arm is built
	// from instead of the comparison's candidate: the commit the run measured, and the
	// working tree's changes as a patch (relative to the ledger root; "" for a clean
	// tree), so that flipbench ab reruns the page.
	CandRef, CandPatch string
}

// Page returns the experiment page of a comparison saved with --save: the front matter of
// e with the protocol as resolved in res (so the receipt's run is the page's
// pre-registered protocol) and the lanes with the roles res gives them, then the sections
// every page has, saying where the comparison came from, and the results markers that
// flipbench finalize fills. It parses with spec.Parse and passes flipbench check.
func Page(e *spec.Experiment, res spec.Resolved, in PageInput) []byte {
	var b strings.Builder
	q := strconv.Quote
	p := res.Protocol
	fmt.Fprintf(&b, "---\nid: %d\ntitle: %s\ndate: %s\nstatus: %s\ncategory: %s\n", e.ID, q(e.Title), e.Date, spec.StatusRunning, spec.CategoryMeasurement)
	metric := ""
	if e.Harness.Metric != "" {
		metric = ", metric: " + e.Harness.Metric
	}
	fmt.Fprintf(&b, "harness: {kind: %s, package: %s, benchtime: %s%s}\n", e.Harness.Kind, q(e.Harness.Package), q(e.Harness.Benchtime), metric)
	fmt.Fprintf(&b, "arms:\n")
	for _, a := range e.Arms {
		switch {
		case a.Name == CandArm && in.CandRef != "" && in.CandPatch != "":
			fmt.Fprintf(&b, "  %s: {ref: %s, patch: %s}\n", a.Name, q(in.CandRef), q(in.CandPatch))
		case a.Name == CandArm && in.CandRef != "":
			fmt.Fprintf(&b, "  %s: {ref: %s}\n", a.Name, q(in.CandRef))
		default:
			fmt.Fprintf(&b, "  %s: {ref: %s}\n", a.Name, q(a.Ref))
		}
	}
	fmt.Fprintf(&b, "protocol:\n  samples: %d\n  warmup: %d\n  collections: %d\n  seed: %d\n  timeout: %s\n",
		p.Samples, p.Warmup, p.Collections, p.Seed, q(p.Timeout.String()))
	if p.CPUs != "" {
		fmt.Fprintf(&b, "  cpus: %s\n", q(p.CPUs))
	}
	if s := p.Sequential; s != nil {
		fmt.Fprintf(&b, "  sequential: {min-pairs: %d, max-pairs: %d, budget: %s}\n", s.MinPairs, s.MaxPairs, q(s.Budget.String()))
	} else {
		fmt.Fprintf(&b, "  passes: %d\n", p.Passes)
	}
	fmt.Fprintf(&b, "lanes:\n")
	for _, l := range res.Lanes {
		if l.Expect != "" {
			fmt.Fprintf(&b, "  - {name: %s, role: %s, expect: %s}\n", q(l.Name), l.Role, l.Expect)
		} else {
			fmt.Fprintf(&b, "  - {name: %s, role: %s}\n", q(l.Name), l.Role)
		}
	}
	fmt.Fprintf(&b, "---\n")
	bench := "every benchmark"
	if in.Bench != "" {
		bench = fmt.Sprintf("the benchmarks that `-bench %s` selects", in.Bench)
	}
	fmt.Fprintf(&b, "## Problem\n\nSaved by `%s`: how does %s compare with %s on %s of `%s`?\n\n",
		in.Command, in.Names.Cand, in.Names.Base, bench, e.Harness.Package)
	fmt.Fprintf(&b, "## Hypothesis\n\n%s\n\n", hypothesis(res.Lanes))
	fmt.Fprintf(&b, "## Approach\n\nThe lanes are the package's benchmarks, each a process of its own (`-test.benchtime %s`, %s after %d warmup), "+
		"base and candidate built from git, in order-flipped pass pairs over %s until every lane is decided (the gate's stopping rule).\n\n",
		e.Harness.Benchtime, human.Count(p.Samples, "sample", "samples"), p.Warmup, human.Count(p.Collections, "collection", "collections"))
	fmt.Fprintf(&b, "<!-- flipbench:results:begin -->\n<!-- flipbench:results:end -->\n\n")
	fmt.Fprintf(&b, "## Decision\n\nPending: `flipbench finalize %d` fills in the results from the receipt.\n", e.ID)
	return []byte(b.String())
}

// hypothesis says what the lanes' roles pre-register, in the words of the decision rule.
func hypothesis(lanes []spec.Lane) string {
	by := map[spec.Role][]string{}
	expect := map[string]bool{}
	for _, l := range lanes {
		by[l.Role] = append(by[l.Role], "`"+l.Name+"`")
		if l.Role == spec.RolePrimary {
			expect[l.Expect] = true
		}
	}
	if len(by[spec.RolePrimary]) == len(lanes) && len(expect) == 1 && expect[spec.ExpectFaster] {
		return "The candidate is faster: every lane is a primary lane expected faster, so a lane reproduced slower rejects it, and one shown neutral leaves it below signal."
	}
	var parts []string
	if p := by[spec.RolePrimary]; len(p) > 0 {
		var e []string
		for _, x := range []string{spec.ExpectFaster, spec.ExpectSlower, spec.ExpectNeutral} {
			if expect[x] {
				e = append(e, x)
			}
		}
		parts = append(parts, fmt.Sprintf("The candidate is %s on the primary %s %s: a primary reproduced the other way rejects it.",
			strings.Join(e, " or "), noun(len(p), "lane", "lanes"), strings.Join(p, ", ")))
	}
	if g := by[spec.RoleGuard]; len(g) > 0 {
		parts = append(parts, fmt.Sprintf("It costs nothing on the %s %s: a guard reproduced slower rejects it (a tradeoff when the primaries delivered), and one whose interval does not rule out a regression beyond the floor leaves it inconclusive.",
			noun(len(g), "guard", "guards"), strings.Join(g, ", ")))
	}
	if c := by[spec.RoleControl]; len(c) > 0 {
		parts = append(parts, fmt.Sprintf("The %s %s must be shown unchanged: a control that reproduces a change makes the run inconclusive, the measurement itself suspect.",
			noun(len(c), "control", "controls"), strings.Join(c, ", ")))
	}
	if s := by[spec.RoleSecondary]; len(s) > 0 {
		parts = append(parts, fmt.Sprintf("The other %s (%s) %s secondary: measured and shown, judged by no rule.",
			noun(len(s), "lane", "lanes"), strings.Join(s, ", "), noun(len(s), "is", "are")))
	}
	return strings.Join(parts, " ")
}

// noun is one or many by n.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
