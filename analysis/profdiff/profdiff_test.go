package profdiff

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/model/receipt"
	"github.com/google/pprof/profile"
)

// builder makes small profiles: stacks of function names, innermost first; a name
// written "a+b" is one location where a was inlined into b.
type builder struct {
	p     *profile.Profile
	fns   map[string]*profile.Function
	locs  map[string]*profile.Location
	types []*profile.ValueType
}

func newBuilder(types ...string) *builder {
	b := &builder{fns: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
	for _, t := range types {
		typ, unit, _ := strings.Cut(t, "/")
		b.types = append(b.types, &profile.ValueType{Type: typ, Unit: unit})
	}
	b.p = &profile.Profile{SampleType: b.types, PeriodType: b.types[len(b.types)-1], Period: 1}
	return b
}

// cpuBuilder makes CPU profiles as Go writes them: samples/count and cpu/nanoseconds.
func cpuBuilder() *builder {
	b := newBuilder("samples/count", "cpu/nanoseconds")
	b.p.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	b.p.Period = 10e6
	return b
}

func (b *builder) fn(name string) *profile.Function {
	f := b.fns[name]
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.fns) + 1), Name: name, SystemName: name, Filename: "x.go"}
		b.fns[name] = f
		b.p.Function = append(b.p.Function, f)
	}
	return f
}

func (b *builder) loc(frame string) *profile.Location {
	l := b.locs[frame]
	if l == nil {
		l = &profile.Location{ID: uint64(len(b.locs) + 1), Address: uint64(0x1000 + len(b.locs))}
		for _, name := range strings.Split(frame, "+") {
			l.Line = append(l.Line, profile.Line{Function: b.fn(name), Line: 1})
		}
		b.locs[frame] = l
		b.p.Location = append(b.p.Location, l)
	}
	return l
}

// sample adds a sample with values (one per sample type) at a stack, innermost first.
func (b *builder) sample(values []int64, stack ...string) *builder {
	s := &profile.Sample{Value: values}
	for _, f := range stack {
		s.Location = append(s.Location, b.loc(f))
	}
	b.p.Sample = append(b.p.Sample, s)
	return b
}

// cpu adds n samples of 10ms at a stack.
func (b *builder) cpu(n int64, stack ...string) *builder {
	return b.sample([]int64{n, n * 10e6}, stack...)
}

func (b *builder) build(t *testing.T) *profile.Profile {
	t.Helper()
	if err := b.p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return b.p
}

