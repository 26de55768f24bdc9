package spec

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/lanekind"
)

// Protocol defaults, used for every field that neither the spec, the profile nor a flag
// sets.
const (
	DefaultSamples     = 21
	DefaultWarmup      = 5
	DefaultPasses      = 4
	DefaultCollections = 2
	DefaultSeed        = 1
	DefaultTimeout     = 10 * time.Minute
	// DefaultMinPairs, DefaultMaxPairs and DefaultBudget are the stopping rule of a
	// sequential run that sets none.
	DefaultMinPairs = 2
	DefaultMaxPairs = 20
	DefaultBudget   = 15 * time.Minute
	// DefaultLayouts is the layout builds per arm of a gotest harness that sets none: each
	// a link of the same compiled packages (under a second, cached), and the layouts'
	// share of a lane's mean falls as 1/K, so eight cost seconds and halve what four leave
	// (docs/methodology.md, "Code layout": how many layouts, measured).
	DefaultLayouts = 8
	// MaxLayouts bounds protocol.layouts.
	MaxLayouts = 16
)

// Upper bounds of the protocol. Every count a spec, a profile or a flag gives is checked
// against them, so that no value can overflow a count (warmup + samples is passed to a
// lane as one number) or make a schedule that does not fit in memory.
const (
	MaxSamples     = 100_000
	MaxWarmup      = 100_000
	MaxPasses      = 1_000
	MaxCollections = 100
	MaxTimeout     = 24 * time.Hour
	// MaxRuns bounds collections x passes x lanes x arms: the processes of one run.
	MaxRuns = 100_000
	// MaxDriftThreshold bounds the drift thresholds (percent, or a ratio) and a gate's
	// threshold-pct.
	MaxDriftThreshold = 1000
	// MaxCalibrationDF bounds drift.calibration-df.
	MaxCalibrationDF = 100
	// MaxSavingNs bounds incidence.saving-ns: 1000 s per event.
	MaxSavingNs = 1e12
)

// Lane defaults.
const (
	// DefaultExpect is the expected direction of a primary lane that gives none.
	DefaultExpect = ExpectFaster
	// DefaultBetter is the better-direction of a lane that gives none.
	DefaultBetter = BetterLower
)

// DefaultProtocol returns the protocol used when the spec sets nothing: 21 samples after
// 5 warmup operations per run, 4 passes per collection, 2 collections, seed 1, and a
// 10 minute timeout per run.
func DefaultProtocol() Protocol {
	return Protocol{
		Samples:     DefaultSamples,
		Warmup:      DefaultWarmup,
		Passes:      DefaultPasses,
		Collections: DefaultCollections,
		Seed:        DefaultSeed,
		Timeout:     Duration(DefaultTimeout),
	}
}

// Overrides are the command-line choices that change what a run does. A nil pointer or
// an empty string leaves the spec's value alone.
type Overrides struct {
	// Profile names one of the spec's profiles (--profile).
	Profile string
	// Samples, Warmup, Passes and Collections override the protocol (--samples,
	// --warmup, --passes, --collections).
	Samples, Warmup, Passes, Collections *int
	// Seed overrides the protocol's seed (--seed).
	Seed *int64
	// Lanes is a regular expression over lane names (--lanes); only matching lanes run.
	// It is unanchored, like go test -bench: write ^name$ for one lane.
	Lanes string
	// Timeout overrides the per-run timeout (--timeout).
	Timeout *time.Duration
	// CPUs overrides the CPUs lanes are pinned to (--cpus; "all" unpins).
	CPUs *string
	// Layouts overrides the layout builds per arm (--layouts; 1 measures one build).
	Layouts *int
	// UntilDecided makes the run sequential (--until-decided), with the spec's stopping
	// rule or the defaults; MaxPairs and Budget override its fields (--max-pairs,
	// --budget) and imply it.
	UntilDecided bool
	MaxPairs     *int
	Budget       *time.Duration
}

