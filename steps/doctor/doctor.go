// Package doctor checks an experiment's run before anything is built or measured: the
// host (CPU other processes use now, cores, swap, free memory and disk) and the contract
// (whether each lane's floor lies above the noise calibrated on this host, at the
// protocol the run would use). An over-committed contract is reported before the run, in
// one line per lane, with the pairs it would need: the way the freshness scheduler's
// decision record wants an over-committed deadline reported before start.
package doctor

import (
	"fmt"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// Levels of a finding.
const (
	OK   = "ok"
	Warn = "warn"
)

// Finding is one check's result, with what to do about a warning.
type Finding struct {
	Level string `json:"level"`
	Check string `json:"check"`
	Text  string `json:"text"`
}

// Host is what doctor saw of the machine.
type Host struct {
	// Snapshot is the host as harness.CaptureEnv sees it.
	Snapshot receipt.Snapshot
	// OthersPct is the share of all CPUs other processes used over a short window now.
	OthersPct float64
	// Placement says where the run's lanes and flipbench's own threads would go, and
	// why (harness.LanePlacement for a run the page and flags do not place).
	Placement string
	// SchedstatErr is why the kernel's per-thread run-queue counts cannot be read here
	// (nil when they can): without them no sample's interference is measured.
	SchedstatErr error
}

// Input is what the checks read.
type Input struct {
	Spec     *spec.Experiment
	Resolved spec.Resolved
	Host     Host
	// Calibration is this host's calibration file, or nil when there is none.
	Calibration *calibrate.File
	// CalibrationErr is why there is none (a missing file, another host, a bad file).
	CalibrationErr error
}

// Thresholds of the host checks.
const (
	busyPct      = 25
	minDiskBytes = 1 << 30
	minMemBytes  = 512 << 20
)

// Check runs every check and returns its findings, host first, then one per lane.
func Check(in Input) []Finding {
	var out []Finding
	add := func(level, check, format string, args ...any) {
		out = append(out, Finding{level, check, fmt.Sprintf(format, args...)})
	}
	h := in.Host
	switch {
	case h.OthersPct >= busyPct:
		add(Warn, "host", "other processes use %.0f%% of the CPU now: stop them or measure later, since a busy host adds noise and drift", h.OthersPct)
	default:
		add(OK, "host", "other processes use %.0f%% of the CPU now", h.OthersPct)
	}
	if h.Placement != "" {
		add(OK, "placement", "%s", h.Placement)
	}
	if h.SchedstatErr != nil {
		add(Warn, "interference", "the kernel's per-thread run-queue counts cannot be read (%v): samples a neighbour descheduled go unseen, and metric cpu refuses every run (docs/busy-host.md)", h.SchedstatErr)
	} else {
		add(OK, "interference", "the kernel counts each lane thread's run-queue delay (/proc/PID/task/*/schedstat): samples a neighbour descheduled are seen")
	}
	if h.Snapshot.CPUs < 2 {
		add(Warn, "host", "%d CPU: lanes share it with flipbench and the machine; use a machine with at least 2", h.Snapshot.CPUs)
	}
	if b := h.Snapshot.SwapUsedBytes; b > 0 {
		add(Warn, "host", "%d MiB of swap in use: paging makes runs slow at random; free memory first", b>>20)
	}
	if b := h.Snapshot.MemAvailBytes; b > 0 && b < minMemBytes {
		add(Warn, "host", "only %d MiB of memory available", b>>20)
	}
	if b := h.Snapshot.DiskFreeBytes; b > 0 && b < minDiskBytes {
		add(Warn, "host", "only %d MiB free on disk: receipts and builds need room, and a nearly full disk slows I/O", b>>20)
	}
	out = append(out, contract(in)...)
	return out
}

// contract checks each lane's floor against its calibrated noise at the run's protocol.
func contract(in Input) []Finding {
	var out []Finding
	if in.Calibration == nil {
		why := "none for this host"
		if in.CalibrationErr != nil {
			why = in.CalibrationErr.Error()
		}
		return []Finding{{Warn, "contract", fmt.Sprintf("no calibration to check the floors against (%s): run flipbench calibrate %d first", why, in.Spec.ID)}}
	}
	p := in.Resolved.Protocol
	proto, what := calibrate.ProtocolOf(in.Resolved, len(in.Spec.Arms))
	var total time.Duration
	for _, l := range in.Resolved.Lanes {
		if l.Role == spec.RoleSecondary {
			continue
		}
		cal, ok := in.Calibration.Lane(in.Spec.ID, l.Name)
		if !ok {
			out = append(out, Finding{Warn, "contract", fmt.Sprintf("%s: not calibrated on this host: run flipbench calibrate %d", l.Name, in.Spec.ID)})
			continue
		}
		if change := cal.PlacementChange(p.CPUList()); change != "" {
			out = append(out, Finding{Warn, "contract", fmt.Sprintf("%s: %s; run flipbench calibrate %d again", l.Name, change, in.Spec.ID)})
		}
		floor := calibrate.FloorOf(l, in.Resolved)
		lp := calibrate.Plan(cal, floor, proto, in.Resolved.Drift)
		total += lp.Time
		if lp.Resolves {
			out = append(out, Finding{OK, "contract", fmt.Sprintf("%s: floor %g%%, MDE %.1f%% at %s (noise %.1f%%)", l.Name, floor, lp.MDEPct, what, lp.NoisePct)})
			continue
		}
		out = append(out, Finding{Warn, "contract", fmt.Sprintf("%s: floor %g%% but MDE %.1f%% at %s (noise %.1f%%): it %s",
			l.Name, floor, lp.MDEPct, what, lp.NoisePct, lp.Advice)})
	}
	if s := p.Sequential; s != nil && total > time.Duration(s.Budget) {
		out = append(out, Finding{Warn, "contract", fmt.Sprintf("the lanes need about %s to resolve their floors, more than the %s budget", total.Round(time.Second), time.Duration(s.Budget))})
	}
	return out
}

// Warnings counts the warnings among findings.
func Warnings(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Level == Warn {
			n++
		}
	}
	return n
}
