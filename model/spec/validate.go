package spec

import (
	"fmt"
	"maps"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flipbench/flipbench/driftcheck"

	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/lanekind"
)

// Validate checks every rule of the spec (see docs/spec.md) and returns nil, or one
// *Error per problem joined with errors.Join, ordered by line. Parse calls it. Validate
// applies no defaults and changes nothing.
func (e *Experiment) Validate() error {
	v := &validator{e: e, problems: problems{file: e.Path}}
	v.top()
	v.harness("harness", e.Harness)
	v.arms()
	v.protocols()
	v.drift()
	v.lanes()
	v.shape()
	v.incidence()
	v.receipts()
	return v.err()
}

// validator collects the problems of one experiment, or of a gate spec (see Gate).
type validator struct {
	problems
	e *Experiment
	// gate is set when e is a gate spec's view: its arms are made by the gate from git,
	// and its lanes are all guards.
	gate bool
}

// bad records a problem with field, placed at the field's line.
func (v *validator) bad(field, format string, args ...any) {
	v.add(v.e.lineOf(field), field, format, args...)
}

// set reports whether the page wrote field, even as zero.
func (e *Experiment) set(field string) bool { return e.Lines[field] > 0 }

// setUnder reports whether the page wrote any field inside field.
func (e *Experiment) setUnder(field string) bool {
	for k := range e.Lines {
		if strings.HasPrefix(k, field+".") {
			return true
		}
	}
	return false
}

// lineOf returns the page line of field, or of its nearest ancestor that has one (a field
// left out is reported where its parent is), or 0.
func (e *Experiment) lineOf(field string) int {
	for f := field; ; f = parent(f) {
		if l, ok := e.Lines[f]; ok {
			return l
		}
		if name, ok := strings.CutPrefix(f, "arms."); ok {
			for _, a := range e.Arms {
				if a.Name == name && a.Line > 0 {
					return a.Line
				}
			}
		}
		if rest, ok := strings.CutPrefix(f, "lanes["); ok && strings.HasSuffix(rest, "]") {
			if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && i < len(e.Lanes) && e.Lanes[i].Line > 0 {
				return e.Lanes[i].Line
			}
		}
		if f == "" {
			return 0
		}
	}
}

// parent strips the last component (".name" or "[i]") from a field path.
func parent(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}

func (v *validator) top() {
	e := v.e
	switch {
	case e.ID == 0 && !e.set("id"):
		v.bad("id", "is required")
	case e.ID <= 0:
		v.bad("id", "must be a positive integer")
	}
	if e.Title == "" {
		v.bad("title", "is required")
	}
	if e.Date == "" {
		v.bad("date", "is required")
	} else if _, err := time.Parse(time.DateOnly, e.Date); err != nil {
		v.bad("date", "must be a date YYYY-MM-DD; got %q", e.Date)
	}
	if !slices.Contains(Statuses(), e.Status) {
		v.bad("status", "%s", oneOf(e.Status, Statuses()))
	}
	if e.StatusBy != "" && e.StatusBy != StatusByRule {
		v.bad("status-by", "must be empty (set by a person) or rule (set by finalize); got %q", e.StatusBy)
	}
	if r := e.Reanalysed; r != nil {
		if _, err := driftcheck.ParseMethod(r.Method); err != nil {
			v.bad("reanalysed.method", "%v", err)
		}
		if strings.TrimSpace(r.Why) == "" {
			v.bad("reanalysed.why", "is required: the reason the page was judged by another method than its receipt's")
		}
	}
	if !slices.Contains(Categories(), e.Category) {
		v.bad("category", "%s", oneOf(e.Category, Categories()))
	}
	for i, d := range e.Directions {
		if d == "" {
			v.bad(fmt.Sprintf("directions[%d]", i), "must not be empty")
		}
	}
	if a := e.Archive; a != "" {
		if c := path.Clean(filepath.ToSlash(a)); path.IsAbs(c) || filepath.IsAbs(a) || c == ".." || strings.HasPrefix(c, "../") {
			v.bad("archive", "must be a folder inside the ledger, relative to its root (like archive/exp-%03d); got %q", e.ID, a)
		}
	}
}

