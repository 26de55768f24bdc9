// Package profdiff says where a reproduced change went: it compares the profiles of one
// extra process of each arm of a lane, written after the measured runs (CPU with
// -test.cpuprofile, allocations with -test.memprofile; see docs/profiles.md), function by
// function.
//
// The difference is the one `go tool pprof -diff_base=base.pprof cand.pprof` shows: the
// base profile's samples are negated, labelled as the diff base and merged with the
// candidate's (package github.com/google/pprof/profile), and each function is given its
// flat value (the samples whose innermost frame it is) and its cumulative value (the
// samples with it anywhere on the stack, once per sample), inlined frames counted as the
// functions they are. Unlike pprof, which compares whole profiles, each arm's samples are
// divided by the operations its process ran (Diff.BaseOps, Diff.CandOps), so two arms
// whose processes ran different numbers of operations compare per operation.
//
// A CPU profile is sampled (a Go process records a stack every 10ms of CPU time), so a
// function's difference carries sampling noise: Entry.FlatNoise is its standard error, from
// the samples behind it. An allocation profile recorded with a rate of 1 counts every
// allocation and has none.
//
// Report is the receipt's profiles.json: the profiled processes of each lane and the top
// entries of its differences. Markdown renders it for the receipt page and the experiment
// page, Lines for a terminal.
package profdiff

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Profile kinds: which profile a process wrote and a difference compares.
const (
	// CPU is a CPU profile, compared in CPU time per operation (ns/op).
	CPU = "cpu"
	// Alloc is an allocation profile, compared in bytes allocated per operation by
	// allocation site (B/op): pprof's alloc_space.
	Alloc = "alloc"
)

// Kinds returns the profile kinds in the order they are shown.
func Kinds() []string { return []string{CPU, Alloc} }

// SampleType returns the sample type a difference of kind compares ("cpu" in
// nanoseconds, "alloc_space" in bytes) and the unit of its per-operation values.
func SampleType(kind string) (typ, unit string, err error) {
	switch kind {
	case CPU:
		return "cpu", "ns/op", nil
	case Alloc:
		return "alloc_space", "B/op", nil
	}
	return "", "", fmt.Errorf("unknown profile kind %q (known: %s)", kind, strings.Join(Kinds(), ", "))
}

// Values are one function's per-operation values in each arm and their difference.
type Values struct {
	Base  float64 `json:"base"`
	Cand  float64 `json:"cand"`
	Delta float64 `json:"delta"`
}

// Entry is one function of a difference.
type Entry struct {
	// Function is the function's name as the profile has it
	// ("example.com/work/work.step").
	Function string `json:"function"`
	// Flat and Cum are its flat and cumulative values per operation.
	Flat Values `json:"flat"`
	Cum  Values `json:"cum"`
	// FlatNoise is the standard error of Flat.Delta from sampling (CPU profiles); 0 where
	// every event is recorded (allocation profiles at rate 1).
	FlatNoise float64 `json:"flat_noise"`
}

