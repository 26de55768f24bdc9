package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// ProfileTop is how many functions of each profile difference the receipt keeps, by flat
// and by cumulative difference.
const ProfileTop = 15

// profileLanes runs, after the measured runs of the receipt d (loaded and analysed) and before the receipt is
// written, one more process per arm of every lane the plan's ProfileLanes selects (the
// lanes reproduced in the pooled analysis, or all), with a CPU profile, and one more
// with an allocation profile for a lane whose runs report B/op; it keeps the profiles in
// dir/profiles and their differences in dir/profiles.json (docs/profiles.md). None of
// these processes is a measured run: they are not in raw.jsonl.
//
// It does nothing for a plan that profiles nothing, a shard (its merge has the data to
// judge), or a receipt that is finished (it has a manifest) or already profiled. A
// process that fails or writes no profile is a note in profiles.json, not an error: the
// measured receipt is complete without it.
func profileLanes(ctx context.Context, d *loaded.Receipt, opts Options) error {
	dir, plan := d.Dir, d.Plan
	sel := plan.ProfileLanes
	if sel == "" || sel == profdiff.SelectNone || plan.Part() || plan.Merged() {
		return nil
	}
	if !profdiff.ValidSelection(sel) {
		return fmt.Errorf("%s: profile_lanes %q: want one of %v", filepath.Join(dir, receipt.PlanFile), sel, profdiff.Selections())
	}
	if _, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); err == nil || profdiff.Exists(dir) {
		return nil
	}
	chosen := profiledLanes(d, sel)
	if len(chosen) == 0 {
		return nil
	}
	// What an interrupted attempt left is measured again.
	if _, err := receipt.Folder(dir).ProfileDir(); err != nil {
		return err
	}
	p := &profiler{dir: dir, plan: plan, st: opts.starter(), log: opts.log(), runs: map[runKey]profdiff.Run{}}
	rep := &profdiff.Report{SchemaVersion: profdiff.SchemaVersion, Selection: sel, Base: plan.Arms[0].Name}
	for _, c := range chosen {
		l, err := p.lane(ctx, c, d)
		if err != nil {
			return err
		}
		rep.Lanes = append(rep.Lanes, l)
	}
	return receipt.Folder(dir).WriteProfiles(rep)
}

// chosenLane is one lane of one candidate arm to profile.
type chosenLane struct {
	lane    receipt.Lane
	arm     string
	verdict driftcheck.LaneVerdict
}

// profiledLanes returns the lanes of d that selection sel profiles, for each candidate
// arm in plan order of the lanes.
func profiledLanes(d *loaded.Receipt, sel string) []chosenLane {
	var out []chosenLane
	for _, arm := range d.Analysis.Candidates {
		for _, l := range d.Plan.Lanes {
			i := slices.IndexFunc(d.Analysis.Pooled, func(s driftcheck.LaneSummary) bool { return s.Lane == l.Name && s.Arm == arm })
			if i < 0 {
				continue
			}
			v := d.Analysis.Pooled[i].Verdict
			if sel == profdiff.SelectAll || v == driftcheck.LaneReproducedFaster || v == driftcheck.LaneReproducedSlower {
				out = append(out, chosenLane{lane: l, arm: arm, verdict: v})
			}
		}
	}
	return out
}

// reportsBytes reports whether the lane allocates in its measured loop: a successful run
// of it reports a B/op above 0. A lane at 0 B/op gets no allocation profile, whose
// differences would be its setup's, outside the timer (go test's B/op counts the timed
// loop only).
func reportsBytes(d *loaded.Receipt, lane string) bool {
	return slices.ContainsFunc(d.Records, func(r receipt.Record) bool {
		return r.Lane == lane && r.OK() && slices.ContainsFunc(r.Metrics["B/op"], func(v float64) bool { return v > 0 })
	})
}

// runKey identifies one profiled process: a base arm's is shared by every candidate.
type runKey struct{ arm, lane, kind string }

// profiler runs the profiled processes of one receipt.
type profiler struct {
	dir  string
	plan *receipt.Plan
	st   harness.Starter
	log  io.Writer
	runs map[runKey]profdiff.Run
}

// lane profiles one lane in the base arm and candidate c.arm and computes the
// differences both profiles allow.
func (p *profiler) lane(ctx context.Context, c chosenLane, d *loaded.Receipt) (profdiff.Lane, error) {
	base := p.plan.Arms[0].Name
	out := profdiff.Lane{Lane: c.lane.Name, Arm: c.arm, Verdict: string(c.verdict), Diffs: []profdiff.Diff{}}
	kinds := []string{profdiff.CPU}
	if reportsBytes(d, c.lane.Name) {
		kinds = append(kinds, profdiff.Alloc)
	}
	for _, kind := range kinds {
		var pair [2]profdiff.Run
		for i, arm := range []string{base, c.arm} {
			r, err := p.run(ctx, arm, c.lane, kind)
			if err != nil {
				return out, err
			}
			out.Runs = append(out.Runs, r)
			pair[i] = r
		}
		diff, note := p.diff(kind, pair)
		if note != "" {
			out.Notes = append(out.Notes, note)
			continue
		}
		out.Diffs = append(out.Diffs, diff)
	}
	return out, nil
}