// harness checks a harness: the experiment's, or the incidence suite's. Its kind checks
// the fields that depend on the kind (package lanekind).
func (v *validator) harness(field string, h Harness) {
	f := func(name string) string { return field + "." + name }
	if k, err := lanekind.Lookup(h.Kind); err != nil {
		v.bad(f("kind"), "%s", oneOf(h.Kind, lanekind.Names()))
	} else {
		for _, p := range k.Check(h.ForKind(), v.gate && field == "harness") {
			v.bad(f(p.Field), "%s", p.Msg)
		}
	}
	for i, p := range h.Paths {
		if p == "" {
			v.bad(fmt.Sprintf("%s[%d]", f("paths"), i), "must not be empty")
		}
	}
	if h.Metric != "" && !slices.Contains(lanekind.Metrics(), h.Metric) {
		v.bad(f("metric"), "%s", oneOf(h.Metric, lanekind.Metrics()))
	}
	for _, o := range []struct{ name, v string }{{"op-start", h.OpStart}, {"op-end", h.OpEnd}} {
		if strings.ContainsFunc(o.v, unicode.IsSpace) {
			v.bad(f(o.name), "must be a function name without spaces (a callgrind pattern like main.opStart), got %q", o.v)
		}
	}
	switch {
	case h.Timeout < 0 || h.Timeout == 0 && v.e.set(f("timeout")):
		v.bad(f("timeout"), "must be positive")
	case time.Duration(h.Timeout) > MaxTimeout:
		v.bad(f("timeout"), "must be at most %s", MaxTimeout)
	}
	if field == "harness" && v.e.set(f("timeout")) && v.e.set("protocol.timeout") {
		v.bad(f("timeout"), "conflicts with protocol.timeout (line %d); set the run timeout in one place",
			v.e.lineOf("protocol.timeout"))
	}
}

func (v *validator) arms() {
	e := v.e
	if len(e.Arms) == 0 {
		v.bad("arms", "is required (an arm named base and at least one candidate)")
		return
	}
	name := regexp.MustCompile(NamePattern)
	env := regexp.MustCompile(EnvPattern)
	tag := regexp.MustCompile(TagPattern)
	seen := map[string]int{}
	base := 0
	for _, a := range e.Arms {
		f := "arms." + a.Name
		if first, dup := seen[a.Name]; dup {
			v.bad(f, "given twice (first at line %d)", first)
			continue
		}
		seen[a.Name] = v.e.lineOf(f)
		if a.Name == BaseArm {
			base++
		}
		if !name.MatchString(a.Name) {
			v.bad(f, "invalid arm name (must match %s)", NamePattern)
		}
		switch {
		case a.Bin != "" && a.Ref != "":
			v.bad(f, "set bin (a prebuilt binary) or ref (a git ref), not both")
		case a.Bin == "" && a.Ref == "":
			v.bad(f, "needs bin (a prebuilt binary) or ref (a git ref)")
		case a.Bin != "":
			if a.Patch != "" {
				v.bad(f+".patch", "only for git arms (with ref)")
			}
			if len(a.Tags) > 0 {
				v.bad(f+".tags", "only for git arms (with ref)")
			}
			if a.Ldflags != "" {
				v.bad(f+".ldflags", "only for git arms (with ref)")
			}
		}
		for i, t := range a.Tags {
			if !tag.MatchString(t) {
				v.bad(fmt.Sprintf("%s.tags[%d]", f, i), "invalid build tag %q (must match %s)", t, TagPattern)
			}
		}
		if a.Ref != "" {
			v.buildUses(f+".tags", len(a.Tags) > 0, "{tags}")
			v.buildUses(f+".ldflags", a.Ldflags != "", "{ldflags}")
		}
		for _, k := range slices.Sorted(maps.Keys(a.Env)) {
			if !env.MatchString(k) {
				v.bad(f+".env."+k, "invalid environment variable name (must match %s)", EnvPattern)
			}
		}
	}
	if base == 0 {
		v.bad("arms", "needs an arm named base")
	}
	if len(e.Arms)-base < 1 {
		v.bad("arms", "needs at least one candidate besides base")
	}
	decided := 0
	for _, a := range e.Arms {
		switch {
		case a.Reference && a.Name == BaseArm:
			v.bad("arms.base.reference", "the base arm is what every candidate is compared against; only a candidate can be a reference arm")
		case !a.Reference && a.Name != BaseArm:
			decided++
		}
	}
	if len(e.Arms)-base >= 1 && decided == 0 {
		v.bad("arms", "needs at least one candidate that is not a reference arm: the rule would decide nothing")
	}
}

