package spec

import (
	"os"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
)

// Gate is a CI regression gate's spec (experiments/gate.yaml): which lanes guard the build
// and how hard to look. It is a plain YAML file, not a page, with the experiment's
// harness, protocol, drift and lanes fields and one of its own, threshold-pct. The gate
// makes the two arms itself (the merge base and the candidate, both from git), so a gate
// spec has no arms, and every lane is a guard.
//
// ParseGate checks it with the same decoder and the same rules as an experiment page, so
// its errors are "file:line: field: message" too.
type Gate struct {
	// Path is the file's path as given to ParseGate; it prefixes every error.
	Path string `yaml:"-"`

	// Harness says how the lanes are built and run. An exec harness needs a build
	// command: the gate builds both arms from git.
	Harness Harness `yaml:"harness"`
	// Protocol is the gate's protocol; fields left out take DefaultGateProtocol's values.
	Protocol Protocol `yaml:"protocol"`
	// Drift holds the drift check thresholds; zero fields take their defaults.
	Drift driftcheck.Config `yaml:"drift"`
	// Lanes are the guard lanes. Role may be left out (it is guard) or written as guard.
	Lanes []Lane `yaml:"lanes"`
	// ThresholdPct is the smallest reproduced slowdown, in percent, that fails the build;
	// zero when not written (Threshold gives DefaultGateThresholdPct then).
	ThresholdPct float64 `yaml:"threshold-pct,omitempty"`

	// Lines maps the path of every field written in the file to its 1-based line, as
	// Experiment.Lines does.
	Lines map[string]int `yaml:"-"`
}

// LaneThresholds returns the lanes that set their own threshold-pct, with it.
func (g *Gate) LaneThresholds() map[string]float64 {
	m := map[string]float64{}
	for _, l := range g.Lanes {
		if l.ThresholdPct > 0 {
			m[l.Name] = l.ThresholdPct
		}
	}
	return m
}

// DefaultGateThresholdPct is the gate's regression threshold when the spec sets none.
const DefaultGateThresholdPct = 5

// DefaultGateProtocol returns the gate's protocol, used for every protocol field the gate
// spec leaves out: 10 samples after 2 warmup operations per run, 2 collections, seed 1, and
// the sequential stopping rule DefaultGateSequential (the run timeout keeps its usual
// default). More samples than flipbench compare's 6 after 1: a gate's lanes are often
// one execution per sample (benchtime 1x), whose noise is within the process: an A/A
// gate of this repository's stickiness guards ended at MDEs of 14-28% after 20 rounds at
// 6 after 1, and 13-18% at 10 after 2 (docs/gate.md). A gate spec that writes passes (and
// no sequential rule) runs a fixed protocol.
func DefaultGateProtocol() Protocol {
	s := DefaultGateSequential()
	return Protocol{Samples: 10, Warmup: 2, Collections: 2, Seed: 1, Sequential: &s}
}

// DefaultGateSequential is the gate's stopping rule: rounds of pass pairs until every lane
// passes or fails, from 2 to 20 rounds, within a 10 minute budget.
func DefaultGateSequential() Sequential {
	return Sequential{MinPairs: 2, MaxPairs: 20, Budget: Duration(10 * time.Minute)}
}

// ParseGateFile reads and parses the gate spec at path; see ParseGate.
func ParseGateFile(path string) (*Gate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseGate(path, data)
}

