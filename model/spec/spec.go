// Package spec defines an experiment's pre-registered specification: the YAML front matter
// of an experiment page (experiments/NNN-slug.md). It parses the front matter with line
// numbers, rejects unknown fields, validates every field, and resolves the protocol that a
// run uses from the spec, a named profile and command-line overrides.
//
// Errors name the file, the line and the field ("experiments/275-x.md:12: arms.cand.bin:
// must not be empty"), so a typo in a spec never turns into a silently different experiment.
//
// The pipeline:
//
//   - SplitPage cuts a page into its front matter and its markdown body.
//   - Parse decodes the front matter into a yaml.Node tree and walks it into an
//     Experiment, recording the line of every field (Experiment.Lines) and reporting
//     unknown fields, wrong types and empty values; then it calls Validate.
//   - Validate checks every rule (vocabularies, arms, protocol, lanes, ...). It applies no
//     defaults: a field left out stays zero.
//   - Resolve applies defaults (DefaultProtocol, driftcheck.DefaultConfig), the spec, a profile and
//     command-line Overrides, in that order, and selects the lanes of a run.
//
// Problems are *Error values (several joined with errors.Join); Errors lists them. The
// field reference for users is docs/spec.md.
package spec

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// Experiment is the parsed front matter of one experiment page.
type Experiment struct {
	// Path is the page's file path as given to Parse; it prefixes every error.
	Path string `yaml:"-"`

	// ID is the experiment's number, the NNN of its file name.
	ID int `yaml:"id"`
	// Title is the question, in a few words.
	Title string `yaml:"title"`
	// Date is the day the experiment was registered, YYYY-MM-DD.
	Date string `yaml:"date"`
	// Status is one of Statuses().
	Status Status `yaml:"status"`
	// StatusBy is StatusByRule when finalize set the status; empty when a person did.
	StatusBy string `yaml:"status-by,omitempty"`
	// Category is one of Categories().
	Category string `yaml:"category"`
	// Directions are the research directions the experiment belongs to.
	Directions []string `yaml:"directions"`
	// Archive is the folder of the experiment's archived prototypes.
	Archive string `yaml:"archive,omitempty"`

	// Harness says how the lanes are built and run.
	Harness Harness `yaml:"harness"`
	// Arms lists the arms in the order written in the spec; the one named "base" is the
	// baseline and the others are candidates, compared against it.
	Arms []Arm `yaml:"arms"`
	// Protocol is the spec's protocol; zero fields that the page leaves out take their
	// defaults in Resolve.
	Protocol Protocol `yaml:"protocol"`
	// Profiles are named protocol variants chosen with --profile; each sets only the
	// fields it writes.
	Profiles map[string]Protocol `yaml:"profiles,omitempty"`
	// Drift holds the drift check's thresholds and error rates; zero fields take their
	// defaults in Resolve.
	Drift driftcheck.Config `yaml:"drift"`
	// Lanes are the measurements, in spec order.
	Lanes []Lane `yaml:"lanes"`
	// Shape is an optional predicted shape of the effect, checked by the decision rule.
	Shape *Shape `yaml:"shape,omitempty"`
	// Incidence is optional: how to measure how often the optimised situation occurs.
	Incidence *Incidence `yaml:"incidence,omitempty"`
	// Receipts are written by finalize: every receipt that backs the page, with its hash.
	Receipts []ReceiptRef `yaml:"receipts,omitempty"`
	// Reanalysed is written by finalize --reanalyse: the page is judged by this analysis
	// method on purpose, rather than by the one its receipt was planned with.
	Reanalysed *Reanalysis `yaml:"reanalysed,omitempty"`

	// Lines maps the path of every field written in the page ("protocol.samples",
	// "arms.candA.patch", "lanes[1].role"; "" for the front matter itself) to its 1-based
	// line in the page. Parse fills it; Validate and Resolve use it to place errors and to
	// tell a field written as 0 ("warmup: 0") from one left out. It is nil for an
	// Experiment built in Go, whose zero protocol and drift fields then mean "default".
	Lines map[string]int `yaml:"-"`
}