// buildUses reports an arm field (tags, ldflags) that is written but cannot reach the
// build, because the harness's build template (an exec harness's harness.build) has no
// placeholder for it: the receipt would claim a build option that was never used.
func (v *validator) buildUses(field string, written bool, placeholder string) {
	k, err := lanekind.Lookup(v.e.Harness.Kind)
	if !written || err != nil {
		return
	}
	b, problem := k.Build(v.e.Harness.ForKind())
	if problem != nil {
		return // no build template: armbuild reports it for git arms
	}
	if slices.ContainsFunc(b.Template, func(s string) bool { return strings.Contains(s, placeholder) }) {
		return
	}
	v.bad(field, "harness.build (line %d) has no %s placeholder, so this would never reach the build; add it to harness.build or remove %s",
		v.e.lineOf("harness.build"), placeholder, field)
}

// checkProtocol calls bad(name, msg) for every invalid field of p, by its YAML name. A
// zero field means "not set" and is checked only when set(name) says it was written.
func checkProtocol(p Protocol, set func(name string) bool, bad func(name, msg string)) {
	atMost := func(n int) string { return fmt.Sprintf("must be at most %d", n) }
	if p.CPUs != "" && p.CPUs != AllCPUs {
		if _, err := cpuset.Parse(p.CPUs); err != nil {
			bad("cpus", err.Error()+`, or "all"`)
		}
	}
	switch {
	case p.Layouts < 0 || p.Layouts == 0 && set("layouts"):
		bad("layouts", "must be at least 1 (1 measures one build per arm)")
	case p.Layouts > MaxLayouts:
		bad("layouts", atMost(MaxLayouts))
	}
	switch {
	case p.Samples < 0 || p.Samples == 0 && set("samples"):
		bad("samples", "must be at least 1")
	case p.Samples > MaxSamples:
		bad("samples", atMost(MaxSamples))
	}
	switch {
	case p.Warmup < 0:
		bad("warmup", "must not be negative")
	case p.Warmup > MaxWarmup:
		bad("warmup", atMost(MaxWarmup))
	}
	switch {
	case p.Passes < 0 || p.Passes == 1 || p.Passes == 0 && set("passes"):
		bad("passes", "must be at least 2")
	case p.Passes > MaxPasses:
		bad("passes", atMost(MaxPasses))
	case p.Passes%2 != 0:
		bad("passes", "must be even")
	}
	switch {
	case p.Collections < 0 || p.Collections == 0 && set("collections"):
		bad("collections", "must be at least 1")
	case p.Collections > MaxCollections:
		bad("collections", atMost(MaxCollections))
	}
	switch {
	case p.Timeout < 0 || p.Timeout == 0 && set("timeout"):
		bad("timeout", "must be positive")
	case time.Duration(p.Timeout) > MaxTimeout:
		bad("timeout", "must be at most "+MaxTimeout.String())
	}
	if s := p.Sequential; s != nil {
		switch {
		case s.MinPairs < 0 || s.MinPairs == 0 && set("sequential.min-pairs"):
			bad("sequential.min-pairs", "must be at least 1")
		case s.MinPairs > MaxPasses/2:
			bad("sequential.min-pairs", atMost(MaxPasses/2))
		}
		switch {
		case s.MaxPairs < 0 || s.MaxPairs == 0 && set("sequential.max-pairs"):
			bad("sequential.max-pairs", "must be at least 1")
		case s.MaxPairs > MaxPasses/2:
			bad("sequential.max-pairs", atMost(MaxPasses/2))
		case s.MaxPairs != 0 && s.MinPairs > s.MaxPairs:
			bad("sequential.min-pairs", fmt.Sprintf("%d is above max-pairs %d", s.MinPairs, s.MaxPairs))
		}
		switch {
		case s.Budget < 0 || s.Budget == 0 && set("sequential.budget"):
			bad("sequential.budget", "must be positive")
		case time.Duration(s.Budget) > MaxTimeout:
			bad("sequential.budget", "must be at most "+MaxTimeout.String())
		}
	}
}

func (v *validator) protocols() {
	e := v.e
	check := func(prefix string, p Protocol) {
		checkProtocol(p,
			func(name string) bool { return e.set(prefix + name) },
			func(name, msg string) { v.bad(prefix+name, "%s", msg) })
		if p.Sequential != nil && p.Passes != 0 {
			v.bad(prefix+"passes", "a sequential protocol sets its passes from max-pairs (2 x max-pairs); remove passes")
		}
	}
	check("protocol.", e.Protocol)
	name := regexp.MustCompile(NamePattern)
	for _, n := range slices.Sorted(maps.Keys(e.Profiles)) {
		f := "profiles." + n
		if !name.MatchString(n) {
			v.bad(f, "invalid profile name (must match %s)", NamePattern)
		}
		if e.Profiles[n] == (Protocol{}) && !e.setUnder(f) {
			v.bad(f, "sets nothing (give samples, warmup, passes, collections, seed, timeout or sequential)")
		}
		check(f+".", e.Profiles[n])
	}
}

