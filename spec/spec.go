// Package spec defines an experiment's pre-registered specification: the YAML front matter
// of an experiment page (experiments/NNN-slug.md). It parses the front matter with line
// numbers, rejects unknown fields, validates every field, and resolves the protocol that a
// run uses from the spec, a named profile and command-line overrides.
//
// Errors name the file, the line and the field ("experiments/275-x.md:12: arms.cand.bin:
// must not be empty"), so a typo in a spec never turns into a silently different experiment.
package spec

import "time"

// Experiment is the parsed front matter of one experiment page.
type Experiment struct {
	// Path is the page's file path as given to Parse; it prefixes every error.
	Path string `yaml:"-"`

	ID         int      `yaml:"id"`
	Title      string   `yaml:"title"`
	Date       string   `yaml:"date"` // YYYY-MM-DD
	Status     string   `yaml:"status"`
	StatusBy   string   `yaml:"status-by,omitempty"` // "rule" when finalize set the status; empty when a person did
	Category   string   `yaml:"category"`
	Directions []string `yaml:"directions"`
	Archive    string   `yaml:"archive,omitempty"`

	Harness Harness `yaml:"harness"`
	// Arms lists the arms in the order written in the spec; the one named "base" is the
	// baseline and the others are candidates, compared against it.
	Arms     []Arm               `yaml:"arms"`
	Protocol Protocol            `yaml:"protocol"`
	Profiles map[string]Protocol `yaml:"profiles,omitempty"`
	Drift    Drift               `yaml:"drift"`
	Lanes    []Lane              `yaml:"lanes"`
	// Shape is an optional predicted shape of the effect, checked by the decision rule.
	Shape *Shape `yaml:"shape,omitempty"`
	// Incidence is optional: how to measure how often the optimised situation occurs.
	Incidence *Incidence `yaml:"incidence,omitempty"`
	// Receipts are written by finalize: every receipt that backs the page, with its hash.
	Receipts []ReceiptRef `yaml:"receipts,omitempty"`
}

// Harness says how the lanes are built and run; one harness source serves every arm.
type Harness struct {
	// Kind is "exec" (any program speaking the Go benchmark format) or "gotest"
	// (Go benchmarks compiled with go test -c).
	Kind string `yaml:"kind"`
	// Package is the Go package holding the lanes (gotest), or the source directory that
	// is copied over every arm (exec with a build command).
	Package string `yaml:"package,omitempty"`
	// Ref is the git ref the harness source is taken from (git arms only).
	Ref string `yaml:"ref,omitempty"`
	// Paths are extra harness source paths copied over every arm (git arms only).
	Paths []string `yaml:"paths,omitempty"`
	// Command is the exec harness's command template. Placeholders: {bin}, {lane},
	// {samples}, {warmup}, {arm}, {pass}, {collection}.
	Command []string `yaml:"command,omitempty"`
	// Build is the exec harness's build command template for git arms, run in the arm's
	// worktree. Placeholders: {out} (the binary to produce), {src}, {tags}, {ldflags}.
	Build []string `yaml:"build,omitempty"`
	// Benchtime is passed to gotest lanes as -test.benchtime (default "1x").
	Benchtime string `yaml:"benchtime,omitempty"`
	// Timeout bounds one run (one process); default 10m.
	Timeout Duration `yaml:"timeout,omitempty"`
}

// Arm is one build of the harness: a prebuilt binary, or a git ref with optional patch.
type Arm struct {
	Name    string            `yaml:"-"`
	Line    int               `yaml:"-"` // line of the arm in the page, for error messages
	Bin     string            `yaml:"bin,omitempty"`
	Ref     string            `yaml:"ref,omitempty"`
	Patch   string            `yaml:"patch,omitempty"`
	Tags    []string          `yaml:"tags,omitempty"`
	Ldflags string            `yaml:"ldflags,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
	Args    []string          `yaml:"args,omitempty"`
}

// BaseArm is the name of the arm every candidate is compared against.
const BaseArm = "base"

// Protocol is how many processes run: collections x passes x lanes x arms, each process
// doing Warmup unrecorded then Samples recorded operations. In profiles, zero fields keep
// the spec's value.
type Protocol struct {
	Samples     int      `yaml:"samples,omitempty"`
	Warmup      int      `yaml:"warmup,omitempty"`
	Passes      int      `yaml:"passes,omitempty"`
	Collections int      `yaml:"collections,omitempty"`
	Seed        int64    `yaml:"seed,omitempty"`
	Timeout     Duration `yaml:"timeout,omitempty"`
}

// Drift holds the thresholds of the pass-pair drift check, in percent and as a ratio.
type Drift struct {
	EffectFloorPct float64 `yaml:"effect-floor-pct,omitempty"`
	CleanCVPct     float64 `yaml:"clean-cv-pct,omitempty"`
	CVAsymmetry    float64 `yaml:"cv-asymmetry,omitempty"`
}

// Lane is one named measurement.
type Lane struct {
	Name string `yaml:"name"`
	Line int    `yaml:"-"`
	// Role is primary, secondary, guard or control.
	Role string `yaml:"role"`
	// Expect is the predicted direction for a primary lane: faster, slower or neutral.
	Expect string `yaml:"expect,omitempty"`
	// Unit selects the metric used as the lane's value (default: the first one printed).
	Unit string `yaml:"unit,omitempty"`
	// Better is "lower" (default for times) or "higher" (throughput).
	Better string `yaml:"better,omitempty"`
}

// Lane roles.
const (
	RolePrimary   = "primary"
	RoleSecondary = "secondary"
	RoleGuard     = "guard"
	RoleControl   = "control"
)

// Shape is a predicted shape of the effect over an ordered list of lanes.
type Shape struct {
	// Decay lists lanes whose gain must shrink monotonically, strongest first.
	Decay []string `yaml:"decay,omitempty"`
}

// Incidence says how to measure how often the optimised situation occurs.
type Incidence struct {
	Suite    Harness `yaml:"suite"`
	Total    string  `yaml:"total"`
	Eligible string  `yaml:"eligible"`
	// Control is the suite lane that must make the eligible counter fire.
	Control  string  `yaml:"control,omitempty"`
	MinShare float64 `yaml:"min-share,omitempty"`
	// SavingNs is the estimated saving per eligible hit, for the value estimate.
	SavingNs float64 `yaml:"saving-ns,omitempty"`
}

// ReceiptRef is one receipt backing the page.
type ReceiptRef struct {
	Path   string `yaml:"path"`
	SHA256 string `yaml:"sha256"`
}

// Duration is a time.Duration written as "30s" or "10m" in YAML.
type Duration time.Duration
