// Package incidence turns the probe counters of a release-suite run into the incidence
// report of an experiment: how often the situation the experiment optimises occurs, and
// what improving it could be worth.
//
// The pipeline: the suite's lanes run once each in a probe build (see package probe and
// docs/incidence.md); each lane reports every counter's change over its workload as an
// extra benchmark metric; the run loop keeps those per lane (receipt.Record.Metrics).
// Compute takes those records and the spec's incidence section and returns a Report:
//
//   - totals of every counter over the suite, the positive control lane left out;
//   - the eligible share: eligible events / total events (the spec's incidence.eligible
//     and incidence.total counters);
//   - a per-lane breakdown;
//   - the positive-control check: the control lane must count at least one eligible
//     event, or the probe is broken (an error-level finding), because a zero from a
//     broken probe and a zero from a workload that never produces the event look alike;
//   - a warning when the eligible count outside the control is exactly zero: a real
//     answer only if the control fired, and always worth a look (found and phrased by
//     package nonzero, as the zero metrics of a receipt's lanes are);
//   - the value estimate: frequency x eligible share x per-hit saving;
//   - the spec's extra shares (incidence.shares), each one counter over another, over the
//     suite and per lane, computed as the eligible share is. They describe the suite
//     (exp 275: the cheap share, the cheap reads that waited at all); the decision rule
//     reads only the eligible share.
//
// # Frequency and value
//
// Frequency is how often the total counter's event happens while the suite runs: total
// events divided by the suite's running time, the sum of the measured times of its lanes
// (the control lane left out), in events per second. With the eligible share s and the
// spec's per-hit saving (incidence.saving-ns), the value estimate
//
//	value = frequency x s x saving-ns
//
// is the time the change would save per second of suite workload, in ns/s; divided by
// 1e9 it is the fraction of the suite's time saved (ValueShare). It is as representative
// as the suite is: a suite that runs more of one workload weighs it more.
//
// Compute is pure; Markdown and JSON render a Report; Read and Write move it to and from a
// results folder (receipt.IncidenceFile).
package incidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/nonzero"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// Finding levels.
const (
	// LevelError: the measurement proves nothing (a broken probe, a failed lane).
	LevelError = "error"
	// LevelWarning: the numbers may be right but need a person's look.
	LevelWarning = "warning"
)

// Finding is a problem found in the measurement, phrased with what to do about it.
type Finding struct {
	Level   string `json:"level"`
	Lane    string `json:"lane,omitempty"`
	Message string `json:"message"`
}

// String formats the finding as "level: message".
func (f Finding) String() string { return f.Level + ": " + f.Message }

// Input is what Compute needs.
type Input struct {
	// Experiment is the experiment's number.
	Experiment int
	// Gate is the spec's incidence section: the counters, the control lane, the
	// min-share and the per-hit saving.
	Gate spec.Incidence
	// Records are the suite's runs, one or more per lane, as the run loop writes them.
	Records []receipt.Record
}

// Gate is the spec's incidence section as the report records it.
type Gate struct {
	// Suite names the suite: its Go package, or its command's first word.
	Suite string `json:"suite"`
	// Total and Eligible are the counters of all events and of the events the change
	// helps; Control is the positive control lane.
	Total    string `json:"total"`
	Eligible string `json:"eligible"`
	Control  string `json:"control,omitempty"`
	// MinShare is the eligible share the decision rule requires.
	MinShare float64 `json:"min_share"`
	// SavingNs is the estimated saving per eligible event, in ns.
	SavingNs float64 `json:"saving_ns"`
	// Shares are the spec's extra shares, in its order.
	Shares []SharePair `json:"shares,omitempty"`
}

// SharePair names one extra share: the Part counter over the Of counter.
type SharePair struct {
	Part string `json:"part"`
	Of   string `json:"of"`
}

// ShareValue is one extra share as measured: Part's count over Of's.
type ShareValue struct {
	SharePair
	PartCount float64 `json:"part_count"`
	OfCount   float64 `json:"of_count"`
	// Share is PartCount/OfCount, 0 when OfCount is 0.
	Share float64 `json:"share"`
}

