// Package gate decides a CI regression gate from a drift check: fail the build only when a
// regression reproduces across order-flipped pass pairs in every collection, and advise a
// rerun, not a failure, when what it sees is drift or too little data.
//
// Continuous-benchmarking gates on shared CI runners are known for false alarms, and a gate
// that cries wolf gets switched off. This gate's evidence rule is the experiment's: a pass
// delta counts only when it survives the order flip.
package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/spec"
)

// Outcome is the gate's decision.
type Outcome string

// Outcomes, from best to worst.
const (
	Pass       Outcome = "pass"       // no reproduced regression
	Rerun      Outcome = "rerun"      // drift, too little data, or a regression seen in only some collections
	Regression Outcome = "regression" // a regression beyond the threshold reproduced in every collection
)

// Finding is one lane's contribution to the decision.
type Finding struct {
	Lane    string  `json:"lane"`
	Arm     string  `json:"arm"`
	Outcome Outcome `json:"outcome"`
	// DeltaPct is the lane's median pass delta, per collection (positive is slower).
	DeltaPct []float64 `json:"delta_pct"`
	// Verdicts are the lane verdicts, per collection.
	Verdicts []driftcheck.LaneVerdict `json:"verdicts"`
	Reason   string                   `json:"reason"`
}

// Result is the gate's decision with the findings behind it.
type Result struct {
	Outcome      Outcome   `json:"outcome"`
	ThresholdPct float64   `json:"threshold_pct"`
	Findings     []Finding `json:"findings"`
}

// Evaluate applies the gate rule to a drift check. Per lane and candidate:
//
//   - regression: the lane verdict is reproduced-slower in every collection and the median
//     pass delta is at least thresholdPct in every collection;
//   - rerun: a possible regression the data cannot settle: a drift or insufficient verdict
//     in any collection, a mixed verdict leaning slower, or a reproduced slowdown beyond
//     the threshold in only some collections;
//   - pass: anything else (neutral, faster, or a reproduced slowdown below the threshold,
//     which is reported but does not fail the build).
//
// The overall outcome is the worst lane's.
func Evaluate(rep driftcheck.Report, thresholdPct float64) Result {
	res := Result{Outcome: Pass, ThresholdPct: thresholdPct}
	type key struct{ lane, arm string }
	var order []key
	by := map[key][]driftcheck.LaneSummary{}
	for _, l := range rep.Lanes {
		k := key{l.Lane, l.Arm}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], l)
	}
	for _, k := range order {
		f := judge(k.lane, k.arm, by[k], thresholdPct)
		res.Findings = append(res.Findings, f)
		if rank(f.Outcome) > rank(res.Outcome) {
			res.Outcome = f.Outcome
		}
	}
	return res
}

func judge(lane, arm string, colls []driftcheck.LaneSummary, threshold float64) Finding {
	f := Finding{Lane: lane, Arm: arm, Outcome: Pass}
	slowAll, slowAny, unsettled := true, false, ""
	for _, c := range colls {
		f.DeltaPct = append(f.DeltaPct, c.MedianDeltaPct)
		f.Verdicts = append(f.Verdicts, c.Verdict)
		slow := c.Verdict == driftcheck.LaneReproducedSlower && c.MedianDeltaPct >= threshold
		slowAll = slowAll && slow
		slowAny = slowAny || slow
		switch {
		case c.Verdict == driftcheck.LaneDrift, c.Verdict == driftcheck.LaneInsufficient:
			unsettled = fmt.Sprintf("collection %d: %s (%s)", c.Collection, c.Verdict, c.Reason)
		case c.Verdict == driftcheck.LaneMixed && c.MedianDeltaPct > 0:
			unsettled = fmt.Sprintf("collection %d: mixed, leaning slower at %+.1f%%", c.Collection, c.MedianDeltaPct)
		}
	}
	deltas := formatDeltas(f.DeltaPct)
	switch {
	case len(colls) > 0 && slowAll:
		f.Outcome = Regression
		f.Reason = fmt.Sprintf("slower in every collection (%s), reproduced across order-flipped pairs, beyond the %g%% threshold", deltas, threshold)
	case slowAny:
		f.Outcome = Rerun
		f.Reason = fmt.Sprintf("slower beyond the %g%% threshold in some collections but not all (%s); rerun to settle it", threshold, deltas)
	case unsettled != "":
		f.Outcome = Rerun
		f.Reason = unsettled + "; rerun on a quieter runner"
	default:
		f.Reason = fmt.Sprintf("no reproduced regression beyond %g%% (%s)", threshold, deltas)
	}
	return f
}

func formatDeltas(ds []float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%+.1f%%", d)
	}
	return strings.Join(parts, ", ")
}

func rank(o Outcome) int {
	switch o {
	case Regression:
		return 2
	case Rerun:
		return 1
	}
	return 0
}

