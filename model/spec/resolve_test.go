package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
)

func ptr[T any](v T) *T { return &v }

// mustParse parses a testdata page, after edits (old, new, ...).
func mustParse(t *testing.T, name string, edits ...string) *Experiment {
	t.Helper()
	e, err := Parse(page, []byte(edit(t, readTestdata(t, name), edits...)))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestResolveProtocol(t *testing.T) {
	const proto = "protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}"
	tests := []struct {
		name  string
		page  string
		edits []string
		o     Overrides
		want  Protocol
	}{
		{
			name: "defaults only",
			page: "12-exec.md",
			want: Protocol{Samples: 21, Warmup: 5, Passes: 4, Collections: 2, Seed: 1, Timeout: Duration(10 * time.Minute)},
		},
		{
			name: "spec over defaults",
			page: "275-gotest.md",
			want: Protocol{Samples: 41, Warmup: 10, Passes: 12, Collections: 2, Seed: 275, Timeout: Duration(10 * time.Minute)},
		},
		{
			name: "profile over spec; fields the profile leaves out keep the spec's value",
			page: "275-gotest.md",
			o:    Overrides{Profile: "quick"},
			want: Protocol{Samples: 15, Warmup: 3, Passes: 4, Collections: 2, Seed: 275, Timeout: Duration(10 * time.Minute)},
		},
		{
			name: "flags over profile",
			page: "275-gotest.md",
			o: Overrides{Profile: "quick", Samples: ptr(7), Warmup: ptr(0), Passes: ptr(2), Collections: ptr(1),
				Seed: ptr(int64(99)), Timeout: ptr(time.Minute)},
			want: Protocol{Samples: 7, Warmup: 0, Passes: 2, Collections: 1, Seed: 99, Timeout: Duration(time.Minute)},
		},
		{
			name: "flags over spec, without a profile",
			page: "275-gotest.md",
			o:    Overrides{Passes: ptr(6)},
			want: Protocol{Samples: 41, Warmup: 10, Passes: 6, Collections: 2, Seed: 275, Timeout: Duration(10 * time.Minute)},
		},
		{
			name:  "zero written in the spec is kept, not defaulted",
			page:  "275-gotest.md",
			edits: []string{proto, "protocol: {warmup: 0, seed: 0}"},
			want:  Protocol{Samples: 21, Warmup: 0, Passes: 4, Collections: 2, Seed: 0, Timeout: Duration(10 * time.Minute)},
		},
		{
			name:  "zero written in a profile is kept",
			page:  "275-gotest.md",
			edits: []string{"{quick: {samples: 15, warmup: 3, passes: 4}}", "{quick: {warmup: 0}}"},
			o:     Overrides{Profile: "quick"},
			want:  Protocol{Samples: 41, Warmup: 0, Passes: 12, Collections: 2, Seed: 275, Timeout: Duration(10 * time.Minute)},
		},
		{
			name:  "harness timeout over the default, profile timeout over the harness",
			page:  "275-gotest.md",
			edits: []string{"ref: HEAD}\narms", "ref: HEAD, timeout: 3m}\narms", "passes: 4}}", "passes: 4, timeout: 30s}}"},
			o:     Overrides{Profile: "quick"},
			want:  Protocol{Samples: 15, Warmup: 3, Passes: 4, Collections: 2, Seed: 275, Timeout: Duration(30 * time.Second)},
		},
		{
			name:  "harness timeout alone",
			page:  "275-gotest.md",
			edits: []string{"ref: HEAD}\narms", "ref: HEAD, timeout: 3m}\narms"},
			want:  Protocol{Samples: 41, Warmup: 10, Passes: 12, Collections: 2, Seed: 275, Timeout: Duration(3 * time.Minute)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustParse(t, tt.page, tt.edits...)
			r, err := e.Resolve(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want.Layouts == 0 { // the default: several builds for a gotest harness
				want.Layouts = 1
				if e.Harness.Kind == "gotest" {
					want.Layouts = DefaultLayouts
				}
			}
			if diff := cmp.Diff(want, r.Protocol); diff != "" {
				t.Errorf("protocol (-want +got):\n%s", diff)
			}
			if r.Profile != tt.o.Profile {
				t.Errorf("profile = %q, want %q", r.Profile, tt.o.Profile)
			}
		})
	}
}

func TestResolveDefaultsDoNotMutate(t *testing.T) {
	e := mustParse(t, "12-exec.md")
	if _, err := e.Resolve(Overrides{}); err != nil {
		t.Fatal(err)
	}
	if e.Protocol != (Protocol{}) || e.Drift != (driftcheck.Config{}) || e.Lanes[0].Expect != "" || e.Lanes[0].Better != "" {
		t.Errorf("Resolve changed the experiment: %+v %+v %+v", e.Protocol, e.Drift, e.Lanes[0])
	}
}

func TestResolveDrift(t *testing.T) {
	e := mustParse(t, "12-exec.md")
	r, err := e.Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(driftcheck.DefaultConfig(), r.Drift); diff != "" {
		t.Errorf("default drift (-want +got):\n%s", diff)
	}
	e = mustParse(t, "12-exec.md", "lanes:", "drift: {clean-cv-pct: 5.5}\nlanes:")
	if r, err = e.Resolve(Overrides{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(driftcheck.Config{EffectFloorPct: 3, CleanCVPct: 5.5, CVAsymmetry: 4, Alpha: 0.05, Power: 0.8}, r.Drift); diff != "" {
		t.Errorf("spec drift (-want +got):\n%s", diff)
	}
}

func TestResolveLanes(t *testing.T) {
	e := mustParse(t, "275-gotest.md", "{name: Bulk4Cold, role: control}", "{name: Bulk4Cold, role: control, better: higher}")
	tests := []struct {
		name  string
		lanes string
		want  []Lane
	}{
		{name: "all, defaults filled in", want: []Lane{
			{Name: "PointUnderLoad", Line: 18, Role: RolePrimary, Expect: ExpectFaster, Better: BetterLower},
			{Name: "Bulk4Mixed", Line: 19, Role: RoleGuard, Better: BetterLower},
			{Name: "Bulk4Cold", Line: 20, Role: RoleControl, Better: BetterHigher},
		}},
		{name: "unanchored match keeps spec order", lanes: "Bulk", want: []Lane{
			{Name: "Bulk4Mixed", Line: 19, Role: RoleGuard, Better: BetterLower},
			{Name: "Bulk4Cold", Line: 20, Role: RoleControl, Better: BetterHigher},
		}},
		{name: "anchored alternatives", lanes: "^(Bulk4Cold|PointUnderLoad)$", want: []Lane{
			{Name: "PointUnderLoad", Line: 18, Role: RolePrimary, Expect: ExpectFaster, Better: BetterLower},
			{Name: "Bulk4Cold", Line: 20, Role: RoleControl, Better: BetterHigher},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := e.Resolve(Overrides{Lanes: tt.lanes})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.Lanes); diff != "" {
				t.Errorf("lanes (-want +got):\n%s", diff)
			}
		})
	}
	// A primary lane that gives no expectation expects faster.
	x := mustParse(t, "12-exec.md")
	r, err := x.Resolve(Overrides{Lanes: "^alpha$"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Lane{{Name: "alpha", Line: 11, Role: RolePrimary, Expect: ExpectFaster, Better: BetterLower}}; !cmp.Equal(want, r.Lanes) {
		t.Errorf("lanes = %+v, want %+v", r.Lanes, want)
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		page string
		o    Overrides
		want string
	}{
		{name: "odd passes", o: Overrides{Passes: ptr(3)}, want: "--passes 3: must be even"},
		{name: "one pass", o: Overrides{Passes: ptr(1)}, want: "--passes 1: must be at least 2"},
		{name: "zero samples", o: Overrides{Samples: ptr(0)}, want: "--samples 0: must be at least 1"},
		{name: "negative warmup", o: Overrides{Warmup: ptr(-2)}, want: "--warmup -2: must not be negative"},
		{name: "zero collections", o: Overrides{Collections: ptr(0)}, want: "--collections 0: must be at least 1"},
		{name: "zero timeout", o: Overrides{Timeout: ptr(time.Duration(0))}, want: "--timeout 0s: must be positive"},
		{name: "passes beyond int32", o: Overrides{Passes: ptr(2147483648), Collections: ptr(2147483648)},
			want: "--passes 2147483648: must be at most 1000\n--collections 2147483648: must be at most 100"},
		{name: "samples that would overflow the count", o: Overrides{Samples: ptr(9000000000000000000), Warmup: ptr(9000000000000000000)},
			want: "--samples 9000000000000000000: must be at most 100000\n--warmup 9000000000000000000: must be at most 100000"},
		{name: "timeout beyond the bound", o: Overrides{Timeout: ptr(48 * time.Hour)}, want: "--timeout 48h0m0s: must be at most 24h0m0s"},
		{name: "too many runs", o: Overrides{Passes: ptr(1000), Collections: ptr(100)},
			want: "--passes 1000: makes 900000 runs (100 collections x 1000 passes x 3 lanes x 3 arms), more than the limit of 100000; use fewer passes, collections or lanes"},
		{name: "unknown profile", o: Overrides{Profile: "quick2"}, want: "--profile quick2: unknown profile; the spec has: quick"},
		{name: "unknown profile, none in the spec", page: "12-exec.md", o: Overrides{Profile: "quick"},
			want: "--profile quick: unknown profile; the spec has none"},
		{name: "lanes: invalid regexp", o: Overrides{Lanes: "Bulk("},
			want: "--lanes \"Bulk(\": invalid regular expression: missing closing ): `Bulk(`"},
		{name: "lanes: selects none", o: Overrides{Lanes: "^Point$"},
			want: `--lanes "^Point$": selects no lane; the spec has: PointUnderLoad, Bulk4Mixed, Bulk4Cold`},
		{name: "several flags at once", o: Overrides{Samples: ptr(0), Passes: ptr(5), Lanes: "zzz"},
			want: "--samples 0: must be at least 1\n--passes 5: must be even\n" +
				`--lanes "zzz": selects no lane; the spec has: PointUnderLoad, Bulk4Mixed, Bulk4Cold`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.page
			if name == "" {
				name = "275-gotest.md"
			}
			e := mustParse(t, name)
			_, err := e.Resolve(tt.o)
			if err == nil {
				t.Fatalf("Resolve succeeded, want %s", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

// An Experiment built in Go, not validated, still gets spec-located errors from Resolve.
func TestResolveUnvalidatedSpec(t *testing.T) {
	e := &Experiment{
		Path:     "x.md",
		Protocol: Protocol{Passes: 5},
		Lanes:    []Lane{{Name: "a", Role: RolePrimary}},
	}
	_, err := e.Resolve(Overrides{})
	if want := "x.md: protocol.passes: must be even"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if _, err := e.Resolve(Overrides{Passes: ptr(8)}); err != nil {
		t.Errorf("a flag that fixes the spec: %v", err)
	}
}

func TestValidateBuiltInGo(t *testing.T) {
	e := &Experiment{
		Path: "x.md", ID: 1, Title: "t", Date: "2026-01-01", Status: StatusPlanned, Category: CategoryCleanup,
		Harness: Harness{Kind: lanekind.Exec, Command: []string{"{bin}"}},
		Arms:    []Arm{{Name: "base", Bin: "b"}, {Name: "cand", Line: 9, Bin: "c", Patch: "p"}},
		Lanes:   []Lane{{Name: "a", Role: RolePrimary}},
	}
	err := e.Validate()
	if want := "x.md:9: arms.cand.patch: only for git arms (with ref)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if n := len(Errors(err)); n != 1 {
		t.Errorf("Errors() found %d, want 1", n)
	}
	e.Arms[1].Patch = ""
	if err := e.Validate(); err != nil {
		t.Errorf("valid experiment: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	p := DefaultProtocol()
	if p.Samples != 21 || p.Warmup != 5 || p.Passes != 4 || p.Collections != 2 || p.Seed != 1 ||
		time.Duration(p.Timeout) != 10*time.Minute {
		t.Errorf("DefaultProtocol() = %+v", p)
	}
	// The defaults must themselves be valid (layouts 0 is the default's "by the harness
	// kind", which Resolve fills, not a written 0).
	var msgs []string
	checkProtocol(p, func(name string) bool { return name != "layouts" }, func(name, msg string) { msgs = append(msgs, name+": "+msg) })
	if len(msgs) > 0 {
		t.Errorf("default protocol is invalid: %s", strings.Join(msgs, "; "))
	}
}

func TestResolveFullProfile(t *testing.T) {
	e := &Experiment{Path: "x.md", Protocol: Protocol{Passes: 6}, Profiles: map[string]Protocol{"quick": {Passes: 2}},
		Lanes: []Lane{{Name: "a", Role: RolePrimary}}}
	r, err := e.Resolve(Overrides{Profile: FullProfile})
	if err != nil || r.Profile != "" || r.Protocol.Passes != 6 {
		t.Fatalf("--profile full: %+v, %v; want the spec's own protocol (6 passes), no profile", r, err)
	}
	// A spec that defines "full" gets its own profile.
	e.Profiles[FullProfile] = Protocol{Passes: 10}
	if r, err := e.Resolve(Overrides{Profile: FullProfile}); err != nil || r.Profile != FullProfile || r.Protocol.Passes != 10 {
		t.Fatalf("--profile full with a full profile: %+v, %v", r, err)
	}
}

// TestResolveSequential checks the stopping rule's layers: defaults, the spec, a profile
// and the flags, and the passes it sets.
func TestResolveSequential(t *testing.T) {
	e := mustParse(t, "275-gotest.md",
		"protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}",
		"protocol: {samples: 41, warmup: 10, collections: 2, seed: 275, sequential: {max-pairs: 10, budget: 12m}}",
		"profiles: {quick: {samples: 15, warmup: 3, passes: 4}}",
		"profiles: {quick: {samples: 15, warmup: 3, sequential: {max-pairs: 4}}}")
	tests := []struct {
		name string
		o    Overrides
		want *Sequential
		err  string
	}{
		{name: "the spec's rule", want: &Sequential{MinPairs: 2, MaxPairs: 10, Budget: Duration(12 * time.Minute)}},
		{name: "a profile overrides max-pairs only", o: Overrides{Profile: "quick"}, want: &Sequential{MinPairs: 2, MaxPairs: 4, Budget: Duration(12 * time.Minute)}},
		{name: "flags", o: Overrides{MaxPairs: ptr(6), Budget: ptr(time.Minute)}, want: &Sequential{MinPairs: 2, MaxPairs: 6, Budget: Duration(time.Minute)}},
		{name: "--passes with a sequential rule", o: Overrides{Passes: ptr(4)}, err: "--passes: a sequential run sets its passes from max-pairs; give --max-pairs instead"},
		{name: "--max-pairs zero", o: Overrides{MaxPairs: ptr(0)}, err: "--max-pairs: must be between 1 and 500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.Resolve(tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Protocol.Sequential); diff != "" {
				t.Errorf("sequential (-want +got):\n%s", diff)
			}
			if r.Protocol.Passes != 2*tc.want.MaxPairs || r.Drift.Looks() != tc.want.MaxPairs-tc.want.MinPairs+1 || r.Drift.MinPairs != tc.want.MinPairs {
				t.Errorf("passes %d, looks %d", r.Protocol.Passes, r.Drift.Looks())
			}
		})
	}
	// --until-decided on a page without a rule takes the defaults.
	plain := mustParse(t, "275-gotest.md")
	r, err := plain.Resolve(Overrides{UntilDecided: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Protocol.Sequential; s == nil || *s != (Sequential{MinPairs: 2, MaxPairs: 20, Budget: Duration(15 * time.Minute)}) || r.Protocol.Passes != 40 {
		t.Errorf("defaults: %+v, passes %d", s, r.Protocol.Passes)
	}
}

// A lane's metric comes from the lane, else the harness; counting lanes get the count's
// unit.
func TestResolveMetric(t *testing.T) {
	e := &Experiment{Path: "x.md",
		Harness: Harness{Kind: lanekind.Gotest, Package: "p", Metric: lanekind.MetricInstructions},
		Lanes: []Lane{{Name: "a", Role: RolePrimary}, {Name: "b", Role: RoleGuard, Metric: lanekind.MetricWall},
			{Name: "c", Role: RoleGuard, Metric: lanekind.MetricInstructions}}}
	r, err := e.Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range r.Lanes {
		got = append(got, l.Name+":"+l.Metric+":"+l.Unit)
	}
	if want := "a:instructions:instructions/op b:: c:instructions:instructions/op"; strings.Join(got, " ") != want {
		t.Errorf("lanes %s, want %s", strings.Join(got, " "), want)
	}
	e.Harness.Metric = ""
	r, _ = e.Resolve(Overrides{})
	if r.Lanes[0].Metric != "" || r.Lanes[2].Metric != lanekind.MetricInstructions {
		t.Errorf("without harness.metric: %+v", r.Lanes)
	}
}

// protocol.cpus pins lanes; a profile or --cpus replaces the list, and "all" unpins.
func TestResolveCPUs(t *testing.T) {
	e := mustParse(t, "275-gotest.md",
		"protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}",
		`protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275, cpus: "1,0"}`,
		"profiles: {quick: {samples: 15, warmup: 3, passes: 4}}",
		"profiles: {quick: {samples: 15, warmup: 3, passes: 4}, spread: {cpus: all}}")
	tests := []struct {
		name string
		o    Overrides
		want []int
		err  string
	}{
		{name: "the spec's list", want: []int{0, 1}},
		{name: "a profile that keeps it", o: Overrides{Profile: "quick"}, want: []int{0, 1}},
		{name: "a profile that unpins", o: Overrides{Profile: "spread"}},
		{name: "--cpus", o: Overrides{CPUs: ptr("0")}, want: []int{0}},
		{name: "--cpus all", o: Overrides{CPUs: ptr("all")}},
		{name: "--cpus bad", o: Overrides{CPUs: ptr("0-x")}, err: `--cpus 0-x: "0-x" is not a CPU number or range`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.Resolve(tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Protocol.CPUList()); diff != "" {
				t.Errorf("cpus (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Parse(page, []byte(edit(t, readTestdata(t, "275-gotest.md"),
		"protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}",
		`protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275, cpus: "2-1"}`))); err == nil ||
		!strings.Contains(err.Error(), `protocol.cpus: CPU range "2-1" runs backwards, or "all"`) {
		t.Errorf("a backwards range: %v", err)
	}
}