func (v *validator) drift() {
	d, e := v.e.Drift, v.e
	for _, c := range []struct {
		name  string
		value float64
	}{
		{"effect-floor-pct", d.EffectFloorPct},
		{"clean-cv-pct", d.CleanCVPct},
		{"cv-asymmetry", d.CVAsymmetry},
	} {
		switch {
		case c.value < 0 || c.value == 0 && e.set("drift."+c.name):
			v.bad("drift."+c.name, "must be positive")
		case c.value > MaxDriftThreshold:
			v.bad("drift."+c.name, "must be at most %d", MaxDriftThreshold)
		}
	}
	if d.CVAsymmetry > 0 && d.CVAsymmetry < 1 {
		v.bad("drift.cv-asymmetry", "must be a ratio >= 1, got %g", d.CVAsymmetry)
	}
	for _, c := range []struct {
		name  string
		value float64
	}{{"alpha", d.Alpha}, {"power", d.Power}} {
		if c.value < 0 || c.value >= 1 || c.value == 0 && e.set("drift."+c.name) {
			v.bad("drift."+c.name, "must be a probability between 0 and 1, got %g", c.value)
		}
	}
	if df := d.MaxCalibrationDF; df < 0 || df > MaxCalibrationDF {
		v.bad("drift.calibration-df", "must be between 0 and %d degrees of freedom, got %g", MaxCalibrationDF, df)
	}
	if sp := d.Spending; sp != "" && !slices.Contains(driftcheck.Spendings(), sp) {
		v.bad("drift.spending", "unknown spending function %q (want one of %v)", sp, driftcheck.Spendings())
	}
}

func (v *validator) lanes() {
	e := v.e
	if len(e.Lanes) == 0 {
		if kind, err := e.Harness.LaneKind(); v.gate && err == nil && kind.ListArgs("bin") != nil {
			return // the gate lists the harness's benchmarks (flipbench gate --bench)
		}
		v.bad("lanes", "needs at least one lane")
		return
	}
	name := regexp.MustCompile(LanePattern)
	seen := map[string]int{}
	primary := false
	if v.gate {
		primary = true // a gate has guard lanes only
	}
	for i, l := range e.Lanes {
		f := func(field string) string { return fmt.Sprintf("lanes[%d].%s", i, field) }
		switch first, dup := seen[l.Name]; {
		case l.Name == "":
			v.bad(f("name"), "is required")
		case !name.MatchString(l.Name):
			v.bad(f("name"), "invalid lane name %q (must match %s)", l.Name, LanePattern)
		case dup:
			v.bad(f("name"), "duplicate lane %s (first at line %d)", l.Name, first)
		default:
			seen[l.Name] = e.lineOf(f("name"))
		}
		switch {
		case v.gate:
			if l.Role != "" && l.Role != RoleGuard {
				v.bad(f("role"), "the gate treats every lane as a guard; leave role out or write guard, got %q", l.Role)
			}
		case !slices.Contains(roles(), l.Role):
			v.bad(f("role"), "%s", oneOf(l.Role, roles()))
		}
		primary = primary || l.Role == RolePrimary
		if l.Expect != "" || l.ExpectArms != nil {
			if l.Role != RolePrimary && l.Role != RoleSecondary {
				v.bad(f("expect"), "only for primary and secondary lanes")
			} else {
				v.expectations(f("expect"), l)
			}
		}
		if l.FloorPct < 0 || l.FloorPct > MaxDriftThreshold || l.FloorPct == 0 && e.set(f("floor-pct")) {
			v.bad(f("floor-pct"), "must be a positive percentage up to %d, got %g", MaxDriftThreshold, l.FloorPct)
		}
		if l.Better != "" && !slices.Contains(betters(), l.Better) {
			v.bad(f("better"), "%s", oneOf(l.Better, betters()))
		}
		v.nonzero(f("nonzero"), l.NonZero)
		v.atMost(f("at-most"), l)
		if l.Metric != "" && !slices.Contains(lanekind.Metrics(), l.Metric) {
			v.bad(f("metric"), "%s", oneOf(l.Metric, lanekind.Metrics()))
		}
		switch {
		case l.ThresholdPct == 0 && !e.set(f("threshold-pct")):
		case !v.gate:
			v.bad(f("threshold-pct"), "only in the gate spec (experiments/gate.yaml)")
		case l.ThresholdPct <= 0 || l.ThresholdPct > MaxDriftThreshold:
			v.bad(f("threshold-pct"), "must be a positive percentage up to %d, got %g", MaxDriftThreshold, l.ThresholdPct)
		}
	}
	if !primary {
		v.bad("lanes", "needs at least one primary lane")
	}
	v.counted()
}