// Harness says how the lanes are built and run; one harness source serves every arm.
type Harness struct {
	// Kind is one of lanekind.Names(): "exec" (any program speaking the Go benchmark
	// format) or "gotest" (Go benchmarks compiled with go test -c).
	Kind string `yaml:"kind"`
	// Package is the Go package holding the lanes (gotest), or the source directory that
	// is copied over every arm (exec with a build command).
	Package string `yaml:"package,omitempty"`
	// Ref is the git ref the harness source is taken from (git arms only).
	Ref string `yaml:"ref,omitempty"`
	// Paths are extra harness source paths copied over every arm (git arms only).
	Paths []string `yaml:"paths,omitempty"`
	// Command is the exec harness's command template. Placeholders: {bin}, {lane},
	// {samples}, {warmup}, {count} (warmup + samples), {arm}, {pass}, {collection}.
	Command []string `yaml:"command,omitempty"`
	// Build is the exec harness's build command template for git arms, run in the arm's
	// worktree. Placeholders: {out} (the binary to produce), {src}, {tags}, {ldflags}.
	Build []string `yaml:"build,omitempty"`
	// Benchtime is passed to gotest lanes as -test.benchtime (default "1x"). Lanes that
	// count instructions need a count ("100x").
	Benchtime string `yaml:"benchtime,omitempty"`
	// Metric is what every lane measures unless it says otherwise: "wall" (the default:
	// what the lane prints, its wall time as a rule) or "instructions" (instructions per
	// operation, counted under Valgrind; see docs/spec.md).
	Metric string `yaml:"metric,omitempty"`
	// OpStart and OpEnd are the functions (callgrind patterns, e.g. main.opStart) an
	// exec harness's lane program calls right before and right after each operation: an
	// instruction-count lane counts what the process executes from an entry of one to the
	// next entry of the other. Gotest lanes count their benchmark function.
	OpStart string `yaml:"op-start,omitempty"`
	OpEnd   string `yaml:"op-end,omitempty"`
	// Timeout bounds one run (one process); default 10m.
	Timeout Duration `yaml:"timeout,omitempty"`
}

// ForKind returns what the harness's kind reads of it.
func (h Harness) ForKind() lanekind.Harness {
	return lanekind.Harness{Kind: h.Kind, Package: h.Package, Command: h.Command, Build: h.Build, Benchtime: h.Benchtime, OpStart: h.OpStart, OpEnd: h.OpEnd}
}

// LaneKind returns the harness's kind; an unknown kind is an error (Validate reports it
// at harness.kind).
func (h Harness) LaneKind() (lanekind.Kind, error) { return lanekind.Lookup(h.Kind) }

// Arm is one build of the harness: a prebuilt binary, or a git ref with optional patch.
type Arm struct {
	// Name is the arm's key in the arms mapping; BaseArm for the baseline.
	Name string `yaml:"-"`
	// Line is the line of the arm's name in the page, for error messages.
	Line int `yaml:"-"`
	// Bin is a prebuilt binary (exec) or test binary (gotest), relative to the ledger
	// root; set either Bin or Ref.
	Bin string `yaml:"bin,omitempty"`
	// Ref is the git ref the arm is built from.
	Ref string `yaml:"ref,omitempty"`
	// Patch is applied with git apply on top of Ref (git arms only).
	Patch string `yaml:"patch,omitempty"`
	// Tags are build tags (git arms only).
	Tags []string `yaml:"tags,omitempty"`
	// Ldflags are linker flags (git arms only).
	Ldflags string `yaml:"ldflags,omitempty"`
	// Env is added to the environment of every run of the arm.
	Env map[string]string `yaml:"env,omitempty"`
	// Args are appended to the command of every run of the arm.
	Args []string `yaml:"args,omitempty"`
	// Reference marks a candidate measured and shown beside the others but not decided
	// for: its verdict does not count toward the page's status (a baseline policy the
	// question is not about, say).
	Reference bool `yaml:"reference,omitempty"`
}

// BaseArm is the name of the arm every candidate is compared against.
const BaseArm = "base"

