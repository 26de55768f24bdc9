// Package calibrate keeps what flipbench knows about a host's noise, and plans protocols
// with it. flipbench calibrate runs an A/A (the base arm against itself: the same binary in
// two arms) and records, per lane, the noise of one pass delta, its between-process and
// within-run parts, and how long one run takes; the record lives in the ledger, in
// experiments/calibration/<host>.json, keyed by the host's fingerprint (CPU model, cores,
// kernel, Go version), so a calibration is only used on the kind of machine it measured.
//
// Plan turns a lane's noise into what a protocol can resolve: the MDE at the protocol, the
// pairs per collection that would bring it to the floor, whether more samples per process
// or more processes help more, and the wall time that takes. flipbench plan and doctor use
// it.
package calibrate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// SchemaVersion is the version of a calibration file's JSON form.
const SchemaVersion = 1

// Dir is the folder of calibration files under the ledger root.
const Dir = "experiments/calibration"

// Host is what a calibration is valid for.
type Host struct {
	CPUModel  string `json:"cpu_model"`
	CPUs      int    `json:"cpus"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
}

// HostOf returns the host of a snapshot.
func HostOf(s receipt.Snapshot) Host {
	return Host{CPUModel: s.CPUModel, CPUs: s.CPUs, Kernel: s.Kernel, GoVersion: s.GoVersion}
}

// Key returns the host's file name stem: its fields, lower case, runs of other characters
// as one dash.
func (h Host) Key() string {
	s := strings.ToLower(fmt.Sprintf("%s-%dcpu-%s-%s", h.CPUModel, h.CPUs, h.Kernel, h.GoVersion))
	s = regexp.MustCompile(`[^a-z0-9.]+`).ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

// String describes the host in a line.
func (h Host) String() string {
	return fmt.Sprintf("%s, %d CPUs, kernel %s, %s", h.CPUModel, h.CPUs, h.Kernel, h.GoVersion)
}

// Lane is one lane's calibrated noise.
type Lane struct {
	// Experiment and Lane name the lane; Experiment is 0 for the gate.
	Experiment int    `json:"experiment"`
	Lane       string `json:"lane"`
	// NoisePct is the standard deviation of one pass delta (percent, log scale),
	// BetweenPct its process-to-process part and WithinCVPct the median robust CV of a
	// run's samples, measured with Samples samples per run over Pairs usable pass pairs
	// (DF degrees of freedom).
	NoisePct    float64 `json:"noise_pct"`
	BetweenPct  float64 `json:"between_pct"`
	WithinCVPct float64 `json:"within_cv_pct"`
	Samples     int     `json:"samples"`
	Warmup      int     `json:"warmup"`
	Pairs       int     `json:"pairs"`
	DF          int     `json:"df"`
	// RunTime is the median wall time of one run (one process).
	RunTime time.Duration `json:"run_time_ns"`
	// CPUs are the CPUs the lanes were pinned to while they were measured
	// (protocol.cpus); empty when the operating system placed them. Pinning changes the
	// noise, so a calibration speaks for one placement.
	CPUs []int `json:"cpus,omitempty"`
	// Receipt is the A/A receipt the numbers come from, relative to the ledger root, and
	// Measured when it ran.
	Receipt  string    `json:"receipt"`
	Measured time.Time `json:"measured"`
}

// PlacementChange says how the lane's calibrated placement differs from want, the CPUs a
// protocol pins lanes to (nil: unpinned): "calibrated unpinned, but the protocol runs it
// pinned to CPU 0: the noise differs"; "" when they agree.
func (l Lane) PlacementChange(want []int) string {
	if slices.Equal(l.CPUs, want) {
		return ""
	}
	return fmt.Sprintf("calibrated %s, but the protocol runs it %s: the noise differs", cpuset.Placement(l.CPUs), cpuset.Placement(want))
}

// File is a calibration file: a host and its lanes.
type File struct {
	SchemaVersion int    `json:"schema_version"`
	Host          Host   `json:"host"`
	Lanes         []Lane `json:"lanes"`
}

// Path returns the calibration file of host under the ledger root.
func Path(root string, h Host) string {
	return filepath.Join(root, filepath.FromSlash(Dir), h.Key()+".json")
}

// Read reads the calibration file of host under root; a missing file is an error that
// wraps os.ErrNotExist.
func Read(root string, h Host) (*File, error) {
	path := Path(root, h)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d; calibrate again", path, f.SchemaVersion, SchemaVersion)
	}
	if f.Host != h {
		return nil, fmt.Errorf("%s: calibrated on %s, not this host (%s)", path, f.Host, h)
	}
	return &f, nil
}

// Lane returns the calibration of one lane of experiment id, if there is one.
func (f *File) Lane(id int, lane string) (Lane, bool) {
	i := slices.IndexFunc(f.Lanes, func(l Lane) bool { return l.Experiment == id && l.Lane == lane })
	if i < 0 {
		return Lane{}, false
	}
	return f.Lanes[i], true
}

// Merge replaces the calibrations of the lanes in lanes and keeps the others.
func (f *File) Merge(lanes []Lane) {
	for _, l := range lanes {
		f.Lanes = slices.DeleteFunc(f.Lanes, func(o Lane) bool { return o.Experiment == l.Experiment && o.Lane == l.Lane })
		f.Lanes = append(f.Lanes, l)
	}
	slices.SortFunc(f.Lanes, func(a, b Lane) int {
		return cmp.Or(cmp.Compare(a.Experiment, b.Experiment), cmp.Compare(a.Lane, b.Lane))
	})
}

// Write writes the calibration file under root (creating the folder).
func Write(root string, f *File) (string, error) {
	f.SchemaVersion = SchemaVersion
	path := Path(root, f.Host)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, atomicfile.WriteJSON(path, f)
}

// FromReceipt returns the calibration of every lane of a receipt: the pooled noise of its
// analysis (against its first candidate; an A/A receipt has one, the base's twin), with
// each lane's median run time from its records. A pilot A/B receipt gives the noise too:
// the pair means' spread does not depend on the effect.
func FromReceipt(plan *receipt.Plan, recs []receipt.Record, rep driftcheck.Report, receiptPath string, measured time.Time) ([]Lane, error) {
	if len(rep.Candidates) == 0 {
		return nil, errors.New("the receipt has no candidate arm")
	}
	cand := rep.Candidates[0]
	times := map[string][]float64{}
	for _, r := range recs {
		if r.OK() {
			times[r.Lane] = append(times[r.Lane], float64(r.Ended.Sub(r.Started)))
		}
	}
	var out []Lane
	for _, s := range rep.Pooled {
		if !s.Bounded || s.Arm != cand {
			continue
		}
		out = append(out, Lane{Experiment: plan.Experiment, Lane: s.Lane, NoisePct: s.NoisePct, BetweenPct: s.BetweenPct,
			WithinCVPct: s.WithinCVPct, Samples: plan.Protocol.Samples, Warmup: plan.Protocol.Warmup, Pairs: s.UsablePairs, DF: s.DF,
			RunTime: time.Duration(driftcheck.Median(times[s.Lane])), CPUs: plan.Protocol.CPUs, Receipt: receiptPath, Measured: measured})
	}
	if len(out) == 0 {
		return nil, errors.New("no lane of the receipt has a noise estimate: run at least 2 pass pairs")
	}
	return out, nil
}

// Protocol is the protocol a plan is made for.
type Protocol struct {
	Samples, Warmup, Collections int
	// Pairs is the pass pairs per collection (a sequential protocol's max-pairs).
	Pairs int
	// Arms is the number of arms (base included).
	Arms int
}

// ProtocolOf returns the protocol a resolved run plans with: its pass pairs per
// collection are a sequential rule's max-pairs (the most it may run). It also describes
// them: "4 pairs per collection", "at most 12 pairs per collection (sequential)".
func ProtocolOf(res spec.Resolved, arms int) (Protocol, string) {
	p := res.Protocol
	pairs := p.Passes / 2
	what := fmt.Sprintf("%d pairs per collection", pairs)
	if s := p.Sequential; s != nil {
		pairs = s.MaxPairs
		what = fmt.Sprintf("at most %d pairs per collection (sequential)", pairs)
	}
	return Protocol{Samples: p.Samples, Warmup: p.Warmup, Collections: p.Collections, Pairs: pairs, Arms: arms}, what
}

// FloorOf returns a lane's effect floor: its own floor-pct, else the drift check's.
func FloorOf(l spec.Lane, res spec.Resolved) float64 {
	if l.FloorPct > 0 {
		return l.FloorPct
	}
	return res.Drift.EffectFloorPct
}

// LanePlan is what a lane needs at a protocol.
type LanePlan struct {
	Lane     string
	FloorPct float64
	NoisePct float64
	// MDEPct is the decision rule's MDE at the protocol; PairsNeeded the pairs per
	// collection that decide both an unchanged lane (shown neutral) and one changed by
	// twice the floor (reproduced) with the rule's power (100000 when out of reach), and
	// Resolves says the protocol's pairs already do.
	MDEPct      float64
	PairsNeeded int
	Resolves    bool
	// PairsNeeded2x and 4x are the pairs needed with 2x and 4x the samples per run: when
	// they are much fewer, more samples help; when about the same, only more processes do.
	PairsNeeded2x, PairsNeeded4x int
	// Time is the wall time of PairsNeeded pairs of this lane (all arms, collections and
	// both passes of a pair), from the calibrated run time.
	Time time.Duration
	// Advice says in a line what would resolve the floor.
	Advice string
}

// Plan computes a lane's plan at protocol p with floor floorPct, from its calibration.
func Plan(l Lane, floorPct float64, p Protocol, cfg driftcheck.Config) LanePlan {
	lp := LanePlan{Lane: l.Lane, FloorPct: floorPct}
	need := func(samples int) int {
		noise := driftcheck.NoiseOf(l.BetweenPct, l.WithinCVPct, samples)
		return driftcheck.PowerAt(noise, floorPct, max(p.Pairs, 1), p.Collections, cfg).PairsNeeded
	}
	// The noise at the protocol's samples, from the components (a calibration made with
	// other sample counts still plans right).
	lp.NoisePct = driftcheck.NoiseOf(l.BetweenPct, l.WithinCVPct, p.Samples)
	lp.MDEPct = driftcheck.PowerAt(lp.NoisePct, floorPct, p.Pairs, p.Collections, cfg).MDEPct
	lp.PairsNeeded, lp.PairsNeeded2x, lp.PairsNeeded4x = need(p.Samples), need(2*p.Samples), need(4*p.Samples)
	lp.Resolves = lp.PairsNeeded == 0
	for _, n := range []*int{&lp.PairsNeeded, &lp.PairsNeeded2x, &lp.PairsNeeded4x} {
		if *n == 0 { // the protocol's pairs already suffice
			*n = p.Pairs
		}
	}
	run := runTime(l, p.Samples, p.Warmup)
	lp.Time = time.Duration(float64(run) * float64(lp.PairsNeeded*2*p.Collections*p.Arms))
	switch {
	case lp.Resolves:
		lp.Advice = fmt.Sprintf("resolves the %g%% floor at this protocol", floorPct)
	case lp.PairsNeeded >= 100_000:
		lp.Advice = fmt.Sprintf("cannot resolve the %g%% floor at any practical protocol: raise the floor, or make the lane quieter", floorPct)
	case lp.PairsNeeded4x < lp.PairsNeeded*2/3:
		lp.Advice = fmt.Sprintf("needs about %d pairs per collection, or %d with 4x the samples per run: more samples help (the noise within a run dominates)",
			lp.PairsNeeded, lp.PairsNeeded4x)
	default:
		lp.Advice = fmt.Sprintf("needs about %d pairs per collection; more samples per run barely help (the noise between processes dominates): run more pairs",
			lp.PairsNeeded)
	}
	return lp
}

// runTime scales a lane's calibrated run time to another sample count: the run is assumed
// to cost in proportion to its operations (warmup + samples), an upper bound when process
// start-up is a large part of it.
func runTime(l Lane, samples, warmup int) time.Duration {
	ops := float64(max(l.Samples+l.Warmup, 1))
	return time.Duration(math.Round(float64(l.RunTime) * float64(samples+warmup) / ops))
}