// counted checks the lanes that count instructions: their kind must be able to count
// them (a gotest benchtime that fixes b.N, an exec op-start and op-end), and their unit and
// better-direction are the count's.
func (v *validator) counted() {
	e := v.e
	kind, err := e.Harness.LaneKind()
	if err != nil {
		return // reported at harness.kind
	}
	counts := false
	reported := map[string]bool{}
	for i, l := range e.Lanes {
		if !e.Harness.CountsInstructions(l) {
			continue
		}
		counts = true
		f := func(field string) string { return fmt.Sprintf("lanes[%d].%s", i, field) }
		if _, p := kind.Counter(e.Harness.ForKind(), l.Name); p != nil {
			field := "harness." + p.Field
			if p.Field == "" {
				field = f("metric")
			}
			if !reported[field] {
				reported[field] = true
				v.bad(field, "%s", p.Msg)
			}
		}
		if l.Unit != "" && l.Unit != lanekind.InstructionsUnit {
			v.bad(f("unit"), "a lane that counts instructions has unit %s; got %q", lanekind.InstructionsUnit, l.Unit)
		}
		if l.Better != "" && l.Better != BetterLower {
			v.bad(f("better"), "a lane that counts instructions is better lower; got %q", l.Better)
		}
	}
	for _, o := range []struct{ name, v string }{{"op-start", e.Harness.OpStart}, {"op-end", e.Harness.OpEnd}} {
		if !counts && o.v != "" {
			v.bad("harness."+o.name, "only for lanes that count instructions (metric: instructions)")
		}
	}
}

// atMost checks a lane's count bounds: a guard lane's, outside the gate, each a metric
// unit with a bound of at least 0.
func (v *validator) atMost(field string, l Lane) {
	switch {
	case len(l.AtMost) == 0:
		if v.e.set(field) {
			v.bad(field, "is empty; remove the line or bound a metric")
		}
		return
	case v.gate:
		v.bad(field, "not used by the gate (it gates on the lane's value); remove it")
		return
	case l.Role != RoleGuard:
		v.bad(field, "only for guard lanes, got a %s lane", l.Role)
		return
	}
	unit := regexp.MustCompile(UnitPattern)
	for _, m := range slices.Sorted(maps.Keys(l.AtMost)) {
		switch b := l.AtMost[m]; {
		case !unit.MatchString(m):
			v.bad(field, "invalid metric unit %q (must match %s, as a benchmark line prints it: cold-calls/op)", m, UnitPattern)
		case b < 0 || math.IsNaN(b) || math.IsInf(b, 0):
			v.bad(field+"."+m, "must be a bound of at least 0, got %g", b)
		}
	}
}

// nonzero checks a lane's nonzero list: metric units as a Go benchmark line prints them
// (no blanks), each once. The gate renders no receipt page, so it has none.
func (v *validator) nonzero(field string, units []string) {
	if len(units) == 0 {
		if v.e.set(field) {
			v.bad(field, "is empty; remove the line or list a metric")
		}
		return
	}
	if v.gate {
		v.bad(field, "not used by the gate (it warns about no metric); remove it")
		return
	}
	unit := regexp.MustCompile(UnitPattern)
	seen := map[string]bool{}
	for i, u := range units {
		switch f := fmt.Sprintf("%s[%d]", field, i); {
		case !unit.MatchString(u):
			v.bad(f, "invalid metric unit %q (must match %s, as a benchmark line prints it: stale-ms/op)", u, UnitPattern)
		case seen[u]:
			v.bad(f, "%s listed twice", u)
		}
		seen[u] = true
	}
}