// Resolved is what a run of the experiment actually uses.
type Resolved struct {
	// Profile is the profile applied, or "".
	Profile string
	// Protocol is the effective protocol: every field set, from (lowest first) the
	// defaults, harness.timeout, the spec's protocol, the profile and the overrides.
	Protocol Protocol
	// Drift holds the drift check thresholds and error rates, defaults filled in.
	Drift driftcheck.Config
	// Lanes are the selected lanes in spec order, with Expect (primary lanes) and Better
	// defaults filled in.
	Lanes []Lane
}

// AllCPUs is the protocol.cpus value that undoes a pin: the operating system places the
// lanes.
const AllCPUs = "all"

// CPUList returns the CPUs the protocol pins lanes to, or nil when it does not pin them.
// It expects a validated protocol.
func (p Protocol) CPUList() []int {
	if p.CPUs == "" || p.CPUs == AllCPUs {
		return nil
	}
	cpus, err := cpuset.Parse(p.CPUs)
	if err != nil {
		return nil
	}
	return cpus
}

// FullProfile is the profile name that means the spec's own protocol, unless the spec
// defines a profile of that name.
const FullProfile = "full"

// Resolve computes the protocol, drift thresholds and lanes of a run from the spec and
// the overrides. It expects a validated Experiment (Parse validates). Problems are
// returned as *Error values joined with errors.Join: overrides are named by their flag
// ("--passes 3: must be even", "--profile quick2: unknown profile; the spec has: quick").
func (e *Experiment) Resolve(o Overrides) (Resolved, error) {
	var probs problems
	r := Resolved{Profile: o.Profile, Protocol: DefaultProtocol(), Drift: driftcheck.DefaultConfig()}
	p := &r.Protocol
	origin := map[string]string{} // protocol field -> spec field or flag that set it

	if e.Harness.Timeout != 0 || e.set("harness.timeout") {
		p.Timeout = e.Harness.Timeout
		origin["timeout"] = "harness.timeout"
	}
	e.mergeProtocol(p, e.Protocol, "protocol.", origin)
	if _, defined := e.Profiles[o.Profile]; o.Profile == FullProfile && !defined {
		// "full" names the spec's own protocol, so scripts can always pass a profile.
		o.Profile, r.Profile = "", ""
	}
	layers := []*Sequential{e.Protocol.Sequential}
	if o.Profile != "" {
		prof, ok := e.Profiles[o.Profile]
		layers = append(layers, prof.Sequential)
		if !ok {
			msg := "unknown profile; the spec has none"
			if len(e.Profiles) > 0 {
				msg = "unknown profile; the spec has: " + strings.Join(slices.Sorted(maps.Keys(e.Profiles)), ", ")
			}
			probs.list = append(probs.list, &Error{Field: "--profile " + o.Profile, Msg: msg})
		} else {
			e.mergeProtocol(p, prof, "profiles."+o.Profile+".", origin)
		}
	}
	flagInt := func(dst *int, v *int, name string) {
		if v != nil {
			*dst = *v
			origin[name] = "--" + name + " " + strconv.Itoa(*v)
		}
	}
	flagInt(&p.Samples, o.Samples, "samples")
	flagInt(&p.Warmup, o.Warmup, "warmup")
	flagInt(&p.Passes, o.Passes, "passes")
	flagInt(&p.Collections, o.Collections, "collections")
	if o.Seed != nil {
		p.Seed = *o.Seed
		origin["seed"] = "--seed " + strconv.FormatInt(*o.Seed, 10)
	}
	if o.Timeout != nil {
		p.Timeout = Duration(*o.Timeout)
		origin["timeout"] = "--timeout " + o.Timeout.String()
	}
	if o.CPUs != nil {
		p.CPUs = *o.CPUs
		origin["cpus"] = "--cpus " + *o.CPUs
	}
	flagInt(&p.Layouts, o.Layouts, "layouts")
	if err := e.resolveLayouts(p, origin["layouts"]); err != nil {
		probs.list = append(probs.list, err)
	}
	e.resolveSequential(p, layers, o, &probs)
	checkProtocol(*p, func(string) bool { return true }, func(name, msg string) {
		from := origin[name]
		if strings.HasPrefix(from, "--") {
			probs.list = append(probs.list, &Error{Field: from, Msg: msg})
		} else {
			probs.list = append(probs.list, &Error{File: e.Path, Line: e.lineOf(from), Field: from, Msg: msg})
		}
	})

	r.Drift = e.resolveDrift(p)

	lanes, err := e.selectLanes(o.Lanes)
	if err != nil {
		probs.list = append(probs.list, err)
	}
	r.Lanes = lanes
	if len(probs.list) == 0 {
		e.checkRuns(*p, len(lanes), origin, &probs)
	}
	if err := probs.err(); err != nil {
		return Resolved{}, err
	}
	return r, nil
}