// Protocol is how many processes run: collections x passes x lanes x arms, each process
// doing Warmup unrecorded then Samples recorded operations. In the spec and in profiles a
// zero field is unset (it keeps the value of the layer below) unless the page writes it
// (see Experiment.Lines); in a Resolved protocol every field is set.
type Protocol struct {
	// Samples is the number of recorded operations per run (default 21).
	Samples int `yaml:"samples,omitempty"`
	// Warmup is the number of unrecorded operations before them (default 5).
	Warmup int `yaml:"warmup,omitempty"`
	// Passes is the number of passes per collection, even (default 4).
	Passes int `yaml:"passes,omitempty"`
	// Collections is the number of collections (default 2).
	Collections int `yaml:"collections,omitempty"`
	// Seed seeds the per-pass lane shuffle (default 1).
	Seed int64 `yaml:"seed,omitempty"`
	// Timeout bounds one run (default 10m).
	Timeout Duration `yaml:"timeout,omitempty"`
	// Sequential, when set, makes the run sequential: pass pairs run in rounds (one pair in
	// every collection) until every lane the decision rule needs is decided, max-pairs is
	// reached or the budget is spent. Passes is then 2 x max-pairs.
	Sequential *Sequential `yaml:"sequential,omitempty"`
	// CPUs, when set, pins every lane process to these CPUs, a list as taskset -c writes
	// it ("0", "0-1", "0,2"; package cpuset); "all" (a profile or --cpus) undoes a pin.
	// Empty leaves the placement to the operating system.
	CPUs string `yaml:"cpus,omitempty"`
	// SeparateArms runs every lane's first arm of a pass, then every lane's second, and so
	// on, so that other lanes' processes lie between the arms of one lane: for a lane whose
	// run carries over into the next process (a file it leaves, a cache it warms). The
	// default runs a lane's arms back to back, which keeps drift between them smallest.
	SeparateArms bool `yaml:"separate-arms,omitempty"`
	// Layouts is how many builds of each git arm of a gotest harness a run measures, each
	// linked with its own function layout (-ldflags=-randlayout=SEED), rotated over the
	// pass pairs, so that a build's layout is noise the interval carries rather than a
	// bias posing as the code's effect (docs/methodology.md, "Code layout"). 1 measures
	// one build per arm; 0 takes DefaultLayouts for a gotest harness, 1 for another.
	Layouts int `yaml:"layouts,omitempty"`
}

// Sequential is a pre-registered stopping rule (docs/sequential.md).
type Sequential struct {
	// MinPairs is the number of rounds run before the first look (default 2).
	MinPairs int `yaml:"min-pairs,omitempty"`
	// MaxPairs is the most rounds (pass pairs per collection) the run may take (default 20).
	MaxPairs int `yaml:"max-pairs,omitempty"`
	// Budget bounds the measured wall time; no round starts after it is spent (default 15m).
	Budget Duration `yaml:"budget,omitempty"`
}

// Looks returns how many looks the rule may take: one after each round from MinPairs to
// MaxPairs.
func (s Sequential) Looks() int { return s.MaxPairs - s.MinPairs + 1 }

// Lane is one named measurement.
type Lane struct {
	// Name is the lane's name: a benchmark name without "Benchmark" (gotest), or the
	// {lane} of an exec command.
	Name string `yaml:"name"`
	// Line is the lane's line in the page, for error messages.
	Line int `yaml:"-"`
	// Role is primary, secondary, guard or control.
	Role Role `yaml:"role"`
	// Expect is the predicted direction of a primary or secondary lane for every
	// candidate arm: faster, slower or neutral. Resolve fills in faster for a primary
	// lane that gives none. ExpectArms holds a prediction per candidate arm instead,
	// written as a mapping (expect: {candA: neutral, candB: faster}); then Expect is
	// empty. Use ExpectFor to read either.
	Expect     string            `yaml:"expect,omitempty"`
	ExpectArms map[string]string `yaml:"-"`
	// FloorPct, when set, replaces drift.effect-floor-pct for this lane (for example a
	// smaller floor for an instruction-count lane, whose noise is tiny).
	FloorPct float64 `yaml:"floor-pct,omitempty"`
	// Unit selects the metric used as the lane's value (default: the first one printed).
	Unit string `yaml:"unit,omitempty"`
	// Better is "lower" (the default, for times) or "higher" (throughput).
	Better string `yaml:"better,omitempty"`
	// NonZero names metrics of the lane (units as the lane prints them, the lane's own
	// unit included) that must not be exactly zero: a receipt where one is, for some
	// arm, carries a warning (package nonzero).
	NonZero []string `yaml:"nonzero,omitempty"`
	// AtMost bounds metrics of a guard lane in absolute terms, per operation as the lane
	// prints them (at-most: {cold-calls/op: 0.5}): in every candidate arm the mean over
	// processes must be shown at or below the bound (decide's count bounds). It guards a
	// count whose base may be 0, where an effect in percent means nothing.
	AtMost map[string]float64 `yaml:"at-most,omitempty"`
	// Metric overrides harness.metric for this lane: "wall" or "instructions". Resolve
	// sets it to the lane's metric ("" for wall).
	Metric string `yaml:"metric,omitempty"`
	// ThresholdPct, in a gate spec only, replaces the gate's threshold-pct for this lane:
	// a lane counted in instructions can fail the build on a far smaller slowdown than a
	// timed one.
	ThresholdPct float64 `yaml:"threshold-pct,omitempty"`
}