// Diff is the difference between one lane's base and candidate profiles of one kind.
type Diff struct {
	// Kind is CPU or Alloc; SampleType the profile's sample type compared
	// ("cpu/nanoseconds"); Unit the unit of every value ("ns/op", "B/op").
	Kind       string `json:"kind"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// BaseOps and CandOps are the operations each profiled process ran.
	BaseOps int `json:"base_ops"`
	CandOps int `json:"cand_ops"`
	// BaseEvents and CandEvents are the events each profile recorded: CPU samples (one
	// per 10ms of CPU time), or allocations.
	BaseEvents int64 `json:"base_events"`
	CandEvents int64 `json:"cand_events"`
	// Total is the whole profile per operation, in each arm.
	Total Values `json:"total"`
	// Functions is how many functions the difference has (Top holds the first of them).
	Functions int `json:"functions"`
	// Top are the functions with the largest flat differences, largest first (by
	// magnitude; a tie by cumulative difference, then name).
	Top []Entry `json:"top"`
	// TopCum are the functions with the largest cumulative differences, largest first.
	TopCum []Entry `json:"top_cum"`
	// TopCode are the same without the Go runtime's and the testing package's functions
	// (Machinery), as `pprof -hide` shows them: the program's own code, whose differences
	// a collector or scheduler difference would otherwise push off the list.
	TopCode []Entry `json:"top_code,omitempty"`
}

// Telling reports whether an entry's flat difference is beyond twice its sampling
// error, so that naming it says something about the code (an entry without a sampling
// error, an allocation profile's, always is).
func (e Entry) Telling() bool {
	return e.FlatNoise <= 0 || math.Abs(e.Flat.Delta) > 2*e.FlatNoise
}

// Read parses the profile in file (gzipped protocol buffer, as runtime/pprof writes it).
func Read(file string) (*profile.Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return p, nil
}

// Compute returns the difference of kind between base and cand, whose processes ran
// baseOps and candOps operations, with the top n entries by flat and by cumulative
// difference. The profiles are not changed.
func Compute(kind string, base, cand *profile.Profile, baseOps, candOps, n int) (Diff, error) {
	typ, unit, err := SampleType(kind)
	if err != nil {
		return Diff{}, err
	}
	if baseOps <= 0 || candOps <= 0 {
		return Diff{}, fmt.Errorf("operations must be positive (base %d, cand %d)", baseOps, candOps)
	}
	merged, vi, err := mergeDiff(typ, base, cand)
	if err != nil {
		return Diff{}, err
	}
	st := merged.SampleType[vi]
	d := Diff{Kind: kind, SampleType: st.Type + "/" + st.Unit, Unit: unit, BaseOps: baseOps, CandOps: candOps,
		BaseEvents: events(base, kind), CandEvents: events(cand, kind)}
	fns := accumulate(&d, merged, vi, kind, baseOps, candOps)
	var all []Entry
	for name, a := range fns {
		all = append(all, Entry{Function: name, Flat: a.flat, Cum: a.cum, FlatNoise: math.Sqrt(a.noiseB + a.noiseC)})
	}
	d.Functions = len(all)
	d.Top, d.TopCum, d.TopCode = rank(all, n)
	return d, nil
}

// mergeDiff merges cand with base negated and labelled pprof::base, as pprof -diff_base
// does, and returns the merged profile with the index of the sample type typ in it.
func mergeDiff(typ string, base, cand *profile.Profile) (*profile.Profile, int, error) {
	bi, err := valueIndex(base, typ)
	if err != nil {
		return nil, 0, fmt.Errorf("base profile: %w", err)
	}
	ci, err := valueIndex(cand, typ)
	if err != nil {
		return nil, 0, fmt.Errorf("candidate profile: %w", err)
	}
	b, c := base.Copy(), cand.Copy()
	for _, p := range []*profile.Profile{b, c} {
		p.Comments = nil
	}
	if bi != ci || len(b.SampleType) != len(c.SampleType) {
		if err := profile.CompatibilizeSampleTypes([]*profile.Profile{b, c}); err != nil {
			return nil, 0, fmt.Errorf("the profiles cannot be compared: %v", err)
		}
	}
	b.SetLabel("pprof::base", []string{"true"})
	b.Scale(-1)
	merged, err := profile.Merge([]*profile.Profile{c, b})
	if err != nil {
		return nil, 0, fmt.Errorf("merging the profiles: %v", err)
	}
	vi, err := valueIndex(merged, typ)
	if err != nil {
		return nil, 0, err
	}
	return merged, vi, nil
}

// funcCost is one function's share of a merged difference profile, per operation.
type funcCost struct {
	flat, cum      Values
	noiseB, noiseC float64 // the variance of flat's Base and Cand from sampling
}

// accumulate adds every sample of the merged profile, per operation of its arm, to d's
// total and to the flat cost of its leaf and the cumulative cost of each function on its
// stack (once per sample under recursion), and returns the functions' costs.
func accumulate(d *Diff, merged *profile.Profile, vi int, kind string, baseOps, candOps int) map[string]*funcCost {
	fns := map[string]*funcCost{}
	get := func(name string) *funcCost {
		a := fns[name]
		if a == nil {
			a = &funcCost{}
			fns[name] = a
		}
		return a
	}
	// In a sampled profile, a sample's value is the cost of its "samples" count of
	// events, each a Poisson draw: the variance of its cost is value²/count.
	si := -1
	if kind == CPU {
		si = slices.IndexFunc(merged.SampleType, func(t *profile.ValueType) bool { return t.Type == "samples" })
	}
	for _, s := range merged.Sample {
		isBase := s.DiffBaseSample()
		v := float64(s.Value[vi])
		if isBase {
			v = -v / float64(baseOps) // back to the base's own (positive) value
		} else {
			v /= float64(candOps)
		}
		add := func(x *Values) {
			if isBase {
				x.Base += v
				x.Delta -= v
			} else {
				x.Cand += v
				x.Delta += v
			}
		}
		add(&d.Total)
		frames := stack(s)
		if len(frames) == 0 {
			continue
		}
		leaf := get(frames[0])
		add(&leaf.flat)
		if si >= 0 {
			if k := math.Abs(float64(s.Value[si])); k > 0 {
				if isBase {
					leaf.noiseB += v * v / k
				} else {
					leaf.noiseC += v * v / k
				}
			}
		}
		seen := map[string]bool{}
		for _, f := range frames {
			if seen[f] {
				continue // recursion: once per sample
			}
			seen[f] = true
			add(&get(f).cum)
		}
	}
	return fns
}

// rank returns the n entries whose flat cost changed most, the n whose cumulative cost
// did, and the n of those outside the runtime and testing machinery, each leaving out
// entries that did not change.
func rank(all []Entry, n int) (top, topCum, topCode []Entry) {
	byFlat := slices.Clone(all)
	slices.SortFunc(byFlat, func(x, y Entry) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Flat.Delta), math.Abs(x.Flat.Delta)),
			cmp.Compare(math.Abs(y.Cum.Delta), math.Abs(x.Cum.Delta)), strings.Compare(x.Function, y.Function))
	})
	byCum := slices.Clone(all)
	slices.SortFunc(byCum, func(x, y Entry) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Cum.Delta), math.Abs(x.Cum.Delta)),
			cmp.Compare(math.Abs(y.Flat.Delta), math.Abs(x.Flat.Delta)), strings.Compare(x.Function, y.Function))
	})
	flat := func(e Entry) Values { return e.Flat }
	cum := func(e Entry) Values { return e.Cum }
	byFlat, byCum = nonZero(byFlat, flat), nonZero(byCum, cum)
	code := slices.DeleteFunc(slices.Clone(byCum), func(e Entry) bool { return Machinery(e.Function) })
	return byFlat[:min(n, len(byFlat))], byCum[:min(n, len(byCum))], code[:min(n, len(code))]
}

// Machinery reports whether fn belongs to the Go runtime (runtime, runtime/...,
// internal/runtime/...) or the testing package: the work around a program's own code.
func Machinery(fn string) bool {
	pkg := fn
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		if j := strings.Index(pkg[i:], "."); j >= 0 {
			pkg = pkg[:i+j]
		}
	} else if j := strings.Index(pkg, "."); j >= 0 {
		pkg = pkg[:j]
	}
	return pkg == "runtime" || pkg == "testing" || strings.HasPrefix(pkg, "runtime/") || strings.HasPrefix(pkg, "internal/runtime/")
}

// nonZero drops the entries whose difference is zero: a function both arms spent the
// same on says nothing about the difference. Each arm's value is a sum of its samples
// divided by its operations, in an order that differs between arms, so a difference
// within a billionth of the values is zero.
func nonZero(es []Entry, v func(Entry) Values) []Entry {
	out := []Entry{}
	for _, e := range es {
		x := v(e)
		if math.Abs(x.Delta) > 1e-9*math.Max(math.Abs(x.Base), math.Abs(x.Cand)) {
			out = append(out, e)
		}
	}
	return out
}

// stack returns the functions of a sample's stack, innermost first, inlined frames as
// their own functions (a location's lines are innermost first). A location without
// symbols is named by its address.
func stack(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			out = append(out, fmt.Sprintf("0x%x", loc.Address))
			continue
		}
		for _, l := range loc.Line {
			name := "?"
			if l.Function != nil && l.Function.Name != "" {
				name = l.Function.Name
			}
			out = append(out, name)
		}
	}
	return out
}

// valueIndex returns the index of sample type typ in p.
func valueIndex(p *profile.Profile, typ string) (int, error) {
	var have []string
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i, nil
		}
		have = append(have, st.Type)
	}
	return 0, fmt.Errorf("no %q samples (it has %s)", typ, strings.Join(have, ", "))
}

// events returns the events a profile of kind recorded: the sum of its "samples" (CPU)
// or "alloc_objects" (allocations) values; 0 when it has no such type.
func events(p *profile.Profile, kind string) int64 {
	typ := "samples"
	if kind == Alloc {
		typ = "alloc_objects"
	}
	i, err := valueIndex(p, typ)
	if err != nil {
		return 0
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[i]
	}
	return n
}