// GateOf records a spec's incidence section.
func GateOf(in spec.Incidence) Gate {
	suite := in.Suite.Package
	if suite == "" && len(in.Suite.Command) > 0 {
		suite = in.Suite.Command[0]
	}
	g := Gate{Suite: suite, Total: in.Total, Eligible: in.Eligible, Control: in.Control,
		MinShare: in.MinShare, SavingNs: in.SavingNs}
	for _, sh := range in.Shares {
		g.Shares = append(g.Shares, SharePair{Part: sh.Part, Of: sh.Of})
	}
	return g
}

// Lane is one suite lane's part of the report.
type Lane struct {
	Lane string `json:"lane"`
	// Control marks the positive control lane, which the totals leave out.
	Control bool `json:"control,omitempty"`
	// Runs and Samples count the lane's usable runs and their samples (operations).
	Runs    int `json:"runs"`
	Samples int `json:"samples"`
	// TimeNs is the lane's measured time, all samples summed, in ns; 0 when its unit is
	// not a time.
	TimeNs float64 `json:"time_ns"`
	// Counts holds every counter the lane reported, summed over its samples.
	Counts map[string]float64 `json:"counts"`
	// Total and Eligible are the gate's two counters.
	Total    float64 `json:"total"`
	Eligible float64 `json:"eligible"`
	// Share is Eligible/Total within the lane, 0 when Total is 0.
	Share float64 `json:"share"`
	// Shares are the gate's extra shares within the lane, in the gate's order.
	Shares []ShareValue `json:"shares,omitempty"`
	// Error is the first failed run's error: why the lane has no usable run, or, next
	// to usable runs, that one of its runs failed.
	Error string `json:"error,omitempty"`
}

// Control is the positive-control check.
type Control struct {
	// Lane is the control lane named by the spec; empty when the spec names none.
	Lane string `json:"lane,omitempty"`
	// Ran says whether the lane has a usable run in the suite.
	Ran bool `json:"ran"`
	// Eligible is the eligible count the control lane produced.
	Eligible float64 `json:"eligible"`
	// Fired says whether the control counted at least one eligible event.
	Fired bool `json:"fired"`
}

// Report is the incidence of an experiment's situation over its release suite.
type Report struct {
	Experiment int `json:"experiment"`
	// Gate is the spec's incidence section the report was computed for.
	Gate Gate `json:"gate"`
	// Counters lists every counter name any lane reported, sorted.
	Counters []string `json:"counters"`
	// Totals sums every counter over the suite, control lane excluded.
	Totals map[string]float64 `json:"totals"`
	// Total and Eligible are the gate's two counters over the suite, control excluded.
	Total    float64 `json:"total"`
	Eligible float64 `json:"eligible"`
	// Share is Eligible/Total, 0 when Total is 0.
	Share float64 `json:"share"`
	// Shares are the gate's extra shares over the suite, control excluded, in the
	// gate's order.
	Shares []ShareValue `json:"shares,omitempty"`
	// SuiteTimeNs is the suite's running time, control excluded, in ns.
	SuiteTimeNs float64 `json:"suite_time_ns"`
	// FrequencyPerSec is Total / (SuiteTimeNs / 1e9): total events per second of suite
	// workload. 0 when the suite has no time.
	FrequencyPerSec float64 `json:"frequency_per_sec"`
	// ValueNsPerSec is FrequencyPerSec x Share x Gate.SavingNs: ns saved per second of
	// suite workload. Only meaningful when HasValue.
	ValueNsPerSec float64 `json:"value_ns_per_sec"`
	// ValueShare is ValueNsPerSec / 1e9: the fraction of the suite's time saved.
	ValueShare float64 `json:"value_share"`
	// HasValue says whether the value estimate could be computed: the spec gives a
	// saving-ns and the suite has a time.
	HasValue bool `json:"has_value"`
	// MeetsMinShare says whether Share >= Gate.MinShare.
	MeetsMinShare bool `json:"meets_min_share"`
	// Control is the positive-control check.
	Control Control `json:"control"`
	// Lanes is the per-lane breakdown, in the order the lanes first appear.
	Lanes []Lane `json:"lanes"`
	// Findings are problems with the measurement, errors first.
	Findings []Finding `json:"findings"`

	// Build is the probe build of the suite that ran (binary, hash, where it came from);
	// the caller sets it.
	Build *receipt.Arm `json:"build,omitempty"`
	// Command is the flipbench command line that measured the report; the caller sets it.
	Command []string `json:"command,omitempty"`
}

// Broken reports whether any finding is an error: the counts then prove nothing.
func (r *Report) Broken() bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Level == LevelError })
}

