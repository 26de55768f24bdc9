package report

import (
	"fmt"
	"slices"

	"golang.org/x/perf/benchunit"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// ShortSampleNs is the sample time below which a Go benchmark run with one iteration
// per sample is warned about: a b.N loop run once measures its setup and the timer more
// than the operation.
const ShortSampleNs = 1e6

// BenchtimeWarnings returns, for every gotest lane whose samples look like a b.N
// benchmark given too few iterations, one warning that says how to fix it:
//
//   - run with one iteration per sample (-test.benchtime 1x, the default of a harness
//     without benchtime), with a median sample under ShortSampleNs;
//   - or its time per operation falls sharply as the iteration count grows within one
//     arm (the samples of a duration benchtime have different counts): the median at the
//     lower half of the arm's counts is more than twice the median at the upper half,
//     whose typical count is at least four times the lower half's. Arms are checked each
//     on its own: arms whose speeds differ run their own counts (arm_iterations), and a
//     slower candidate at fewer iterations is the change, not its setup.
//
// Only time units are checked. A lane whose spec declares a count (harness.benchtime: 1x,
// receipt.Lane.Benchtime) means its iteration count (one execution per sample, timed on
// purpose) and gets no warning.
func BenchtimeWarnings(d *loaded.Receipt) []string {
	var out []string
	for _, l := range d.Plan.Lanes {
		if l.Benchtime != "" && !lanekind.IsDuration(l.Benchtime) {
			continue
		}
		type point struct {
			iters int
			v     float64
		}
		var vals []float64
		var byArm [][]point
		bt, unit := "", ""
		for _, a := range d.Plan.Arms {
			kind, err := lanekind.Lookup(a.Kind)
			if err != nil {
				continue
			}
			b, loops := kind.Benchtime(a.Command)
			if !loops {
				continue
			}
			if bt == "" || b == lanekind.DefaultBenchtime {
				bt = b
			}
			var pts []point
			for _, r := range d.Records {
				if r.Arm != a.Name || r.Lane != l.Name || !r.OK() {
					continue
				}
				unit = r.Unit
				vals = append(vals, r.Samples...)
				for i, v := range r.Samples {
					if i < len(r.Iters) {
						pts = append(pts, point{r.Iters[i], v})
					}
				}
			}
			byArm = append(byArm, pts)
		}
		if len(vals) == 0 {
			continue
		}
		v, tu := benchunit.Tidy(driftcheck.Median(vals), unit)
		if tu != "sec/op" {
			continue
		}
		if bt == lanekind.DefaultBenchtime && v*1e9 < ShortSampleNs {
			out = append(out, fmt.Sprintf("lane %s runs one iteration per sample (-test.benchtime 1x) and its samples take %s: a b.N benchmark run once measures its setup and the timer, not its loop; "+
				"set harness.benchtime to a duration (100ms) or a count (10000x) that makes a sample take a millisecond or more (flipbench compare: --benchtime)",
				l.Name, human.Value(driftcheck.Median(vals), unit)))
			continue
		}
		med := func(ps []point) float64 {
			xs := make([]float64, len(ps))
			for i, p := range ps {
				xs[i] = p.v
			}
			return driftcheck.Median(xs)
		}
		for _, pts := range byArm {
			if len(pts) < 4 {
				continue
			}
			slices.SortFunc(pts, func(a, b point) int { return a.iters - b.iters })
			lo, hi := pts[:len(pts)/2], pts[len(pts)/2:]
			loIters, hiIters := lo[len(lo)/2].iters, hi[len(hi)/2].iters
			if hiIters < 4*loIters {
				continue
			}
			if a, b := med(lo), med(hi); b > 0 && a > 2*b {
				out = append(out, fmt.Sprintf("lane %s's time per operation falls from %s at %d iterations to %s at %d: setup inside the timed loop is measured with the operation; "+
					"call b.ResetTimer after the setup, or give it a longer benchtime", l.Name, human.Value(a, unit), loIters, human.Value(b, unit), hiIters))
				break
			}
		}
	}
	return out
}

// VerdictLines summarises a receipt in one line per candidate and primary or guard lane:
// "candA PointRead (primary, expect faster): reproduced-faster, effect -12.1% [-15.0%,
// -9.1%]", from the lane evidence pooled over collections.
func VerdictLines(d *loaded.Receipt) []string {
	var out []string
	for _, s := range d.Analysis.Pooled {
		i := slices.IndexFunc(d.Plan.Lanes, func(l receipt.Lane) bool { return l.Name == s.Lane })
		if i < 0 {
			continue
		}
		l := d.Plan.Lanes[i]
		role := string(l.Role)
		switch l.Role {
		case spec.RolePrimary:
			expect := l.ExpectFor(s.Arm)
			if expect == "" {
				expect = spec.DefaultExpect
			}
			role += ", expect " + expect
		case spec.RoleGuard:
		default:
			continue
		}
		effect := "no interval"
		if s.Bounded {
			effect = human.DeltaCI(s.EstimatePct, s.CILowPct, s.CIHighPct)
		} else if s.UsablePairs > 0 {
			effect = human.Delta(s.EstimatePct) + " (no interval)"
		}
		out = append(out, fmt.Sprintf("%s %s (%s): %s, effect %s", s.Arm, s.Lane, role, s.Verdict, effect))
	}
	return out
}