// expectations checks a lane's expectation: one direction, or a mapping with exactly one
// direction per candidate arm.
func (v *validator) expectations(field string, l Lane) {
	if l.ExpectArms == nil {
		if !slices.Contains(expects(), l.Expect) {
			v.bad(field, "%s", oneOf(l.Expect, expects()))
		}
		return
	}
	var cands []string
	for _, a := range v.e.Candidates() {
		cands = append(cands, a.Name)
	}
	for _, arm := range slices.Sorted(maps.Keys(l.ExpectArms)) {
		dir := l.ExpectArms[arm]
		switch {
		case !slices.Contains(cands, arm):
			msg := fmt.Sprintf("unknown candidate arm %q", arm)
			if s := Suggest(arm, cands); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			v.bad(field+"."+arm, "%s", msg)
		case !slices.Contains(expects(), dir):
			v.bad(field+"."+arm, "%s", oneOf(dir, expects()))
		}
	}
	for _, c := range cands {
		if _, ok := l.ExpectArms[c]; !ok {
			v.bad(field, "names no expectation for candidate arm %s; a per-arm expectation lists every candidate", c)
		}
	}
}

func (v *validator) shape() {
	s := v.e.Shape
	if s == nil {
		return
	}
	if len(s.Decay) < 2 {
		v.bad("shape.decay", "needs at least 2 lanes")
	}
	names := make([]string, len(v.e.Lanes))
	for i, l := range v.e.Lanes {
		names[i] = l.Name
	}
	v.eachOnce("shape.decay", s.Decay, names, "unknown lane %q", "lane %s listed twice")
}

// eachOnce checks a list field whose entries must each be one of known, once: an unknown
// entry is named with unknown (and the nearest known name), a repeated one with twice.
func (v *validator) eachOnce(field string, list, known []string, unknown, twice string) {
	seen := map[string]bool{}
	for i, n := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !slices.Contains(known, n):
			msg := fmt.Sprintf(unknown, n)
			if s := Suggest(n, known); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			v.bad(f, "%s", msg)
		case seen[n]:
			v.bad(f, twice, n)
		}
		seen[n] = true
	}
}

func (v *validator) incidence() {
	in := v.e.Incidence
	if in == nil {
		return
	}
	v.harness("incidence.suite", in.Suite)
	if in.Suite.Metric != "" {
		v.bad("incidence.suite.metric", "the incidence suite runs each lane once to read its probe counters; it has no metric")
	}
	if in.Suite.OpStart != "" || in.Suite.OpEnd != "" {
		v.bad("incidence.suite", "the incidence suite counts no instructions: leave op-start and op-end out")
	}
	if in.Total == "" {
		v.bad("incidence.total", "is required (the counter of all events)")
	}
	if in.Eligible == "" {
		v.bad("incidence.eligible", "is required (the counter of events the change helps)")
	}
	if in.MinShare < 0 || in.MinShare > 1 {
		v.bad("incidence.min-share", "must be between 0 and 1")
	}
	switch {
	case in.SavingNs < 0:
		v.bad("incidence.saving-ns", "must not be negative")
	case in.SavingNs > MaxSavingNs:
		v.bad("incidence.saving-ns", "must be at most %g (1000 s per event)", float64(MaxSavingNs))
	}
	var cands []string
	for _, a := range v.e.Candidates() {
		cands = append(cands, a.Name)
	}
	v.eachOnce("incidence.arms", in.Arms, cands, "unknown candidate arm %q", "%s listed twice")
	shown := map[Share]bool{{Part: in.Eligible, Of: in.Total}: true}
	for i, sh := range in.Shares {
		f := fmt.Sprintf("incidence.shares[%d]", i)
		switch {
		case sh.Part == "":
			v.bad(f+".part", "is required (the counter counted)")
		case sh.Of == "":
			v.bad(f+".of", "is required (the counter it is a share of)")
		case sh.Part == sh.Of:
			v.bad(f, "part and of are both %s: a share of a counter over itself is always 1", sh.Part)
		case shown[sh]:
			v.bad(f, "%s/%s is shown already (the gate's eligible/total is always shown)", sh.Part, sh.Of)
		}
		shown[sh] = true
	}
}

func (v *validator) receipts() {
	hex := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for i, r := range v.e.Receipts {
		f := fmt.Sprintf("receipts[%d]", i)
		if r.Path == "" {
			v.bad(f+".path", "is required")
		}
		switch {
		case r.SHA256 == "":
			v.bad(f+".sha256", "is required")
		case !hex.MatchString(r.SHA256):
			v.bad(f+".sha256", "must be 64 lower-case hex digits (a SHA-256)")
		}
	}
}
