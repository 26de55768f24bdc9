package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/flipbench/flipbench/model/spec"
)

// protocolFlags hold the flags that override one field of a run's protocol (--samples,
// --passes, --cpus, ...). A verb registers the ones it offers, each with its own help
// text, and apply turns those given on the command line into spec.Overrides.
type protocolFlags struct {
	samples, warmup, passes, collections, maxPairs, layouts int
	seed                                                    int64
	timeout, budget                                         time.Duration
	cpus                                                    string
	// recalibrate is no protocol field: it asks for the iteration counts to be measured
	// again (pipeline.Options.Recalibrate).
	recalibrate bool
}

// apply sets o's field for every protocol flag registered on f and given.
func (p *protocolFlags) apply(f *pflag.FlagSet, o *spec.Overrides) {
	given := func(name string) bool { return f.Lookup(name) != nil && f.Changed(name) }
	if given("samples") {
		o.Samples = &p.samples
	}
	if given("warmup") {
		o.Warmup = &p.warmup
	}
	if given("passes") {
		o.Passes = &p.passes
	}
	if given("collections") {
		o.Collections = &p.collections
	}
	if given("seed") {
		o.Seed = &p.seed
	}
	if given("timeout") {
		o.Timeout = &p.timeout
	}
	if given("max-pairs") {
		o.MaxPairs = &p.maxPairs
	}
	if given("budget") {
		o.Budget = &p.budget
	}
	if given("cpus") {
		o.CPUs = &p.cpus
	}
	if given("layouts") {
		o.Layouts = &p.layouts
	}
}

// placementFlags registers --cpus, --layouts and --recalibrate, the same on every verb that builds and
// runs lanes.
func placementFlags(f *pflag.FlagSet, p *protocolFlags) {
	cpusFlag(f, &p.cpus)
	f.IntVar(&p.layouts, "layouts", 0, "builds of each arm, each linked with its own function layout and rotated over the pass pairs (default 8 for Go benchmarks; 1: one build per arm)")
	f.BoolVar(&p.recalibrate, "recalibrate", false, "calibrate every benchmark's iteration count again instead of reusing those of an earlier run of the same binaries on this host")
}

// cpusFlag registers --cpus, the same on every verb that runs lanes.
func cpusFlag(f *pflag.FlagSet, cpus *string) {
	f.StringVar(cpus, "cpus", "", `pin every lane process to these CPUs (as taskset -c: 0, 0-1, 0,2); "all" undoes the spec's pin`)
}