// Compute builds the report from the suite's records. It fails only on input it cannot
// use at all (no counters named, no records); everything wrong with the measurement is a
// finding.
func Compute(in Input) (*Report, error) {
	g := GateOf(in.Gate)
	if g.Total == "" || g.Eligible == "" {
		return nil, errors.New("incidence: the spec names no total or eligible counter")
	}
	if len(in.Records) == 0 {
		return nil, errors.New("incidence: the suite produced no runs")
	}
	r := &Report{Experiment: in.Experiment, Gate: g, Totals: map[string]float64{}, Findings: []Finding{}}
	byLane := map[string]*Lane{}
	var order []string
	seen := map[string]bool{}
	for _, rec := range in.Records {
		l, ok := byLane[rec.Lane]
		if !ok {
			l = &Lane{Lane: rec.Lane, Control: rec.Lane == g.Control, Counts: map[string]float64{}}
			byLane[rec.Lane] = l
			order = append(order, rec.Lane)
		}
		if !rec.OK() {
			if l.Error == "" {
				l.Error = rec.Error
			}
			continue
		}
		l.Runs++
		l.Samples += len(rec.Samples)
		if scale, ok := nsPer(rec.Unit); ok {
			for _, v := range rec.Samples {
				l.TimeNs += v * scale
			}
		}
		for unit, vs := range rec.Metrics {
			if _, isTime := nsPer(unit); isTime || unit == "B/op" || unit == "allocs/op" {
				continue // a time, or go test -benchmem's memory statistics: not probe counters
			}
			seen[unit] = true
			for _, v := range vs {
				l.Counts[unit] += v
			}
		}
	}
	for name := range seen {
		r.Counters = append(r.Counters, name)
	}
	slices.Sort(r.Counters)

	timeless := false
	for _, name := range order {
		l := byLane[name]
		if l.Runs > 0 {
			// A run that succeeded but did not report a counter read it as absent:
			// keep the zero explicit.
			for _, c := range r.Counters {
				l.Counts[c] += 0
			}
		}
		l.Total, l.Eligible = l.Counts[g.Total], l.Counts[g.Eligible]
		l.Share = share(l.Eligible, l.Total)
		if l.Runs > 0 {
			l.Shares = shares(g.Shares, l.Counts)
		}
		r.Lanes = append(r.Lanes, *l)
		if l.Runs == 0 {
			r.Findings = append(r.Findings, Finding{Level: LevelError, Lane: name, Message: fmt.Sprintf(
				"lane %s produced no usable run (%s); its events are missing from every total: fix the lane and measure again", name, l.Error)})
			continue
		}
		if l.Control {
			continue
		}
		for c, v := range l.Counts {
			r.Totals[c] += v
		}
		r.SuiteTimeNs += l.TimeNs
		if l.TimeNs == 0 {
			timeless = true
		}
	}
	r.Total, r.Eligible = r.Totals[g.Total], r.Totals[g.Eligible]
	r.Share = share(r.Eligible, r.Total)
	r.Shares = shares(g.Shares, r.Totals)
	r.MeetsMinShare = r.Share >= g.MinShare
	if r.SuiteTimeNs > 0 && !timeless {
		r.FrequencyPerSec = r.Total / (r.SuiteTimeNs / 1e9)
		if g.SavingNs > 0 {
			r.HasValue = true
			r.ValueNsPerSec = r.FrequencyPerSec * r.Share * g.SavingNs
			r.ValueShare = r.ValueNsPerSec / 1e9
		}
	}
	r.check(byLane, seen, timeless)
	slices.SortStableFunc(r.Findings, func(a, b Finding) int { return levelRank(a.Level) - levelRank(b.Level) })
	return r, nil
}

