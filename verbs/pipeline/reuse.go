package pipeline

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// reuseLookback is how many of the newest receipt folders ReuseIterations reads.
const reuseLookback = 200

// ReuseIterations gives the gotest lanes of plan that a recent receipt under results
// calibrated the iteration counts its own calibration fixed (receipt.Lane.Timing): a
// receipt whose arms are the same binaries (their SHA-256), run with the same commands,
// arguments and environment, pinned to the same CPUs, on the same host (calibrate.Host),
// and whose lane had the same benchtime and a calibration whose samples did not wait for
// a CPU (IterationTiming.Busy). A rerun of the same experiment then costs no calibration,
// and its lanes run the same counts as the run it repeats. The newest such receipt wins;
// each reused lane's timing names it (ReusedFrom, or the receipt that one reused). It
// returns the reused lanes' calibrations, for the forecast.
func ReuseIterations(results string, plan *receipt.Plan, host calibrate.Host) []LaneCalibration {
	want := map[string]bool{}
	for _, l := range plan.Lanes {
		if l.Iterations == 0 && l.Counter == nil && lanekind.IsDuration(l.Benchtime) {
			want[l.Name] = true
		}
	}
	if len(want) == 0 || len(plan.Arms) < 2 {
		return nil
	}
	entries, err := os.ReadDir(results)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	// Receipt folders begin with their UTC stamp: the newest sort last.
	slices.Sort(dirs)
	slices.Reverse(dirs)
	var out []LaneCalibration
	for _, name := range dirs[:min(len(dirs), reuseLookback)] {
		dir := filepath.Join(results, name)
		// Read, not validated: only the arms, placement and lanes are wanted.
		var old receipt.Plan
		if err := receipt.ReadJSON(filepath.Join(dir, receipt.PlanFile), &old); err != nil || !sameArms(old.Arms, plan.Arms) || !slices.Equal(old.Protocol.CPUs, plan.Protocol.CPUs) {
			continue
		}
		var env receipt.Env
		if err := receipt.ReadJSON(filepath.Join(dir, receipt.EnvFile), &env); err != nil || len(env.Snapshots) == 0 || calibrate.HostOf(env.Snapshots[0]) != host {
			continue
		}
		for _, ol := range old.Lanes {
			i := slices.IndexFunc(plan.Lanes, func(l receipt.Lane) bool { return l.Name == ol.Name })
			if i < 0 || !want[ol.Name] || ol.Benchtime != plan.Lanes[i].Benchtime || ol.Timing == nil || ol.Timing.Busy {
				continue
			}
			l := ol
			t := *l.Timing
			t.ReusedFrom = cmp.Or(t.ReusedFrom, name)
			l.Timing = &t
			cal, ok := calibrationOf(l)
			if !ok {
				continue
			}
			pl := &plan.Lanes[i]
			pl.Iterations, pl.ArmIterations, pl.Replanned, pl.Lengthened, pl.Timing = l.Iterations, l.ArmIterations, l.Replanned, l.Lengthened, l.Timing
			delete(want, ol.Name)
			out = append(out, cal)
		}
		if len(want) == 0 {
			break
		}
	}
	return out
}

// sameArms reports whether two plans' arms are the same binaries run alike: names,
// SHA-256, kind, command, arguments and environment, in order.
func sameArms(a, b []receipt.Arm) bool {
	return slices.EqualFunc(a, b, func(x, y receipt.Arm) bool {
		return x.Name == y.Name && x.SHA256 == y.SHA256 && x.SHA256 != "" && x.Kind == y.Kind &&
			slices.Equal(x.Command, y.Command) && slices.Equal(x.Args, y.Args) && slices.Equal(x.Env, y.Env)
	})
}

// reusedNote says in one line which lanes' iteration counts came from an earlier
// receipt, "" when none did.
func reusedNote(cals []LaneCalibration) string {
	from := map[string][]string{}
	var order []string
	for _, c := range cals {
		if c.ReusedFrom == "" {
			continue
		}
		if _, ok := from[c.ReusedFrom]; !ok {
			order = append(order, c.ReusedFrom)
		}
		from[c.ReusedFrom] = append(from[c.ReusedFrom], fmt.Sprintf("%s %dx", c.Lane, c.Iterations))
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%s from %s", shortList(from[r]), r))
	}
	if len(parts) == 0 {
		return ""
	}
	return "iteration counts reused from an earlier run of the same binaries on this host and placement (--recalibrate measures them again): " + joinAnd(parts)
}
