package lanekind

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustLookup(t *testing.T, name string) Kind {
	t.Helper()
	k, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLookup(t *testing.T) {
	for _, name := range Names() {
		if k := mustLookup(t, name); k.Name() != name {
			t.Errorf("Lookup(%q).Name() = %q", name, k.Name())
		}
	}
	if want := []string{Exec, Gotest}; !slices.Equal(Names(), want) {
		t.Errorf("Names() = %v, want %v", Names(), want)
	}
	_, err := Lookup("shell")
	if err == nil || err.Error() != `unknown harness kind "shell" (known: exec, gotest)` {
		t.Errorf("Lookup(shell) error = %v", err)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Harness
		gate bool
		want []Problem
	}{
		{"exec ok", Harness{Kind: Exec, Command: []string{"{bin}", "-lane", "{lane}"}}, false, nil},
		{"exec without command", Harness{Kind: Exec}, false, []Problem{{"command", "is required for kind exec"}}},
		{"exec without {bin}", Harness{Kind: Exec, Command: []string{"./x"}}, false, []Problem{{"command", "must contain {bin}"}}},
		{"exec unknown placeholder", Harness{Kind: Exec, Command: []string{"{bin}", "{lanes}"}}, false,
			[]Problem{{"command[1]", "unknown placeholder {lanes} (known: {bin}, {lane}, {bench}, {samples}, {warmup}, {count}, {arm}, {pass}, {collection})"}}},
		{"exec build without {out}", Harness{Kind: Exec, Command: []string{"{bin}"}, Build: []string{"make"}}, false, []Problem{{"build", "must contain {out}"}}},
		{"exec gate needs build", Harness{Kind: Exec, Command: []string{"{bin}"}}, true,
			[]Problem{{"build", `is required: the gate builds both arms from git, so an exec harness needs a build command (e.g. [go, build, -o, "{out}", ./cmd/lane])`}}},
		{"exec benchtime", Harness{Kind: Exec, Command: []string{"{bin}"}, Benchtime: "1x"}, false, []Problem{{"benchtime", "only for kind gotest"}}},
		{"gotest ok", Harness{Kind: Gotest, Package: "./lanes/x", Benchtime: "100ms"}, true, nil},
		{"gotest without package", Harness{Kind: Gotest}, false, []Problem{{"package", "is required for kind gotest"}}},
		{"gotest with command and build", Harness{Kind: Gotest, Package: "p", Command: []string{"{bin}"}, Build: []string{"{out}"}}, false,
			[]Problem{{"command", "only for kind exec"}, {"build", "only for kind exec"}}},
		{"gotest bad benchtime", Harness{Kind: Gotest, Package: "p", Benchtime: "0x"}, false,
			[]Problem{{"benchtime", `must be a duration like 100ms or a count like 1000x; got "0x"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustLookup(t, tc.h.Kind).Check(tc.h, tc.gate)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildAndCommand(t *testing.T) {
	gotest := mustLookup(t, Gotest)
	b, p := gotest.Build(Harness{Kind: Gotest, Package: "./lanes/release"})
	if p != nil || b.Bin != "release.test" || !b.NeedsGo || !b.TestsOnly || !b.Testdata || b.Template[0] != "go" {
		t.Errorf("gotest Build = %+v, %v", b, p)
	}
	if b, _ := gotest.Build(Harness{Kind: Gotest, Package: "."}); b.Bin != "harness.test" {
		t.Errorf("gotest Build of . names the binary %s, want harness.test", b.Bin)
	}
	if got, want := strings.Join(gotest.Command(Harness{}), " "), "{bin} -test.run ^$ -test.bench {bench} -test.benchtime 1x -test.count {count} -test.benchmem"; got != want {
		t.Errorf("gotest Command = %s, want %s", got, want)
	}
	exec := mustLookup(t, Exec)
	if _, p := exec.Build(Harness{Kind: Exec}); p == nil || p.Field != "build" {
		t.Errorf("exec Build without a build command: problem %v, want one at build", p)
	}
	b, p = exec.Build(Harness{Kind: Exec, Build: []string{"cc", "-o", "{out}"}})
	if p != nil || b.Bin != "harness" || b.NeedsGo || b.TestsOnly || b.Testdata {
		t.Errorf("exec Build = %+v, %v", b, p)
	}
	if got := exec.Command(Harness{Command: []string{"{bin}", "x"}}); !slices.Equal(got, []string{"{bin}", "x"}) {
		t.Errorf("exec Command = %v", got)
	}
}

// TestBenchtime checks that a gotest command's benchtime is read from its flags (go
// test's 1s without one), and that an exec command has no b.N loop.
func TestBenchtime(t *testing.T) {
	gotest := mustLookup(t, Gotest)
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{gotest.Command(Harness{}), DefaultBenchtime},
		{gotest.Command(Harness{Benchtime: "100ms"}), "100ms"},
		{[]string{"{bin}", "-benchtime", "5x"}, "5x"},
		{[]string{"{bin}", "-test.bench", "."}, "1s"},
	} {
		if got, ok := gotest.Benchtime(c.cmd); got != c.want || !ok {
			t.Errorf("gotest Benchtime(%v) = %q, %v, want %q, true", c.cmd, got, ok, c.want)
		}
	}
	if got, ok := mustLookup(t, Exec).Benchtime([]string{"{bin}", "-test.benchtime", "1x"}); ok {
		t.Errorf("exec Benchtime = %q, true, want false (no b.N loop)", got)
	}
}

func TestListing(t *testing.T) {
	gotest := mustLookup(t, Gotest)
	if got := gotest.ListArgs("/b/x.test"); !slices.Equal(got, []string{"/b/x.test", "-test.list", "^Benchmark"}) {
		t.Errorf("gotest ListArgs = %v", got)
	}
	listed := gotest.Lanes([]byte("BenchmarkWork\nBenchmarkGet\nTestNot\nBenchmark\n  BenchmarkPad  \n"))
	if want := []string{"Work", "Get", "Pad"}; !slices.Equal(listed, want) {
		t.Errorf("gotest Lanes = %v, want %v", listed, want)
	}
	for lane, want := range map[string]bool{"Work": true, "Get/size=10": true, "Wor": false, "Put/x": false} {
		if got := gotest.Offers(listed, lane); got != want {
			t.Errorf("gotest Offers(%s) = %v, want %v", lane, got, want)
		}
	}
	if got := mustLookup(t, Exec).ListArgs(""); got != nil {
		t.Errorf("exec ListArgs = %v, want nil (no listing)", got)
	}
}

func TestCollect(t *testing.T) {
	r := Run{Lane: "A", Argv: []string{"x"}, Env: []string{"K=V"}, Samples: 2, Warmup: 1}
	out := []Output{{Stdout: []byte("BenchmarkA 1 500 ns/op\nBenchmarkA 1 90 ns/op\nBenchmarkA 1 95 ns/op\n")}}
	s, err := mustLookup(t, Gotest).Collect(r, out)
	if err != nil || !slices.Equal(s.Values, []float64{90, 95}) {
		t.Errorf("gotest Collect = %+v, %v; want the warmup line dropped", s, err)
	}
	if _, err := mustLookup(t, Exec).Collect(r, out); err == nil || err.Error() != "printed 3 results, want 2" {
		t.Errorf("exec Collect error = %v; an exec lane prints no warmup lines", err)
	}
	for _, k := range Kinds() {
		if ps := k.Prepare(r); len(ps) != 1 || !slices.Equal(ps[0].Argv, r.Argv) || !slices.Equal(ps[0].Env, r.Env) {
			t.Errorf("%s Prepare = %+v, want the run's command as it is", k.Name(), ps)
		}
	}
}

func TestBenchPattern(t *testing.T) {
	for _, tc := range []struct {
		lane, want  string
		runs, skips []string
	}{
		{"Get", "^BenchmarkGet$", []string{"BenchmarkGet"}, []string{"BenchmarkGetAll", "BenchmarkXGet"}},
		{"Sub/small", "^BenchmarkSub$/^small$", []string{"BenchmarkSub/small"}, []string{"BenchmarkSubG/small", "BenchmarkSub/smaller"}},
		{"Get/a.b=1", `^BenchmarkGet$/^a\.b=1$`, []string{"BenchmarkGet/a.b=1"}, []string{"BenchmarkGet/axb=1"}},
	} {
		t.Run(tc.lane, func(t *testing.T) {
			got := BenchPattern(tc.lane)
			if got != tc.want {
				t.Fatalf("BenchPattern(%q) = %q, want %q", tc.lane, got, tc.want)
			}
			// Match as go test does: level by level, each unanchored.
			levels := strings.Split(got, "/")
			match := func(name string) bool {
				parts := strings.Split(name, "/")
				for i, p := range parts {
					if i < len(levels) && !regexp.MustCompile(levels[i]).MatchString(p) {
						return false
					}
				}
				return true
			}
			for _, n := range tc.runs {
				if !match(n) {
					t.Errorf("%s does not select %s", got, n)
				}
			}
			for _, n := range tc.skips {
				if match(n) {
					t.Errorf("%s also selects %s", got, n)
				}
			}
		})
	}
}