func entry(t *testing.T, es []Entry, fn string) Entry {
	t.Helper()
	for _, e := range es {
		if e.Function == fn {
			return e
		}
	}
	t.Fatalf("no entry %s in %+v", fn, es)
	return Entry{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestComputeCPU(t *testing.T) {
	// base: step 10 samples, other 10 samples, both under run; 10 operations.
	base := cpuBuilder().cpu(10, "w.step", "w.run", "main").cpu(10, "w.other", "w.run", "main").build(t)
	// cand: step three times slower, other the same, 10 operations.
	cand := cpuBuilder().cpu(30, "w.step", "w.run", "main").cpu(10, "w.other", "w.run", "main").build(t)
	d, err := Compute(CPU, base, cand, 10, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if d.SampleType != "cpu/nanoseconds" || d.Unit != "ns/op" {
		t.Errorf("sample type %s unit %s", d.SampleType, d.Unit)
	}
	if d.Top[0].Function != "w.step" {
		t.Fatalf("top %s, want w.step: %+v", d.Top[0].Function, d.Top)
	}
	step := d.Top[0]
	// 10 samples x 10ms / 10 ops = 10ms/op; 30 x 10ms / 10 = 30ms/op.
	if !near(step.Flat.Base, 10e6) || !near(step.Flat.Cand, 30e6) || !near(step.Flat.Delta, 20e6) {
		t.Errorf("step flat %+v", step.Flat)
	}
	if step.Cum != step.Flat {
		t.Errorf("a leaf's cum %+v differs from its flat %+v", step.Cum, step.Flat)
	}
	// Sampling: var = sum value^2/count per arm = (1e8)^2/10/100 + (3e8)^2/30/100.
	wantNoise := math.Sqrt(math.Pow(1e8, 2)/10/100 + math.Pow(3e8, 2)/30/100)
	if !near(step.FlatNoise, wantNoise) {
		t.Errorf("noise %v, want %v", step.FlatNoise, wantNoise)
	}
	run := entry(t, d.TopCum, "w.run")
	if !near(run.Cum.Base, 20e6) || !near(run.Cum.Cand, 40e6) || run.Flat.Delta != 0 {
		t.Errorf("run %+v", run)
	}
	if !near(d.TopCum[0].Cum.Delta, 20e6) || len(d.TopCum) != 3 {
		t.Errorf("top cum %+v, want step, run and main at +20ms/op", d.TopCum)
	}
	if len(d.TopCode) != 3 {
		t.Errorf("top code %+v, want the three of top cum (none is the runtime's)", d.TopCode)
	}
	// other did not change: its flat difference is zero, so it is not a top entry.
	for _, e := range d.Top {
		if e.Function == "w.other" {
			t.Errorf("an unchanged function is a top entry: %+v", e)
		}
	}
	if !near(d.Total.Delta, 20e6) || d.Functions != 4 || d.BaseEvents != 20 || d.CandEvents != 40 || d.BaseOps != 10 {
		t.Errorf("diff %+v", d)
	}
	// The profiles are left as they were.
	if base.Sample[0].Value[1] != 10*10e6 || len(base.Sample[0].Label) != 0 {
		t.Errorf("Compute changed the base profile: %+v", base.Sample[0])
	}
}

func TestComputePerOperation(t *testing.T) {
	// The same cost per operation over twice the operations is no difference.
	base := cpuBuilder().cpu(10, "w.step", "main").build(t)
	cand := cpuBuilder().cpu(20, "w.step", "main").cpu(4, "w.new", "main").build(t)
	d, err := Compute(CPU, base, cand, 5, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Top) != 1 || d.Top[0].Function != "w.new" || !near(d.Top[0].Flat.Delta, 4e6) {
		t.Errorf("top %+v, want only w.new at +4ms/op", d.Top)
	}
	if st := entry(t, d.TopCum, "main"); !near(st.Cum.Base, 20e6) || !near(st.Cum.Cand, 24e6) {
		t.Errorf("main %+v", st)
	}
}

func TestComputeInlinedAndRecursive(t *testing.T) {
	// leaf inlined into mid; rec calls itself.
	base := cpuBuilder().cpu(1, "w.leaf+w.mid", "w.rec", "w.rec", "main").build(t)
	cand := cpuBuilder().cpu(3, "w.leaf+w.mid", "w.rec", "w.rec", "main").build(t)
	d, err := Compute(CPU, base, cand, 1, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if d.Top[0].Function != "w.leaf" || len(d.Top) != 1 {
		t.Errorf("top %+v, want the inlined leaf alone", d.Top)
	}
	mid := entry(t, d.TopCum, "w.mid")
	rec := entry(t, d.TopCum, "w.rec")
	if !near(mid.Cum.Delta, 20e6) || mid.Flat.Delta != 0 {
		t.Errorf("mid %+v: the function an inlined one is in has it in its cum", mid)
	}
	if !near(rec.Cum.Delta, 20e6) {
		t.Errorf("rec cum %v: a recursive function counts a sample once", rec.Cum.Delta)
	}
}

// TestComputeIsDiffBase checks the difference against pprof's own steps for
// -diff_base: the base negated and merged, then every function's flat value summed from
// the merged profile.
func TestComputeIsDiffBase(t *testing.T) {
	mk := func(k int64) *profile.Profile {
		return cpuBuilder().cpu(2*k, "w.a", "w.b", "main").cpu(4, "w.b", "main").cpu(k, "w.c", "main").build(t)
	}
	base, cand := mk(1), mk(5)
	b := base.Copy()
	b.SetLabel("pprof::base", []string{"true"})
	b.Scale(-1)
	merged, err := profile.Merge([]*profile.Profile{cand.Copy(), b})
	if err != nil {
		t.Fatal(err)
	}
	flat := map[string]float64{}
	for _, s := range merged.Sample {
		flat[s.Location[0].Line[0].Function.Name] += float64(s.Value[1])
	}
	d, err := Compute(CPU, base, cand, 1, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Top {
		if !near(e.Flat.Delta, flat[e.Function]) {
			t.Errorf("%s: flat delta %v, pprof's merge says %v", e.Function, e.Flat.Delta, flat[e.Function])
		}
		delete(flat, e.Function)
	}
	for fn, v := range flat {
		if v != 0 {
			t.Errorf("%s: pprof's merge says %v, not among the top entries", fn, v)
		}
	}
}

func TestComputeAlloc(t *testing.T) {
	mk := func(bytes int64) *profile.Profile {
		return newBuilder("alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes").
			sample([]int64{1, bytes, 0, 0}, "w.grow", "main").
			sample([]int64{1, 64, 0, 0}, "w.keep", "main").build(t)
	}
	d, err := Compute(Alloc, mk(1024), mk(4096), 2, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if d.Unit != "B/op" || d.SampleType != "alloc_space/bytes" {
		t.Errorf("unit %s type %s", d.Unit, d.SampleType)
	}
	if len(d.Top) != 1 || d.Top[0].Function != "w.grow" || !near(d.Top[0].Flat.Delta, 1536) || d.Top[0].FlatNoise != 0 {
		t.Errorf("top %+v, want w.grow +1536 B/op with no sampling noise", d.Top)
	}
}

func TestComputeErrors(t *testing.T) {
	cpu := cpuBuilder().cpu(1, "main").build(t)
	for _, tc := range []struct {
		name       string
		kind       string
		base, cand *profile.Profile
		ops        int
		want       string
	}{
		{"kind", "heap", cpu, cpu, 1, "unknown profile kind"},
		{"ops", CPU, cpu, cpu, 0, "operations must be positive"},
		{"type", Alloc, cpu, cpu, 1, `no "alloc_space" samples (it has samples, cpu)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.kind, tc.base, tc.cand, tc.ops, 1, 5)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadAndReport(t *testing.T) {
	dir := t.TempDir()
	base := cpuBuilder().cpu(10, "example.com/w/w.step", "main").build(t)
	cand := cpuBuilder().cpu(31, "example.com/w/w.step", "main").build(t)
	for name, p := range map[string]*profile.Profile{"base.pprof": base, "cand.pprof": cand} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	b, err := Read(filepath.Join(dir, "base.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(filepath.Join(dir, "cand.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(filepath.Join(dir, "missing.pprof")); err == nil {
		t.Error("reading a missing profile: no error")
	}
	os.WriteFile(filepath.Join(dir, "bad.pprof"), []byte("not a profile"), 0o644)
	if _, err := Read(filepath.Join(dir, "bad.pprof")); err == nil || !strings.Contains(err.Error(), "bad.pprof") {
		t.Errorf("reading a bad profile: %v, want an error naming the file", err)
	}
	d, err := Compute(CPU, b, c, 10, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Summary(); !strings.HasPrefix(got, "+21.0ms/op in example.com/w/w.step (flat, 10.0ms/op -> 31.0ms/op, sampling ±") {
		t.Errorf("summary %q", got)
	}
	r := &Report{Selection: SelectReproduced, Base: "base", Lanes: []Lane{{Lane: "Step", Arm: "cand", Verdict: "reproduced-slower",
		Runs:  []Run{{Arm: "base", Kind: CPU, File: "profiles/base-Step.cpu.pprof"}, {Arm: "cand", Kind: CPU, File: "profiles/cand-Step.cpu.pprof"}},
		Diffs: []Diff{d}, Notes: []string{"no alloc difference: the lane wrote no profile"}}}}
	r.SchemaVersion = SchemaVersion
	if err := receipt.Folder(dir).WriteProfiles(r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(dir)
	if err != nil || got == nil || got.Lanes[0].Diffs[0].Top[0].Function != "example.com/w/w.step" || got.SchemaVersion != SchemaVersion {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if r, err := ReadReport(t.TempDir()); r != nil || err != nil {
		t.Errorf("a folder without profiles.json: %v, %v", r, err)
	}
	var term bytes.Buffer
	if err := Lines(&term, got, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Step (reproduced-slower), CPU time: 10.0ms/op -> 31.0ms/op in all (+21.0ms/op)\n",
		"  +21.0ms/op in example.com/w/w.step (flat, ", "Step: no alloc difference"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lines lack %q:\n%s", want, term.String())
		}
	}
	// A difference within twice its sampling error is not named as a finding.
	noisy := *got
	noisy.Lanes = slices.Clone(got.Lanes)
	nd := noisy.Lanes[0].Diffs[0]
	nd.Top = slices.Clone(nd.Top)
	for i := range nd.Top {
		nd.Top[i].FlatNoise = math.Abs(nd.Top[i].Flat.Delta)
	}
	noisy.Lanes[0].Diffs = []Diff{nd}
	term.Reset()
	if err := Lines(&term, &noisy, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "  the profile cannot tell at this sample size: no function's difference is beyond twice its sampling error\n") || strings.Contains(term.String(), " in example.com/w/w.step") {
		t.Errorf("within sampling error:\n%s", term.String())
	}
	var md bytes.Buffer
	if err := Markdown(&md, got, "### ", 5, func(rel string) string { return "data/" + rel }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Step, cand vs base (reproduced-slower)", "| `example.com/w/w.step`        | 10.0ms/op | 31.0ms/op | +21.0ms/op | 6.40ms/op  |", "(10 operations, 10 samples)",
		"[profiles/base-Step.cpu.pprof](data/profiles/base-Step.cpu.pprof)", "![Step: CPU time per operation by function, cand vs base](data/profile-cand-Step-cpu.svg)",
		"function (by cumulative difference)", "- no alloc difference"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestNames(t *testing.T) {
	if got := PlotName("cand", "Alloc/size=64", CPU); got != "profile-cand-Alloc_size_64-cpu.svg" {
		t.Errorf("plot name %s", got)
	}
	if got := ProfileName("base", "Get/n=1", Alloc); got != "base-Get_n_1.alloc.pprof" {
		t.Errorf("profile name %s", got)
	}
	for in, want := range map[string]string{"example.com/work/work.step": "work.step", "zombiezen.com/go/sqlite.(*Conn).Prep": "sqlite.(*Conn).Prep", "main.run": "main.run"} {
		if got := Short(in); got != want {
			t.Errorf("Short(%s) = %s, want %s", in, got, want)
		}
	}
	for fn, want := range map[string]bool{"runtime.gcDrain": true, "internal/runtime/atomic.(*Uint32).Load": true, "runtime/pprof.StartCPUProfile": true,
		"testing.(*B).runN": true, "zombiezen.com/go/sqlite.(*Conn).prepare": false, "main.main": false, "example.com/runtime.x": false} {
		if got := Machinery(fn); got != want {
			t.Errorf("Machinery(%s) = %t", fn, got)
		}
	}
	if !ValidSelection(SelectAll) || ValidSelection("some") {
		t.Error("ValidSelection")
	}
}

func TestComputeTopCode(t *testing.T) {
	// The collector's work differs most; the program's own prepare differs too.
	base := cpuBuilder().cpu(40, "runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker").cpu(8, "app.prepare", "app.loop").build(t)
	cand := cpuBuilder().cpu(10, "runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker").cpu(2, "app.prepare", "app.loop").build(t)
	d, err := Compute(CPU, base, cand, 1, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.TopCum[0].Function == "app.prepare" || d.TopCum[1].Function == "app.prepare" {
		t.Errorf("top cum %+v: the collector's should lead", d.TopCum)
	}
	if len(d.TopCode) != 2 || !strings.HasPrefix(d.TopCode[0].Function, "app.") || !near(d.TopCode[0].Cum.Delta, -60e6) {
		t.Errorf("top code %+v, want app.prepare and app.loop at -60ms/op", d.TopCode)
	}
	var md bytes.Buffer
	r := &Report{Base: "base", Lanes: []Lane{{Lane: "L", Arm: "cand", Diffs: []Diff{d}}}}
	if err := Markdown(&md, r, "### ", 2, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "function (by cumulative difference, the Go runtime and testing left out as `pprof -hide` does)") {
		t.Errorf("no table of the program's own functions:\n%s", md.String())
	}
}

func TestComputeRoundingIsZero(t *testing.T) {
	// The same stack in many samples of the base and few of the candidate: the sums
	// differ in the last bits, which is no difference.
	b, c := cpuBuilder(), cpuBuilder()
	for i := range 7 {
		b.cpu(1, "w.same", "w.a"+strings.Repeat("x", i), "main")
	}
	c.cpu(7, "w.same", "w.a", "main")
	d, err := Compute(CPU, b.build(t), c.build(t), 3, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Top {
		if e.Function == "w.same" {
			t.Errorf("an unchanged function is a top entry: %+v", e)
		}
	}
}