// check adds the findings about the counters and the control.
func (r *Report) check(byLane map[string]*Lane, seen map[string]bool, timeless bool) {
	g := r.Gate
	add := func(level, lane, format string, args ...any) {
		r.Findings = append(r.Findings, Finding{Level: level, Lane: lane, Message: fmt.Sprintf(format, args...)})
	}
	for _, c := range []string{g.Total, g.Eligible} {
		if !seen[c] {
			add(LevelError, "", "no lane reported the counter %q (the suite reports: %s); check the counter's name in the spec and that the lanes report it with b.ReportMetric",
				c, orNone(r.Counters))
		}
	}
	warned := map[string]bool{g.Total: true, g.Eligible: true}
	for _, sh := range g.Shares {
		for _, c := range []string{sh.Part, sh.Of} {
			if !seen[c] && !warned[c] {
				warned[c] = true
				add(LevelWarning, "", "no lane reported the counter %q of the share %s/%s (the suite reports: %s), so that share reads 0; check incidence.shares in the spec",
					c, sh.Part, sh.Of, orNone(r.Counters))
			}
		}
	}
	switch l, ok := byLane[g.Control]; {
	case g.Control == "":
		add(LevelWarning, "", "the spec names no positive control lane (incidence.control), so a zero cannot be told from a broken probe; add a lane that must make %s fire", g.Eligible)
	case !ok:
		add(LevelError, g.Control, "the positive control lane %s is not in the suite; without it the counts prove nothing: add the lane or fix incidence.control", g.Control)
	default:
		r.Control = Control{Lane: g.Control, Ran: l.Runs > 0, Eligible: l.Eligible, Fired: l.Runs > 0 && l.Eligible > 0}
		if l.Runs > 0 && !r.Control.Fired {
			add(LevelError, g.Control, "probe broken: the positive control lane %s counted no %s events, so every count here proves nothing; was the suite built with -tags flipbench_probe, and does the probe still sit where the event happens?",
				g.Control, g.Eligible)
		}
	}
	if r.Control.Lane == "" && g.Control != "" {
		r.Control.Lane = g.Control
	}
	if seen[g.Total] && r.Total == 0 {
		add(LevelError, "", "the suite counted no %s events at all outside the control: it does not exercise the code under test, or the probe is compiled out", g.Total)
	}
	if seen[g.Eligible] && r.Total > 0 {
		fired := "the positive control fired, so the probe works and the zero is the suite's answer"
		if !r.Control.Fired {
			fired = "the positive control did not confirm the probe, so the zero may be a broken probe"
		}
		for _, w := range nonzero.Find([]nonzero.Quantity{{Name: g.Eligible, Values: []float64{r.Eligible},
			Over: fmt.Sprintf("%s %s in %d lanes", num(r.Total), g.Total, r.countedLanes()), Why: fired}}, false) {
			add(LevelWarning, "", "%s", w)
		}
	}
	if timeless {
		add(LevelWarning, "", "a suite lane reported no time (its unit is not ns/op or sec/op), so frequency and value are not computed")
	}
	if g.SavingNs == 0 {
		add(LevelWarning, "", "the spec gives no per-hit saving (incidence.saving-ns), so the value estimate is not computed; take it from the primary lane's measured saving")
	}
}

// countedLanes returns how many lanes count toward the totals.
func (r *Report) countedLanes() int {
	n := 0
	for _, l := range r.Lanes {
		if !l.Control && l.Runs > 0 {
			n++
		}
	}
	return n
}

// JSON renders the report as indented JSON with a final newline.
func JSON(r *Report) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the incidence report: %w", err)
	}
	return append(b, '\n'), nil
}

// Read reads dir's incidence.json. The error matches os.ErrNotExist when the folder has no incidence
// report.
func Read(dir string) (*Report, error) {
	var r Report
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.IncidenceFile), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Exists reports whether dir holds an incidence report.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, receipt.IncidenceFile))
	return err == nil
}

// nsPer returns how many ns one unit of a time unit is, and whether unit is a time.
func nsPer(unit string) (float64, bool) {
	switch unit {
	case "ns/op":
		return 1, true
	case "sec/op":
		return 1e9, true
	}
	return 0, false
}

// shares computes each extra share from counts.
func shares(pairs []SharePair, counts map[string]float64) []ShareValue {
	var out []ShareValue
	for _, p := range pairs {
		part, of := counts[p.Part], counts[p.Of]
		out = append(out, ShareValue{SharePair: p, PartCount: part, OfCount: of, Share: share(part, of)})
	}
	return out
}

// share returns part/whole, 0 when whole is not positive.
func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole
}

func levelRank(level string) int {
	if level == LevelError {
		return 0
	}
	return 1
}

// num formats a count: an integer without decimals, anything else with 3 significant
// digits (human.Num).
func num(v float64) string { return human.Num(v) }

func orNone(names []string) string {
	if len(names) == 0 {
		return "no counters"
	}
	return strings.Join(names, ", ")
}