// checkRuns reports a protocol that, with this many lanes and the spec's arms, makes more
// than MaxRuns processes. The problem is placed where passes were set (or, when they keep
// their default, collections): those are what multiply.
func (e *Experiment) checkRuns(p Protocol, lanes int, origin map[string]string, probs *problems) {
	arms := max(len(e.Arms), 1)
	runs := int64(p.Collections) * int64(p.Passes) * int64(lanes) * int64(arms)
	if runs <= MaxRuns {
		return
	}
	from := origin["passes"]
	if from == "" {
		from = origin["collections"]
	}
	msg := fmt.Sprintf("makes %d runs (%d collections x %d passes x %d lanes x %d arms), more than the limit of %d; use fewer passes, collections or lanes",
		runs, p.Collections, p.Passes, lanes, arms, MaxRuns)
	switch {
	case strings.HasPrefix(from, "--"):
		probs.list = append(probs.list, &Error{Field: from, Msg: msg})
	case from != "":
		probs.list = append(probs.list, &Error{File: e.Path, Line: e.lineOf(from), Field: from, Msg: msg})
	default:
		probs.list = append(probs.list, &Error{File: e.Path, Line: e.lineOf("lanes"), Field: "lanes", Msg: msg})
	}
}

// mergeProtocol copies into p the fields of q that are set (non-zero, or written in the
// page under prefix), recording where each came from.
func (e *Experiment) mergeProtocol(p *Protocol, q Protocol, prefix string, origin map[string]string) {
	take := func(name string, nonzero bool, apply func()) {
		if nonzero || e.set(prefix+name) {
			apply()
			origin[name] = prefix + name
		}
	}
	take("samples", q.Samples != 0, func() { p.Samples = q.Samples })
	take("warmup", q.Warmup != 0, func() { p.Warmup = q.Warmup })
	take("passes", q.Passes != 0, func() { p.Passes = q.Passes })
	take("collections", q.Collections != 0, func() { p.Collections = q.Collections })
	take("seed", q.Seed != 0, func() { p.Seed = q.Seed })
	take("timeout", q.Timeout != 0, func() { p.Timeout = q.Timeout })
	take("cpus", q.CPUs != "", func() { p.CPUs = q.CPUs })
	take("separate-arms", q.SeparateArms, func() { p.SeparateArms = q.SeparateArms })
	take("layouts", q.Layouts != 0, func() { p.Layouts = q.Layouts })
}

