package loaded

import (
	"cmp"
	"fmt"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// maxBlockedShare is the share of a sample's interval a process of a lane measured by its
// on-CPU time (lanekind.MetricCPU) may spend neither on a CPU nor waiting for one (asleep,
// blocked on a lock, I/O or another goroutine) before the run is refused: on-CPU time
// does not see waiting, so it is honest only for a lane that never waits.
const maxBlockedShare = 0.10

// autoCPU is the metric of a lane of metric auto that laneMetrics found never to wait:
// its on-CPU time, as metric cpu, without refusing one run that waited.
const autoCPU = "auto:cpu"

// minMeasured is the share of a lane's samples, in every arm, whose intervals the kernel
// must have measured for lanekind.MetricAuto to judge the lane by its on-CPU time: a lane
// that prints its results at once, or times operations of microseconds alone, has too few
// (receipt.MinIntervalNs) and keeps its own values.
const minMeasured = 0.8

// findingMargin decides when a candidate's processes wait for a CPU so much more than the
// base's that the waiting is the candidate's own (threads of the lane waiting for each
// other), not a neighbour's: its median sample waits more than findingMargin of its
// interval longer than the base's median sample. A neighbour delays both arms alike; one
// more thread contending for the lane's CPU delays every sample of the arm that has it.
const findingMargin = 0.25

// sampleFilter is what the analysis keeps of one run's samples under the method's
// interference rule and the lane's metric.
type sampleFilter struct {
	lane, arm string
	samples   []float64
	// dropped counts the samples left out of samples.
	dropped int
	// waited counts the measured samples that waited beyond driftcheck.MaxWaitShare; left
	// out of samples unless the lane's waiting is a finding.
	waited, measured int
	// setAside, when set, sets the whole run aside (too few samples left); failed refuses
	// it (the metric cannot measure it).
	setAside, failed string
}

// filterRun applies the interference rule to one good run's samples: for a lane measured
// by its on-CPU time, every sample scaled by its interval's on-CPU share (a run whose
// process was blocked, or that has no intervals, is refused); for a timed lane under
// driftcheck.InterferenceRunQueue20, samples that waited for a CPU beyond
// driftcheck.MaxWaitShare left out (keep says the lane's waiting is its own, so none is),
// and the run set aside when fewer than half remain.
//
// metric is the lane's metric as the run is judged by (laneMetrics: auto resolved).
func filterRun(m driftcheck.Method, metric string, r receipt.Record, keep bool) sampleFilter {
	f := sampleFilter{lane: r.Lane, arm: r.Arm, samples: r.Samples}
	measured := len(r.Intervals) == len(r.Samples)
	if measured {
		for _, iv := range r.Intervals {
			if iv.Measured() {
				f.measured++
				if iv.WaitShare() > driftcheck.MaxWaitShare {
					f.waited++
				}
			}
		}
	}
	switch {
	case metric == lanekind.MetricCPU, metric == autoCPU:
		return onCPU(f, r, measured, metric == lanekind.MetricCPU)
	case m.Interference != driftcheck.InterferenceRunQueue20 || !measured || keep:
		return f
	}
	f.samples = nil
	for i, v := range r.Samples {
		if iv := r.Intervals[i]; !iv.Measured() || iv.WaitShare() <= driftcheck.MaxWaitShare {
			f.samples = append(f.samples, v)
		}
	}
	f.dropped = len(r.Samples) - len(f.samples)
	if 2*len(f.samples) < len(r.Samples) {
		f.dropped = 0
		f.setAside = fmt.Sprintf("%d of its %d samples waited for a CPU more than %.0f%% of their interval (median %.0f%%): another process took the lane's CPU",
			f.waited, len(r.Samples), 100*driftcheck.MaxWaitShare, 100*medianWait(r.Intervals))
		f.samples = r.Samples
	}
	return f
}

// onCPU scales each sample of a lane measured by its on-CPU time by the share of its
// interval the process ran on a CPU.
//
// refuse, for a lane whose page chose metric cpu, refuses a run whose process was blocked;
// a lane that came to it by metric auto was found never to wait as a whole (laneMetrics),
// and one run of it that did is measured like the others.
func onCPU(f sampleFilter, r receipt.Record, measured, refuse bool) sampleFilter {
	if !measured {
		f.failed = "metric cpu: the run has no per-sample intervals (the kernel gives no schedstat here, or the lane's output lines came at once); measure it by wall time (metric: wall)"
		f.samples = nil
		return f
	}
	var blocked []float64
	f.samples = nil
	for i, v := range r.Samples {
		iv := r.Intervals[i]
		if !iv.Measured() {
			continue
		}
		blocked = append(blocked, 1-float64(iv.CPUNs+iv.WaitNs)/float64(iv.WallNs))
		f.samples = append(f.samples, v*float64(iv.CPUNs)/float64(iv.WallNs))
	}
	f.dropped = len(r.Samples) - len(f.samples)
	if b := driftcheck.Median(blocked); len(blocked) == 0 || refuse && b > maxBlockedShare {
		f.failed = fmt.Sprintf("metric cpu: the process was blocked (neither on a CPU nor waiting for one) for %.0f%% of a median sample's interval, beyond %.0f%%: on-CPU time does not see waiting on a lock, I/O, a timer or another goroutine; measure the lane by wall time (metric: wall)",
			100*b, 100*maxBlockedShare)
		f.samples = nil
	}
	return f
}

// laneMetrics returns each lane's metric as its runs are judged: lanekind.MetricAuto
// resolved to MetricCPU when in every arm the kernel measured at least minMeasured of the
// samples' intervals and the runs, by the median over their processes, were blocked
// (neither on a CPU nor waiting for one) at most maxBlockedShare of a median sample's
// interval; to MetricWall otherwise. Every other metric as the plan has it ("" is wall).
func laneMetrics(plan *receipt.Plan, recs []receipt.Record) map[string]string {
	blocked := map[[2]string][]float64{}
	samples, measured := map[[2]string]int{}, map[[2]string]int{}
	for _, r := range recs {
		if !r.OK() {
			continue
		}
		k := [2]string{r.Lane, r.Arm}
		samples[k] += len(r.Samples)
		if len(r.Intervals) != len(r.Samples) {
			continue
		}
		var b []float64
		for _, iv := range r.Intervals {
			if iv.Measured() {
				b = append(b, 1-float64(iv.CPUNs+iv.WaitNs)/float64(iv.WallNs))
			}
		}
		measured[k] += len(b)
		if len(b) > 0 {
			blocked[k] = append(blocked[k], driftcheck.Median(b))
		}
	}
	out := map[string]string{}
	for _, l := range plan.Lanes {
		out[l.Name] = cmp.Or(l.Metric, lanekind.MetricWall)
		if l.Metric != lanekind.MetricAuto {
			continue
		}
		out[l.Name] = autoCPU
		for _, a := range plan.Arms {
			k := [2]string{l.Name, a.Name}
			if b := blocked[k]; len(b) == 0 || driftcheck.Median(b) > maxBlockedShare || float64(measured[k]) < minMeasured*float64(samples[k]) {
				out[l.Name] = lanekind.MetricWall
			}
		}
	}
	return out
}

// medianWait returns the median share of their intervals the measured samples waited.
func medianWait(ivs []receipt.Interval) float64 {
	var w []float64
	for _, iv := range ivs {
		if iv.Measured() {
			w = append(w, iv.WaitShare())
		}
	}
	return driftcheck.Median(w)
}

// ownWaiting returns, per lane, the finding of a candidate whose processes wait for a
// CPU far more than the base's (findingMargin), in words: the lane's threads waiting for
// each other, which the rule must see, not set aside as a neighbour's.
func ownWaiting(plan *receipt.Plan, recs []receipt.Record) map[string]string {
	waits := map[[2]string][]float64{}
	for _, r := range recs {
		if !r.OK() || len(r.Intervals) != len(r.Samples) {
			continue
		}
		k := [2]string{r.Lane, r.Arm}
		for _, iv := range r.Intervals {
			if iv.Measured() {
				waits[k] = append(waits[k], iv.WaitShare())
			}
		}
	}
	out := map[string]string{}
	base := plan.Arms[0].Name
	for _, l := range plan.Lanes {
		bw := waits[[2]string{l.Name, base}]
		if len(bw) == 0 {
			continue
		}
		b := driftcheck.Median(bw)
		for _, a := range plan.Arms[1:] {
			cw := waits[[2]string{l.Name, a.Name}]
			if c := driftcheck.Median(cw); len(cw) > 0 && c > b+findingMargin {
				out[l.Name] = fmt.Sprintf("lane %s: %s's median sample waited for a CPU %.0f%% of its interval, %s's %.0f%%: the candidate's own threads wait for each other (more threads, or more contention for the lane's CPUs), a finding of the lane, so no sample of it is set aside",
					l.Name, a.Name, 100*c, base, 100*b)
			}
		}
	}
	return out
}

// interferenceSummary counts, per lane and arm (plan order), the samples the interference
// rule looked at and what it set aside, for the receipt; lanes and arms without a measured
// sample are left out.
func interferenceSummary(plan *receipt.Plan, runs []sampleFilter, findings, metrics map[string]string) []driftcheck.Interference {
	type key struct{ lane, arm string }
	sums := map[key]*driftcheck.Interference{}
	for _, f := range runs {
		k := key{f.lane, f.arm}
		s := sums[k]
		if s == nil {
			s = &driftcheck.Interference{Lane: f.lane, Arm: f.arm, Finding: findings[f.lane]}
			if m := metrics[f.lane]; m == lanekind.MetricCPU || m == autoCPU {
				s.Metric = lanekind.MetricCPU
			}
			sums[k] = s
		}
		s.Runs++
		s.Samples += f.measured
		s.Waited += f.waited
		s.SamplesSetAside += f.dropped
		if f.setAside != "" {
			s.RunsSetAside++
		}
	}
	var out []driftcheck.Interference
	for _, l := range plan.Lanes {
		for _, a := range plan.Arms {
			if s := sums[key{l.Name, a.Name}]; s != nil && s.Samples > 0 {
				out = append(out, *s)
			}
		}
	}
	return out
}
