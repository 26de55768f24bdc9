package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/spec"
)

// PageInput is what a saved comparison's page says beyond its experiment.
type PageInput struct {
	// Command is the flipbench compare command line.
	Command string
	// Names say what the arms are ("main (merge base 1a2b3c4d5e6f)").
	Names Names
	// Bench is the --bench expression, "" for every benchmark.
	Bench string
}

// Page returns the experiment page of a comparison saved with --save: the front matter of
// e with the protocol as resolved in res (so the receipt's run is the page's
// pre-registered protocol) and every lane a primary expected faster, then the sections
// every page has, saying where the comparison came from, and the results markers that
// flipbench finalize fills. It parses with spec.Parse and passes flipbench check.
func Page(e *spec.Experiment, res spec.Resolved, in PageInput) []byte {
	var b strings.Builder
	q := strconv.Quote
	p := res.Protocol
	fmt.Fprintf(&b, "---\nid: %d\ntitle: %s\ndate: %s\nstatus: %s\ncategory: %s\n", e.ID, q(e.Title), e.Date, spec.StatusRunning, spec.CategoryMeasurement)
	fmt.Fprintf(&b, "harness: {kind: %s, package: %s, benchtime: %s}\n", e.Harness.Kind, q(e.Harness.Package), q(e.Harness.Benchtime))
	fmt.Fprintf(&b, "arms:\n")
	for _, a := range e.Arms {
		fmt.Fprintf(&b, "  %s: {ref: %s}\n", a.Name, q(a.Ref))
	}
	fmt.Fprintf(&b, "protocol:\n  samples: %d\n  warmup: %d\n  collections: %d\n  seed: %d\n  timeout: %s\n",
		p.Samples, p.Warmup, p.Collections, p.Seed, q(p.Timeout.String()))
	if s := p.Sequential; s != nil {
		fmt.Fprintf(&b, "  sequential: {min-pairs: %d, max-pairs: %d, budget: %s}\n", s.MinPairs, s.MaxPairs, q(s.Budget.String()))
	} else {
		fmt.Fprintf(&b, "  passes: %d\n", p.Passes)
	}
	fmt.Fprintf(&b, "lanes:\n")
	for _, l := range res.Lanes {
		fmt.Fprintf(&b, "  - {name: %s, role: %s, expect: %s}\n", q(l.Name), spec.RolePrimary, spec.ExpectFaster)
	}
	fmt.Fprintf(&b, "---\n")
	bench := "every benchmark"
	if in.Bench != "" {
		bench = fmt.Sprintf("the benchmarks that `-bench %s` selects", in.Bench)
	}
	fmt.Fprintf(&b, "## Problem\n\nSaved by `%s`: is %s faster than %s on %s of `%s`?\n\n",
		in.Command, in.Names.Cand, in.Names.Base, bench, e.Harness.Package)
	fmt.Fprintf(&b, "## Hypothesis\n\nThe candidate is faster: every lane is a primary lane expected faster, so a lane reproduced slower rejects it, and one shown neutral leaves it below signal.\n\n")
	fmt.Fprintf(&b, "## Approach\n\nThe lanes are the package's benchmarks, each a process of its own (`-test.benchtime %s`, %s after %d warmup), "+
		"base and candidate built from git, in order-flipped pass pairs over %s until every lane is decided (the gate's stopping rule).\n\n",
		e.Harness.Benchtime, plural(p.Samples, "sample", "samples"), p.Warmup, plural(p.Collections, "collection", "collections"))
	fmt.Fprintf(&b, "<!-- flipbench:results:begin -->\n<!-- flipbench:results:end -->\n\n")
	fmt.Fprintf(&b, "## Decision\n\nPending: `flipbench finalize %d` fills in the results from the receipt.\n", e.ID)
	return []byte(b.String())
}

// plural writes n with its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
