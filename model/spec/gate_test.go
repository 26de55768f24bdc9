package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
)

// gatePath is the path every test gate spec is parsed under.
const gatePath = "experiments/gate.yaml"

// goodGate is a valid gate spec; its lines are
//
//	1 harness:
//	2   kind: exec
//	3   command: ["{bin}", "-lane", "{lane}", "-samples", "{samples}", "-warmup", "{warmup}"]
//	4   build: ["sh", "build.sh", "{out}"]
//	5 lanes:
//	6   - {name: alpha}
//	7   - {name: beta, role: guard}
//	8 protocol: {samples: 8, warmup: 0, passes: 4}
//	9 drift: {effect-floor-pct: 2}
//	10 threshold-pct: 8
const goodGate = `harness:
  kind: exec
  command: ["{bin}", "-lane", "{lane}", "-samples", "{samples}", "-warmup", "{warmup}"]
  build: ["sh", "build.sh", "{out}"]
lanes:
  - {name: alpha}
  - {name: beta, role: guard}
protocol: {samples: 8, warmup: 0, passes: 4}
drift: {effect-floor-pct: 2}
threshold-pct: 8
`

func TestParseGate(t *testing.T) {
	g, err := ParseGate(gatePath, []byte(goodGate))
	if err != nil {
		t.Fatal(err)
	}
	if g.Threshold() != 8 || len(g.Lanes) != 2 || g.Lanes[0].Role != "" || g.Lanes[0].Line != 6 {
		t.Fatalf("parsed %+v", g)
	}

	// The experiment the gate runs: two git arms, guard lanes, the gate's protocol over
	// its defaults, warmup: 0 kept as written.
	e := g.Experiment("abc123", "HEAD")
	if want := []Arm{{Name: BaseArm, Ref: "abc123"}, {Name: "cand", Ref: "HEAD"}}; !cmp.Equal(e.Arms, want) {
		t.Errorf("arms %+v, want %+v", e.Arms, want)
	}
	r, err := e.Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	wantProto := Protocol{Samples: 8, Warmup: 0, Passes: 4, Collections: 2, Seed: 1, Timeout: Duration(DefaultTimeout), Layouts: 1}
	if r.Protocol != wantProto {
		t.Errorf("protocol %+v, want %+v", r.Protocol, wantProto)
	}
	if r.Drift.EffectFloorPct != 2 || r.Drift.CleanCVPct != driftcheck.DefaultConfig().CleanCVPct {
		t.Errorf("drift %+v", r.Drift)
	}
	for _, l := range r.Lanes {
		if l.Role != RoleGuard || l.Better != BetterLower {
			t.Errorf("lane %+v: want role guard, better lower", l)
		}
	}
	if g.Lanes[0].Role != "" {
		t.Errorf("Experiment changed the gate's lanes")
	}

	// Left out: the gate's defaults.
	g, err = ParseGate(gatePath, []byte("harness: {kind: gotest, package: ./lanes/release, benchtime: 1x}\nlanes: [{name: ChatSim}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err = g.Experiment("a", "b").Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultGateProtocol()
	p.Timeout = Duration(DefaultTimeout)
	p.Passes = 2 * p.Sequential.MaxPairs
	p.Layouts = DefaultLayouts // a gotest harness
	if !cmp.Equal(r.Protocol, p) || g.Threshold() != DefaultGateThresholdPct {
		t.Errorf("protocol %+v, threshold %g; want %+v, %d", r.Protocol, g.Threshold(), p, DefaultGateThresholdPct)
	}
	// Flags still override it.
	two := 2
	if r, err = g.Experiment("a", "b").Resolve(Overrides{Samples: &two}); err != nil || r.Protocol.Samples != 2 {
		t.Errorf("--samples 2: %+v, %v", r.Protocol, err)
	}
}

// A gate spec goes through the page's decoder and rules: every problem is found before
// anything is built or measured, and names the file, line and field.
// A gate lane may set its own threshold; a page lane may not.
func TestLaneThresholds(t *testing.T) {
	g, err := ParseGate("experiments/gate.yaml", []byte(strings.Replace(goodGate, "{name: alpha}", "{name: alpha, threshold-pct: 0.5}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.LaneThresholds(); len(got) != 1 || got["alpha"] != 0.5 {
		t.Errorf("LaneThresholds() = %v, want alpha 0.5 only", got)
	}
	page := strings.Replace(readTestdata(t, "275-gotest.md"), "{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: guard, threshold-pct: 1}", 1)
	_, err = Parse("experiments/275-x.md", []byte(page))
	if want := "experiments/275-x.md:19: lanes[1].threshold-pct: only in the gate spec (experiments/gate.yaml)"; err == nil || err.Error() != want {
		t.Errorf("threshold-pct in a page: %v, want %s", err, want)
	}
}

func TestParseGateErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		edits []string // old, new pairs applied to goodGate
		src   string   // the whole file, when set
		want  string
	}{
		{name: "negative samples", edits: []string{"samples: 8", "samples: -3"},
			want: ":8: protocol.samples: must be at least 1"},
		{name: "odd passes", edits: []string{"passes: 4", "passes: 3"},
			want: ":8: protocol.passes: must be even"},
		{name: "negative effect floor", edits: []string{"effect-floor-pct: 2", "effect-floor-pct: -5"},
			want: ":9: drift.effect-floor-pct: must be positive"},
		{name: "duplicate lane", edits: []string{"{name: beta, role: guard}", "{name: alpha, role: guard}"},
			want: ":7: lanes[1].name: duplicate lane alpha (first at line 6)"},
		{name: "lane name with a space", edits: []string{"{name: alpha}", "{name: Fa st}"},
			want: `:6: lanes[0].name: invalid lane name "Fa st" (must match ^[A-Za-z0-9][A-Za-z0-9_./=:+-]*$)`},
		{name: "unknown placeholder", edits: []string{`"-samples", "{samples}"`, `"-samples", "{sample}"`},
			want: ":3: harness.command[4]: unknown placeholder {sample} (known: {bin}, {lane}, {bench}, {samples}, {warmup}, {count}, {arm}, {pass}, {collection})"},
		{name: "typo in a lane field", edits: []string{"role: guard}", "rol: guard}"},
			want: ":7: lanes[1].rol: unknown field (did you mean role?)"},
		{name: "typo in a top-level field", edits: []string{"threshold-pct: 8", "threshold: 8"},
			want: ":10: threshold: unknown field (did you mean threshold-pct?)"},
		{name: "arms are the gate's", edits: []string{"threshold-pct: 8", "arms: {base: {ref: main}}"},
			want: ":10: arms: unknown field (known: harness, protocol, drift, lanes, threshold-pct)"},
		{name: "a lane that is not a guard", edits: []string{"{name: alpha}", "{name: alpha, role: primary}"},
			want: `:6: lanes[0].role: the gate treats every lane as a guard; leave role out or write guard, got "primary"`},
		{name: "expect on a gate lane", edits: []string{"{name: alpha}", "{name: alpha, expect: faster}"},
			want: ":6: lanes[0].expect: only for primary and secondary lanes"},
		{name: "at-most on a gate lane", edits: []string{"{name: alpha}", "{name: alpha, at-most: {cold/op: 1}}"},
			want: ":6: lanes[0].at-most: not used by the gate (it gates on the lane's value); remove it"},
		{name: "nonzero on a gate lane", edits: []string{"{name: alpha}", "{name: alpha, nonzero: [reserved/op]}"},
			want: ":6: lanes[0].nonzero: not used by the gate (it warns about no metric); remove it"},
		{name: "zero lane threshold", edits: []string{"{name: alpha}", "{name: alpha, threshold-pct: 0}"},
			want: ":6: lanes[0].threshold-pct: must be a positive percentage up to 1000, got 0"},
		{name: "zero threshold", edits: []string{"threshold-pct: 8", "threshold-pct: 0"},
			want: ":10: threshold-pct: must be positive"},
		{name: "negative threshold", edits: []string{"threshold-pct: 8", "threshold-pct: -1"},
			want: ":10: threshold-pct: must be positive"},
		{name: "word for threshold", edits: []string{"threshold-pct: 8", "threshold-pct: five"},
			want: `:10: threshold-pct: must be a number, got "five"`},
		{name: "exec without build", edits: []string{`  build: ["sh", "build.sh", "{out}"]` + "\n", ""},
			want: `:1: harness.build: is required: the gate builds both arms from git, so an exec harness needs a build command (e.g. [go, build, -o, "{out}", ./cmd/lane])`},
		{name: "bad kind", edits: []string{"kind: exec", "kind: docker"},
			want: `:2: harness.kind: must be one of exec, gotest; got "docker"`},
		{name: "no lanes", edits: []string{"lanes:\n  - {name: alpha}\n  - {name: beta, role: guard}\n", ""},
			want: ":1: lanes: needs at least one lane"},
		{name: "gotest benchtime", src: "harness: {kind: gotest, package: ./x, benchtime: fast}\nlanes: [{name: A}]\n",
			want: `:1: harness.benchtime: must be a duration like 100ms or a count like 1000x; got "fast"`},
		{name: "syntax", src: "harness: [\n",
			want: ":2: invalid YAML: did not find expected node content"},
		{name: "empty", src: "# nothing\n",
			want: ":1: gate spec is empty"},
		{name: "a list", src: "- harness\n",
			want: ":1: gate spec must be a mapping of fields, got a list"},
		{name: "several problems, in line order", edits: []string{"samples: 8", "samples: -3", "{name: alpha}", "{name: Fa st}"},
			want: `:6: lanes[0].name: invalid lane name "Fa st" (must match ^[A-Za-z0-9][A-Za-z0-9_./=:+-]*$)` + "\n" +
				gatePath + ":8: protocol.samples: must be at least 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			if src == "" {
				src = edit(t, goodGate, tt.edits...)
			}
			g, err := ParseGate(gatePath, []byte(src))
			if err == nil {
				t.Fatalf("ParseGate succeeded, want %s", tt.want)
			}
			if g != nil {
				t.Errorf("ParseGate returned a gate with its error")
			}
			if got, want := err.Error(), gatePath+tt.want; got != want {
				t.Errorf("error:\n got: %s\nwant: %s", got, want)
			}
			for _, pe := range Errors(err) {
				if pe.File != gatePath || pe.Line < 1 {
					t.Errorf("error %q has file %q, line %d", pe, pe.File, pe.Line)
				}
			}
		})
	}
}