// diff computes the difference of one kind between a base and a candidate run, or says
// why there is none.
func (p *profiler) diff(kind string, pair [2]profdiff.Run) (profdiff.Diff, string) {
	for _, r := range pair {
		if r.Error != "" {
			return profdiff.Diff{}, fmt.Sprintf("no %s difference: arm %s's profiled process: %s", kind, r.Arm, r.Error)
		}
	}
	var profs [2]*profile.Profile
	for i, r := range pair {
		pr, err := profdiff.Read(filepath.Join(p.dir, filepath.FromSlash(r.File)))
		if err != nil {
			return profdiff.Diff{}, fmt.Sprintf("no %s difference: arm %s's profile: %v", kind, r.Arm, err)
		}
		profs[i] = pr
	}
	diff, err := profdiff.Compute(kind, profs[0], profs[1], pair[0].Operations, pair[1].Operations, ProfileTop)
	if err != nil {
		return profdiff.Diff{}, fmt.Sprintf("no %s difference: %v", kind, err)
	}
	return diff, ""
}

// run starts the profiled process of kind for lane in arm (once per arm, lane and kind)
// through the Starter, with the protocol's warmup, timeout and CPUs and its samples (or
// the plan's ProfileSamples), and
// returns what it did. An error is returned only when the run was interrupted.
func (p *profiler) run(ctx context.Context, armName string, lane receipt.Lane, kind string) (profdiff.Run, error) {
	key := runKey{armName, lane.Name, kind}
	if r, ok := p.runs[key]; ok {
		return r, nil
	}
	arm := p.plan.Arms[slices.IndexFunc(p.plan.Arms, func(a receipt.Arm) bool { return a.Name == armName })]
	rel := receipt.ProfilesDir + "/" + profdiff.ProfileName(armName, lane.Name, kind)
	out := profdiff.Run{Arm: armName, Kind: kind, Exit: -1}
	fmt.Fprintf(p.log, "flipbench: profiling lane %s of arm %s (%s)\n", lane.Name, armName, kind)
	r, err := p.start(ctx, arm, lane, kind, rel, &out)
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Operations = r
		out.File = rel
	}
	p.runs[key] = out
	return out, nil
}

// start runs one profiled process and returns the operations it ran; out gets the
// process's command, environment, pid, exit and times.
func (p *profiler) start(ctx context.Context, arm receipt.Arm, lane receipt.Lane, kind, rel string, out *profdiff.Run) (int, error) {
	k, err := lanekind.ForLane(arm.Kind, lane)
	if err != nil {
		return 0, err
	}
	abs, err := filepath.Abs(filepath.Join(p.dir, filepath.FromSlash(rel)))
	if err != nil {
		return 0, err
	}
	scratch, err := os.MkdirTemp("", owner.TempPrefix+owner.Self().String()+"-*-profile")
	if err != nil {
		return 0, fmt.Errorf("making the run's scratch folder: %v", err)
	}
	defer os.RemoveAll(scratch)
	proto := p.plan.Protocol
	if p.plan.ProfileSamples > 0 {
		proto.Samples = p.plan.ProfileSamples
	}
	// Not a pass of the schedule: collection and pass 0.
	run := lanekind.Run{
		Lane:    lane.Name,
		Argv:    harness.Expand(arm, receipt.Run{Arm: arm.Name, Lane: lane.Name}, lane, proto),
		Env:     arm.Env,
		Scratch: scratch,
		Samples: proto.Samples,
		Warmup:  proto.Warmup,
		Unit:    lane.Unit,
	}
	files := lanekind.ProfileFiles{CPU: abs}
	if kind == profdiff.Alloc {
		files = lanekind.ProfileFiles{Mem: abs}
	}
	proc := k.Profile(run, files)
	timeout := proto.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	pr := p.st.Start(ctx, harness.Command{Argv: proc.Argv, Env: proc.Env, Dir: arm.Dir, Timeout: timeout, CPUs: proto.CPUs})
	out.Command, out.PID, out.Exit = proc.Argv, pr.PID, pr.Exit
	out.Started, out.Ended = pr.Started.UTC(), pr.Ended.UTC()
	if len(proc.Env) > len(arm.Env) {
		out.Env = proc.Env[len(arm.Env):]
	}
	if pr.Err != nil {
		if tail := strings.TrimSpace(pr.StderrTail); tail != "" {
			tail = tail[strings.LastIndexByte(tail, '\n')+1:]
			return 0, fmt.Errorf("%v (stderr: %s)", pr.Err, tail)
		}
		return 0, pr.Err
	}
	ops, err := k.Operations(run, lanekind.Output{Stdout: pr.Stdout, Started: pr.Started, Ended: pr.Ended})
	if err != nil {
		return 0, err
	}
	if ops <= 0 {
		return 0, errors.New("ran no operation")
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("wrote no %s profile (an exec lane writes one where $%s or $%s names; docs/profiles.md)", kind, lanekind.CPUProfileEnv, lanekind.MemProfileEnv)
		}
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", rel)
	}
	return ops, nil
}