// resolveDrift returns the drift check's configuration: the spec's drift section over
// the defaults, with the stopping rule's looks of protocol p.
func (e *Experiment) resolveDrift(p *Protocol) driftcheck.Config {
	c := driftcheck.DefaultConfig()
	d := e.Drift
	if d.EffectFloorPct != 0 || e.set("drift.effect-floor-pct") {
		c.EffectFloorPct = d.EffectFloorPct
	}
	if d.CleanCVPct != 0 || e.set("drift.clean-cv-pct") {
		c.CleanCVPct = d.CleanCVPct
	}
	if d.CVAsymmetry != 0 || e.set("drift.cv-asymmetry") {
		c.CVAsymmetry = d.CVAsymmetry
	}
	if d.Alpha != 0 {
		c.Alpha = d.Alpha
	}
	if p.Sequential != nil {
		c.MinPairs, c.MaxPairs = p.Sequential.MinPairs, p.Sequential.MaxPairs
	}
	if d.Power != 0 {
		c.Power = d.Power
	}
	if d.Spending != "" {
		c.Spending = d.Spending
	}
	if d.MaxCalibrationDF != 0 {
		c.MaxCalibrationDF = d.MaxCalibrationDF
	}
	return c
}

// resolveLayouts gives p its layout builds per arm when nothing set them (several for a
// gotest harness, one otherwise), and refuses several for a harness whose builds
// flipbench does not link; from names what set them.
func (e *Experiment) resolveLayouts(p *Protocol, from string) *Error {
	switch {
	case p.Layouts == 0 && e.Harness.Kind == lanekind.Gotest:
		p.Layouts = DefaultLayouts
	case p.Layouts == 0:
		p.Layouts = 1
	case p.Layouts > 1 && e.Harness.Kind != lanekind.Gotest:
		return layoutKindError(e, from)
	}
	return nil
}

// layoutKindError refuses layouts for a harness whose builds flipbench does not link:
// only a gotest harness's arms are Go test binaries linked by the go command.
func layoutKindError(e *Experiment, from string) *Error {
	msg := "only a gotest harness's arms are linked with several layouts (an exec harness builds its own binaries); write 1, or leave it out"
	if strings.HasPrefix(from, "--") {
		return &Error{Field: from, Msg: msg}
	}
	return &Error{File: e.Path, Line: e.lineOf(from), Field: from, Msg: msg}
}

// selectLanes returns the lanes whose names match the --lanes expression (all when it is
// empty), with defaults filled in.
func (e *Experiment) selectLanes(expr string) ([]Lane, *Error) {
	flag := fmt.Sprintf("--lanes %q", expr)
	var re *regexp.Regexp
	if expr != "" {
		var err error
		if re, err = regexp.Compile(expr); err != nil {
			var syn *syntax.Error
			msg := err.Error()
			if errors.As(err, &syn) {
				msg = syn.Code.String() + ": `" + syn.Expr + "`"
			}
			return nil, &Error{Field: flag, Msg: "invalid regular expression: " + msg}
		}
	}
	var lanes []Lane
	for i, l := range e.Lanes {
		if re != nil && !re.MatchString(l.Name) {
			continue
		}
		if l.Expect == "" && l.ExpectArms == nil && l.Role == RolePrimary {
			l.Expect = DefaultExpect
		}
		if l.Better == "" {
			l.Better = DefaultBetter
		}
		l.Metric = ""
		switch e.Harness.MetricOf(e.Lanes[i]) {
		case lanekind.MetricInstructions:
			l.Metric = lanekind.MetricInstructions
			l.Unit = lanekind.InstructionsUnit
		case lanekind.MetricCPU, lanekind.MetricAuto:
			l.Metric = e.Harness.MetricOf(e.Lanes[i])
		}
		lanes = append(lanes, l)
	}
	if len(lanes) == 0 && re != nil {
		names := make([]string, len(e.Lanes))
		for i, l := range e.Lanes {
			names[i] = l.Name
		}
		return nil, &Error{Field: flag, Msg: "selects no lane; the spec has: " + strings.Join(names, ", ")}
	}
	return lanes, nil
}

// Base returns the arm named base, or the zero Arm when there is none (Validate reports
// that).
func (e *Experiment) Base() Arm {
	for _, a := range e.Arms {
		if a.Name == BaseArm {
			return a
		}
	}
	return Arm{}
}

// Candidates returns the arms other than base, in spec order.
func (e *Experiment) Candidates() []Arm {
	var out []Arm
	for _, a := range e.Arms {
		if a.Name != BaseArm {
			out = append(out, a)
		}
	}
	return out
}