// ParseGate parses and validates a gate spec, read from path (which prefixes every
// error). It reports problems exactly as Parse does for a page: YAML syntax, unknown
// fields with the nearest known one, wrong types, then the rules of Validate. When err is
// not nil the returned *Gate is nil. It applies no defaults.
func ParseGate(path string, data []byte) (*Gate, error) {
	g := &Gate{Path: path}
	lines, err := decodeDocument(path, data, 1, "gate spec", g)
	if err != nil {
		return nil, err
	}
	g.Lines = lines
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// Validate checks the gate spec with the rules of an experiment's harness, protocol,
// drift and lanes, plus the gate's own: an exec harness needs a build command, every lane
// is a guard (role left out or guard), and threshold-pct is positive. Problems are *Error
// values joined with errors.Join, ordered by line.
func (g *Gate) Validate() error {
	v := &validator{e: g.view(), gate: true, problems: problems{file: g.Path}}
	v.harness("harness", g.Harness)
	v.protocols()
	v.drift()
	v.lanes()
	switch {
	case g.ThresholdPct < 0 || g.ThresholdPct == 0 && v.e.set("threshold-pct"):
		v.bad("threshold-pct", "must be positive")
	case g.ThresholdPct > MaxDriftThreshold:
		v.bad("threshold-pct", "must be at most %d", MaxDriftThreshold)
	}
	return v.err()
}

// view is the gate spec as an experiment without arms, for the validator and Resolve.
func (g *Gate) view() *Experiment {
	return &Experiment{
		Path:     g.Path,
		Harness:  g.Harness,
		Protocol: g.Protocol,
		Drift:    g.Drift,
		Lanes:    g.Lanes,
		Lines:    g.Lines,
	}
}

// Threshold returns the regression threshold in percent: threshold-pct, or
// DefaultGateThresholdPct when the spec leaves it out.
func (g *Gate) Threshold() float64 {
	if g.ThresholdPct > 0 {
		return g.ThresholdPct
	}
	return DefaultGateThresholdPct
}

// Experiment returns the experiment a gate runs: base and cand arms built from the git
// refs base and candidate, the gate's harness, drift thresholds and lanes (role guard),
// and its protocol over DefaultGateProtocol. A field written as zero (warmup: 0) stays
// zero. Resolve it as any experiment; its errors still name the gate spec's lines.
func (g *Gate) Experiment(base, candidate string) *Experiment {
	e := g.view()
	p := DefaultGateProtocol()
	e.mergeProtocol(&p, g.Protocol, "protocol.", map[string]string{})
	switch {
	case g.Protocol.Sequential != nil:
		// The spec's rule over the gate's: it sets only the fields it writes.
		s := *p.Sequential
		if g.Protocol.Sequential.MinPairs != 0 {
			s.MinPairs = g.Protocol.Sequential.MinPairs
		}
		if g.Protocol.Sequential.MaxPairs != 0 {
			s.MaxPairs = g.Protocol.Sequential.MaxPairs
		}
		if g.Protocol.Sequential.Budget != 0 {
			s.Budget = g.Protocol.Sequential.Budget
		}
		p.Sequential = &s
	case g.Protocol.Passes != 0 || e.set("protocol.passes"):
		p.Sequential = nil // a fixed protocol
	}
	e.Protocol = p
	if e.Harness.Metric == "" {
		// Each lane by its on-CPU time where its processes never wait: CI runners are
		// busy hosts (docs/busy-host.md).
		e.Harness.Metric = lanekind.MetricAuto
	}
	e.Title = "regression gate"
	e.Arms = []Arm{{Name: BaseArm, Ref: base}, {Name: "cand", Ref: candidate}}
	e.Lanes = make([]Lane, len(g.Lanes))
	for i, l := range g.Lanes {
		if l.Role == "" {
			l.Role = RoleGuard
		}
		e.Lanes[i] = l
	}
	return e
}

// GateFromPage makes a gate spec from an experiment page: its harness, drift thresholds,
// run timeout and guard lanes, with the gate's default protocol and threshold. A page
// without guard lanes is an error at its lanes field.
func GateFromPage(e *Experiment) (*Gate, error) {
	g := &Gate{Path: e.Path, Harness: e.Harness, Drift: e.Drift, Lines: map[string]int{}}
	for k, l := range e.Lines {
		if k == "" || k == "harness" || k == "drift" || k == "protocol.timeout" ||
			strings.HasPrefix(k, "harness.") || strings.HasPrefix(k, "drift.") {
			g.Lines[k] = l
		}
	}
	g.Protocol.Timeout = e.Protocol.Timeout
	for _, l := range e.Lanes {
		if l.Role == RoleGuard {
			g.Lanes = append(g.Lanes, l)
		}
	}
	if len(g.Lanes) == 0 {
		return nil, &Error{File: e.Path, Line: e.lineOf("lanes"), Field: "lanes", Msg: "no guard lanes to gate on (give a lane role: guard, or write a gate spec)"}
	}
	return g, nil
}