// Spec is a gate specification: which lanes guard the build and how hard to look.
type Spec struct {
	Path    string        `yaml:"-"`
	Harness spec.Harness  `yaml:"harness"`
	Lanes   []spec.Lane   `yaml:"lanes"`
	Proto   spec.Protocol `yaml:"protocol"`
	Drift   spec.Drift    `yaml:"drift"`
	// ThresholdPct is the smallest slowdown that fails the build (default 5).
	ThresholdPct float64 `yaml:"threshold-pct"`
}

// DefaultProtocol is the gate's short protocol: 10 samples after 2 warmup, 4 passes, 2
// collections.
func DefaultProtocol() spec.Protocol {
	return spec.Protocol{Samples: 10, Warmup: 2, Passes: 4, Collections: 2, Seed: 1}
}

// DefaultThresholdPct is the default regression threshold.
const DefaultThresholdPct = 5

var yamlLine = regexp.MustCompile(`^yaml: (?:unmarshal errors:\n\s*)?line (\d+): (.*)$`)

// ParseSpec parses a gate spec (experiments/gate.yaml). Unknown fields are errors, and
// every error names the file and line.
func ParseSpec(path string, data []byte) (*Spec, error) {
	s := &Spec{Path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("%s:%s: %s", path, m[1], m[2])
		}
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(msg, "yaml: "))
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", path, field, fmt.Sprintf(format, args...)))
	}
	switch s.Harness.Kind {
	case "exec":
		if len(s.Harness.Command) == 0 {
			bad("harness.command", "an exec harness needs a command")
		}
		if len(s.Harness.Build) == 0 {
			bad("harness.build", "the gate builds both arms from git, so an exec harness needs a build command")
		}
	case "gotest":
		if s.Harness.Package == "" {
			bad("harness.package", "a gotest harness needs a package")
		}
	default:
		bad("harness.kind", "%q: want exec or gotest", s.Harness.Kind)
	}
	if len(s.Lanes) == 0 {
		bad("lanes", "list at least one lane")
	}
	for i := range s.Lanes {
		if s.Lanes[i].Name == "" {
			bad("lanes["+strconv.Itoa(i)+"].name", "must not be empty")
		}
		if s.Lanes[i].Role == "" {
			s.Lanes[i].Role = spec.RoleGuard
		}
	}
	if s.ThresholdPct < 0 {
		bad("threshold-pct", "%g: must not be negative", s.ThresholdPct)
	}
	if s.ThresholdPct == 0 {
		s.ThresholdPct = DefaultThresholdPct
	}
	if s.Proto.Passes%2 != 0 {
		bad("protocol.passes", "%d: must be even", s.Proto.Passes)
	}
	return s, errors.Join(errs...)
}

// ParseSpecFile reads and parses a gate spec.
func ParseSpecFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSpec(path, data)
}

// FromPage makes a gate spec from an experiment page's harness and guard lanes.
func FromPage(e *spec.Experiment) (*Spec, error) {
	s := &Spec{Path: e.Path, Harness: e.Harness, Drift: e.Drift, ThresholdPct: DefaultThresholdPct}
	for _, l := range e.Lanes {
		if l.Role == spec.RoleGuard {
			s.Lanes = append(s.Lanes, l)
		}
	}
	if len(s.Lanes) == 0 {
		return nil, fmt.Errorf("%s: lanes: no guard lanes to gate on", e.Path)
	}
	return s, nil
}

// MergeBase returns the commit where ref and candidate diverge, resolved in the git
// repository at dir: the gate compares a change with what it was built on, not with
// whatever ref has moved on to since.
func MergeBase(ctx context.Context, dir, ref, candidate string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "merge-base", ref, candidate)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git merge-base %s %s: %v: %s", ref, candidate, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Markdown writes the gate's summary: the outcome, one row per lane, and the receipt.
func Markdown(w io.Writer, res Result, base, candidate, receiptPath string) error {
	title := map[Outcome]string{
		Pass:       "pass: no reproduced regression",
		Rerun:      "rerun advised: the data cannot settle it",
		Regression: "FAIL: a reproduced regression",
	}[res.Outcome]
	fmt.Fprintf(w, "## flipbench gate: %s\n\n", title)
	fmt.Fprintf(w, "Base `%s`, candidate `%s`; threshold %g%%. Positive deltas are slower.\n\n", base, candidate, res.ThresholdPct)
	fmt.Fprintf(w, "| lane | arm | median delta per collection | lane verdicts | outcome | reason |\n|:--|:--|:--|:--|:--|:--|\n")
	for _, f := range res.Findings {
		vs := make([]string, len(f.Verdicts))
		for i, v := range f.Verdicts {
			vs[i] = string(v)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", f.Lane, f.Arm, formatDeltas(f.DeltaPct), strings.Join(vs, ", "), f.Outcome, f.Reason)
	}
	_, err := fmt.Fprintf(w, "\nReceipt: `%s`\n", receiptPath)
	return err
}