// CountsInstructions reports whether lane l of harness h counts instructions.
func (h Harness) CountsInstructions(l Lane) bool { return h.MetricOf(l) == lanekind.MetricInstructions }

// MetricOf returns the metric lane l of harness h measures: its own, else the harness's,
// else lanekind.MetricWall.
func (h Harness) MetricOf(l Lane) string {
	switch {
	case l.Metric != "":
		return l.Metric
	case h.Metric != "":
		return h.Metric
	}
	return lanekind.MetricWall
}

// ExpectFor returns the lane's expected direction for candidate arm arm: its per-arm
// expectation when it has one, else Expect.
func (l Lane) ExpectFor(arm string) string {
	if l.ExpectArms != nil {
		return l.ExpectArms[arm]
	}
	return l.Expect
}

// Role is what a lane is for in the decision rule: primary, secondary, guard or control.
type Role = receipt.Role

// Lane roles.
const (
	RolePrimary   = receipt.RolePrimary
	RoleSecondary = receipt.RoleSecondary
	RoleGuard     = receipt.RoleGuard
	RoleControl   = receipt.RoleControl
)

// Shape is a predicted shape of the effect over an ordered list of lanes.
type Shape struct {
	// Decay lists lanes whose gain must shrink monotonically, strongest first.
	Decay []string `yaml:"decay,omitempty"`
}

// Incidence says how to measure how often the optimised situation occurs.
type Incidence struct {
	// Suite is the release suite that the counters are read over.
	Suite Harness `yaml:"suite"`
	// Total is the counter of all events.
	Total string `yaml:"total"`
	// Eligible is the counter of the events the change helps.
	Eligible string `yaml:"eligible"`
	// Control is the suite lane that must make the eligible counter fire.
	Control string `yaml:"control,omitempty"`
	// MinShare is the eligible/total share the decision rule requires, in [0, 1]; 0
	// requires nothing.
	MinShare float64 `yaml:"min-share,omitempty"`
	// SavingNs is the estimated saving per eligible hit, for the value estimate.
	SavingNs float64 `yaml:"saving-ns,omitempty"`
	// Arms names the candidate arms whose premise the gate tests; empty means every
	// candidate. An arm whose mechanism does not rest on the eligible population (another
	// candidate of the same experiment) is left out.
	Arms []string `yaml:"arms,omitempty"`
	// Shares are more shares the report shows over the suite and per lane, each one
	// counter's count over another's (the gate's eligible/total is always shown first).
	// They are descriptive: the decision rule reads only the gate's share.
	Shares []Share `yaml:"shares,omitempty"`
}

// Share is one share an incidence report shows: the Part counter's count over the Of
// counter's, over the suite and in each lane.
type Share struct {
	// Part is the counter counted.
	Part string `yaml:"part"`
	// Of is the counter it is a share of.
	Of string `yaml:"of"`
}

// Reanalysis says that a page is judged by another analysis method than the one its
// receipt recorded, and why.
type Reanalysis struct {
	// Method is the method, as driftcheck.Method.String writes it.
	Method string `yaml:"method"`
	// Why is the reason a person gave (finalize --why).
	Why string `yaml:"why"`
}

// ReceiptRef is one receipt backing the page.
type ReceiptRef struct {
	// Path is the receipt's markdown file.
	Path string `yaml:"path"`
	// SHA256 is the receipt's hash, 64 lower-case hex digits.
	SHA256 string `yaml:"sha256"`
}

// Duration is a time.Duration written as "30s" or "10m" in YAML.
type Duration time.Duration

// String formats the duration like time.Duration does ("10m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads a duration written as a string with a unit, like "30s" or "1m30s".
// A bare number is rejected: its unit would be a guess.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, msg := parseDuration(n)
	if msg != "" {
		return fmt.Errorf("line %d: %s", n.Line, msg)
	}
	*d = v
	return nil
}

// MarshalYAML writes the duration as a string like "10m0s".
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// parseDuration decodes a scalar node into a Duration, or returns a message saying why not.
func parseDuration(n *yaml.Node) (Duration, string) {
	if n.Kind != yaml.ScalarNode {
		return 0, "must be a duration like 30s or 10m, got " + describe(n)
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.ShortTag() != "!!str" {
		return 0, fmt.Sprintf("must be a duration like 30s or 10m, got %q", n.Value)
	}
	return Duration(v), ""
}