// SameArms reports whether the page asks for identical arms: every candidate is built or
// taken exactly as the base is (same binary or ref, patch, tags, linker flags, environment
// and arguments), as an A/A page does. Such a page is a request to measure arms whose
// binaries are identical; a page whose arms differ but build the same binary is not.
func (e *Experiment) SameArms() bool {
	base := e.Base()
	cands := e.Candidates()
	for _, a := range cands {
		if a.Bin != base.Bin || a.Ref != base.Ref || a.Patch != base.Patch || a.Ldflags != base.Ldflags ||
			!slices.Equal(a.Tags, base.Tags) || !slices.Equal(a.Args, base.Args) || !maps.Equal(a.Env, base.Env) {
			return false
		}
	}
	return len(cands) > 0
}

// Lane returns the lane with the given name as written in the spec (no defaults filled
// in), and whether there is one.
func (e *Experiment) Lane(name string) (Lane, bool) {
	for _, l := range e.Lanes {
		if l.Name == name {
			return l, true
		}
	}
	return Lane{}, false
}

// resolveSequential merges the stopping rule of the layers (spec protocol, profile) and the
// overrides into p, and sets Passes from it. It returns problems named by the field or flag
// that set them.
func (e *Experiment) resolveSequential(p *Protocol, layers []*Sequential, o Overrides, probs *problems) {
	var seq *Sequential
	for _, l := range layers {
		if l != nil {
			s := *l
			if seq != nil {
				// A profile's rule sets only the fields it writes.
				if s.MinPairs == 0 {
					s.MinPairs = seq.MinPairs
				}
				if s.MaxPairs == 0 {
					s.MaxPairs = seq.MaxPairs
				}
				if s.Budget == 0 {
					s.Budget = seq.Budget
				}
			}
			seq = &s
		}
	}
	if seq == nil && !o.UntilDecided && o.MaxPairs == nil && o.Budget == nil {
		p.Sequential = nil
		return
	}
	if seq == nil {
		seq = &Sequential{}
	}
	if o.Passes != nil {
		probs.list = append(probs.list, &Error{Field: "--passes", Msg: "a sequential run sets its passes from max-pairs; give --max-pairs instead"})
	}
	if seq.MinPairs == 0 {
		seq.MinPairs = DefaultMinPairs
	}
	if seq.MaxPairs == 0 {
		seq.MaxPairs = max(DefaultMaxPairs, seq.MinPairs)
	}
	if seq.Budget == 0 {
		seq.Budget = Duration(DefaultBudget)
	}
	if o.MaxPairs != nil {
		seq.MaxPairs = *o.MaxPairs
	}
	if o.Budget != nil {
		seq.Budget = Duration(*o.Budget)
	}
	field := func(name, flag string, set bool) string {
		if set {
			return flag
		}
		return "protocol.sequential." + name
	}
	switch {
	case seq.MaxPairs < 1 || seq.MaxPairs > MaxPasses/2:
		probs.list = append(probs.list, &Error{Field: field("max-pairs", "--max-pairs", o.MaxPairs != nil), Msg: fmt.Sprintf("must be between 1 and %d", MaxPasses/2)})
	case seq.MinPairs > seq.MaxPairs:
		probs.list = append(probs.list, &Error{Field: field("min-pairs", "--max-pairs", o.MaxPairs != nil), Msg: fmt.Sprintf("min-pairs %d is above max-pairs %d", seq.MinPairs, seq.MaxPairs)})
	}
	if seq.Budget <= 0 || time.Duration(seq.Budget) > MaxTimeout {
		probs.list = append(probs.list, &Error{Field: field("budget", "--budget", o.Budget != nil), Msg: "must be positive and at most " + MaxTimeout.String()})
	}
	p.Sequential = seq
	p.Passes = 2 * seq.MaxPairs
}