func TestGateFromPage(t *testing.T) {
	e, err := Parse(page, []byte(readTestdata(t, "275-gotest.md")))
	if err != nil {
		t.Fatal(err)
	}
	e.Protocol.Timeout = Duration(time.Minute)
	g, err := GateFromPage(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Lanes) != 1 || g.Lanes[0].Name != "Bulk4Mixed" || !cmp.Equal(g.Harness, e.Harness) || g.Drift != e.Drift {
		t.Fatalf("gate %+v", g)
	}
	r, err := g.Experiment("a", "b").Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	// The gate's short protocol, not the page's 41 samples x 12 passes; the page's run
	// timeout is kept.
	want := DefaultGateProtocol()
	want.Timeout = Duration(time.Minute)
	want.Passes = 2 * want.Sequential.MaxPairs
	want.Layouts = DefaultLayouts
	if !cmp.Equal(r.Protocol, want) {
		t.Errorf("protocol %+v, want %+v", r.Protocol, want)
	}

	src := strings.Replace(readTestdata(t, "275-gotest.md"), "{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: secondary}", 1)
	if e, err = Parse(page, []byte(src)); err != nil {
		t.Fatal(err)
	}
	_, err = GateFromPage(e)
	if want := page + ":17: lanes: no guard lanes to gate on (give a lane role: guard, or write a gate spec)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
