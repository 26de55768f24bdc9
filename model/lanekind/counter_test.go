package lanekind

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/model/receipt"
)

// testPart is one dump to write: its trigger ("" for the process's end), its Ir, and the
// calls that show waiting, and what the monitor thread and the scavenger ran.
type testPart struct {
	trigger          string
	ir, sysmon, scav int
	idle, maxprocs   int
}

// writeProfile writes parts as callgrind would with --dump-before and
// --compress-strings=no: callgrind.out.1, .2, ... and callgrind.out for the last.
func writeProfile(t *testing.T, dir string, parts []testPart) {
	t.Helper()
	for i, p := range parts {
		var b strings.Builder
		fmt.Fprintf(&b, "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 42\npart: %d\n\n", i+1)
		if p.trigger == "" {
			b.WriteString("desc: Trigger: Program termination\n")
		} else {
			fmt.Fprintf(&b, "desc: Trigger: --dump-before=%s\n", p.trigger)
		}
		fmt.Fprintf(&b, "\npositions: line\nevents: Ir\nsummary: %d\n\n\nob=/x.test\nfl=/src/x.go\n", p.ir+p.sysmon+p.scav)
		fmt.Fprintf(&b, "fn=main.work\n0 %d\n", p.ir)
		if p.idle > 0 {
			fmt.Fprintf(&b, "fn=runtime.findRunnable\ncfn=runtime.pidleput\ncalls=%d 0\n0 0\n", p.idle)
		}
		if p.maxprocs > 0 {
			fmt.Fprintf(&b, "fn=runtime.GOMAXPROCS\ncfn=runtime.stopTheWorldGC\ncalls=%d 0\n0 0\n", p.maxprocs)
			fmt.Fprintf(&b, "fn=runtime.GC\ncfn=runtime.gcStart\ncalls=%d 0\n0 0\n", p.maxprocs)
		}
		if p.sysmon > 0 {
			fmt.Fprintf(&b, "fn=runtime.sysmon'2\n0 %d\ncfn=runtime.usleep\ncalls=3 0\n0 %d\n", p.sysmon/2, p.sysmon-p.sysmon/2)
		}
		if p.scav > 0 {
			fmt.Fprintf(&b, "fn=runtime.bgscavenge\n0 %d\ncfn=runtime.(*scavengerState).run\ncalls=2 0\n0 %d\n", p.scav/3, p.scav-p.scav/3)
		}
		name := profileBase
		if i < len(parts)-1 {
			name = fmt.Sprintf("%s.%d", profileBase, i+1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gotestCounter counts lane Work with benchtime 3x.
func gotestCounter() receipt.Counter {
	return receipt.Counter{Tool: CounterTool, End: runCleanup, Frame: 1, Iterations: 3}
}

func TestReadProfile(t *testing.T) {
	dir := t.TempDir()
	// More than nine parts, so that .10 must sort after .9.
	var parts []testPart
	for i := range 11 {
		parts = append(parts, testPart{trigger: "x.BenchmarkWork", ir: i + 1, sysmon: 7 * i, scav: 100 * (i % 4), idle: i % 2, maxprocs: i % 3})
	}
	parts = append(parts, testPart{ir: 99})
	writeProfile(t, dir, parts)
	prof, err := readProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if prof.creator != "callgrind-3.19.0" || len(prof.parts) != 12 {
		t.Fatalf("creator %q, %d parts", prof.creator, len(prof.parts))
	}
	for i, p := range prof.parts[:11] {
		want := part{trigger: "x.BenchmarkWork", ir: float64(i + 1), idle: i % 2, maxprocs: i % 3, gcs: i % 3}
		if p != want {
			t.Errorf("part %d = %+v, want %+v (the monitor's and the scavenger's instructions left out)", i+1, p, want)
		}
	}
	if last := prof.parts[11]; last.trigger != "" || last.ir != 99 {
		t.Errorf("last part = %+v", last)
	}
	if _, err := readProfile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "callgrind wrote no profile") {
		t.Errorf("empty folder: %v", err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, profileBase), []byte("hello\n"), 0o644)
	if _, err := readProfile(bad); err == nil || !strings.Contains(err.Error(), "not a callgrind profile") {
		t.Errorf("not a profile: %v", err)
	}
}

func TestMatchFunction(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*.BenchmarkWork", "github.com/x/lanes.BenchmarkWork", true},
		{"*.BenchmarkWork", "github.com/x/lanes.BenchmarkWork'2", true},
		{"*.BenchmarkWork", "github.com/x/lanes.BenchmarkWorkHard", false},
		{"*.BenchmarkWork", "github.com/x/lanes.BenchmarkWork.func1", false},
		{runCleanup, "testing.(*common).runCleanup", true},
		{"main.op?", "main.opA", true},
		{"main.op?", "main.op", false},
	} {
		if got := matchFunction(tc.pattern, tc.name); got != tc.want {
			t.Errorf("matchFunction(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestMeasuredCalls(t *testing.T) {
	const c = "testing.(*common).runCleanup"
	// A gotest lane: calls run from one cleanup to the next; the first cleanup (the
	// tests') and the last (the top-level benchmark's) end no call.
	parts := []part{
		{trigger: c, ir: 500},               // start-up
		{trigger: c, ir: 1000, idle: 1},     // call 1
		{trigger: c, ir: 2000},              // call 2
		{trigger: c, ir: 3000, maxprocs: 1}, // call 3
		{trigger: c, ir: 5},                 // the top-level benchmark's cleanup
		{ir: 77},                            // the end of the process
	}
	got, err := measuredCalls(parts, gotestCounter())
	if err != nil {
		t.Fatal(err)
	}
	want := []call{{ir: 1000, idle: 1}, {ir: 2000}, {ir: 3000, maxprocs: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("gotest (-want +got):\n%s", diff)
	}
	if got, _ := measuredCalls(parts[:2], gotestCounter()); len(got) != 0 {
		t.Errorf("two cleanups: %d calls, want none", len(got))
	}

	// An exec lane: calls run from an entry of op-start to the next of op-end; a second
	// entry of op-start inside a call (a restart after growing the stack) changes
	// nothing, and an op-end outside a call ends nothing.
	ex := receipt.Counter{Tool: CounterTool, Start: "main.opStart", End: "main.opEnd", Iterations: 1}
	parts = []part{
		{trigger: "main.opEnd", ir: 40},    // outside
		{trigger: "main.opStart", ir: 700}, // outside: start-up
		{trigger: "main.opStart", ir: 10},  // restarted
		{trigger: "main.opEnd", ir: 1000},  // call 1
		{trigger: "main.opStart", ir: 300}, // outside: printing
		{trigger: "main.opEnd", ir: 2000},  // call 2
		{ir: 77},
	}
	got, err = measuredCalls(parts, ex)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]call{{ir: 1010}, {ir: 2000}}, got, cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("exec (-want +got):\n%s", diff)
	}
	_, err = measuredCalls([]part{{trigger: "main.opStart", ir: 1}, {ir: 5}}, ex)
	if err == nil || !strings.Contains(err.Error(), "the process ended inside a measured call") {
		t.Errorf("unterminated call: %v", err)
	}
}

func TestPerOperation(t *testing.T) {
	calls := func(irs ...float64) []call {
		var cs []call
		for _, ir := range irs {
			cs = append(cs, call{ir: ir})
		}
		return cs
	}
	for _, tc := range []struct {
		name       string
		calls      []call
		iterations int
		warmup     int
		samples    int
		want       []float64
		wantErr    string
	}{
		{"b.N loop: difference of the two calls", calls(900, 2900, 110, 2110, 100, 2104), 3, 1, 2, []float64{1000, 1002}, ""},
		{"one call per repetition (1x)", calls(900, 500, 510), 1, 1, 2, []float64{500, 510}, ""},
		{"one call per repetition (b.Loop)", calls(900, 3000, 3030), 3, 1, 2, []float64{1000, 1010}, ""},
		{"wrong count", calls(1, 2, 3, 4, 5), 3, 1, 2, nil, "callgrind saw 5 measured calls (to testing.(*common).runCleanup), want 6 (b.N=1 then b.N=3, per repetition) or 3 (b.Loop)"},
		{"wrong count, one op per call", calls(1, 2), 1, 1, 2, nil, "callgrind saw 2 measured calls (to testing.(*common).runCleanup), want 3 (one per operation)"},
		{"work does not grow with b.N", calls(1, 2, 500, 400), 3, 1, 1, nil, "sample 1: the call with b.N=3 counted 400 instructions, the one with b.N=1 500: the work does not grow with b.N"},
		{"nothing counted", calls(5, 0), 1, 1, 1, nil, "sample 1: no instructions counted (to testing.(*common).runCleanup)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gotestCounter()
			c.Iterations = tc.iterations
			got, measured, err := perOperation(tc.calls, c, tc.warmup, tc.samples)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || len(measured) != tc.samples || measured[0].ops < 1 {
				t.Errorf("got %v (%d measured calls), want %v", got, len(measured), tc.want)
			}
		})
	}
}

func TestRefuseWaiting(t *testing.T) {
	if err := refuseWaiting([]call{{ir: 1}, {ir: 1, maxprocs: 1}}, []call{{ir: 1, ops: 1}}); err == nil ||
		!strings.HasPrefix(err.Error(), "instructions do not measure waiting: the lane changes GOMAXPROCS") {
		t.Errorf("GOMAXPROCS raised in a warmup call: %v", err)
	}
	idle := []call{{idle: 20, ir: 1e5, ops: 10}, {idle: 0, ir: 1e5, ops: 10}, {idle: 12, ir: 1e5, ops: 10}, {idle: 1, ir: 1e5, ops: 10}}
	err := refuseWaiting(idle, idle)
	if want := "instructions do not measure waiting: the process had nothing to run at least once per operation (and per million instructions) in 2 of 4 samples (0.82 times per operation), so the lane waits on a timer, I/O or another thread; measure it by wall time (metric: wall)"; err == nil || err.Error() != want {
		t.Errorf("idle in half the samples: %v", err)
	}
	// Idle once per call of ten operations, in one sample of four, once per garbage
	// collection, or a few times in many million instructions: not waiting.
	for _, cs := range [][]call{{{idle: 1, ops: 10}, {idle: 1, ops: 10}}, {{idle: 3, ops: 1}, {ops: 1}, {ops: 1}, {ops: 1}},
		{{idle: 1, gcs: 1, ops: 1}, {idle: 1, gcs: 1, ops: 1}}, {{idle: 3, ir: 9e6, ops: 1}, {idle: 3, ir: 9e6, ops: 1}}} {
		if err := refuseWaiting(cs, cs); err != nil {
			t.Errorf("%+v: %v, want it accepted", cs, err)
		}
	}
}

func TestPinnedEnv(t *testing.T) {
	for _, tc := range []struct {
		arm, want []string
	}{
		{nil, []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off,memprofilerate=0", "GOGC=off"}},
		{[]string{"GODEBUG=madvdontneed=1", "GOGC=200", "X=1"}, []string{"GOMAXPROCS=1", "GODEBUG=madvdontneed=1,asyncpreemptoff=1,cpu.rdtscp=off,memprofilerate=0", "GOGC=200"}},
		{[]string{"GODEBUG=memprofilerate=1,x=2"}, []string{"GOMAXPROCS=1", "GODEBUG=memprofilerate=1,x=2,asyncpreemptoff=1,cpu.rdtscp=off", "GOGC=off"}},
		{[]string{"GODEBUG="}, []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off,memprofilerate=0", "GOGC=off"}},
	} {
		if got := PinnedEnv(tc.arm); !slices.Equal(got, tc.want) {
			t.Errorf("PinnedEnv(%v) = %v, want %v", tc.arm, got, tc.want)
		}
	}
}

func TestCountedPrepareAndCollect(t *testing.T) {
	k := Counted(mustLookup(t, Gotest), gotestCounter())
	dir := t.TempDir()
	r := Run{Lane: "Work", Argv: []string{"/b/x.test", "-test.count", "3"}, Env: []string{"A=1"}, Scratch: dir, Samples: 2, Warmup: 1, Unit: InstructionsUnit}
	procs := k.Prepare(r)
	if len(procs) != 2 || !slices.Equal(procs[0].Argv, r.Argv) {
		t.Fatalf("Prepare = %+v, want the native run first", procs)
	}
	wantEnv := []string{"A=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off,memprofilerate=0", "GOGC=off"}
	if !slices.Equal(procs[0].Env, wantEnv) || !slices.Equal(procs[1].Env, wantEnv) {
		t.Errorf("env %v / %v, want %v", procs[0].Env, procs[1].Env, wantEnv)
	}
	vg := strings.Join(procs[1].Argv, " ")
	wantVG := "valgrind --tool=callgrind -q --callgrind-out-file=" + filepath.Join(dir, profileBase) +
		" --dump-before=testing.(*common).runCleanup --compress-strings=no --compress-pos=no -- /b/x.test -test.count 3"
	if vg != wantVG {
		t.Errorf("counted command\n got  %s\n want %s", vg, wantVG)
	}

	parts := []testPart{{trigger: runCleanup, ir: 5000}}
	for _, ir := range []int{900, 2900, 110, 2110, 100, 2104} {
		parts = append(parts, testPart{trigger: runCleanup, ir: ir, sysmon: 55})
	}
	writeProfile(t, dir, append(parts, testPart{trigger: runCleanup, ir: 40}, testPart{ir: 3}))
	printed := []byte("BenchmarkWork 3 500 ns/op 16 B/op\nBenchmarkWork 3 90 ns/op 16 B/op\nBenchmarkWork 3 95 ns/op 16 B/op\n")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	outs := []Output{{Stdout: printed, Started: t0, Ended: t0.Add(time.Second)}, {Stdout: printed, Started: t0.Add(time.Second), Ended: t0.Add(41 * time.Second)}}
	s, err := k.Collect(r, outs)
	if err != nil {
		t.Fatal(err)
	}
	want := Samples{Values: []float64{1000, 1002}, Unit: InstructionsUnit, Metrics: map[string][]float64{"B/op": {16, 16}},
		Counting: &receipt.Counting{Tool: "callgrind-3.19.0", Calls: 6, NativeSeconds: 1, CountedSeconds: 40}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := k.Collect(r, outs[:1]); err == nil {
		t.Error("Collect with one output: no error")
	}
	short := []Output{outs[0], {Stdout: printed[:30]}}
	if _, err := k.Collect(r, short); err == nil || !strings.HasPrefix(err.Error(), "run under callgrind: printed 1 results") {
		t.Errorf("bad counted output: %v", err)
	}
}

func TestForLane(t *testing.T) {
	k, err := ForLane(Gotest, receipt.Lane{Name: "Work"})
	if err != nil || k.Name() != Gotest || len(k.Prepare(Run{Argv: []string{"x"}})) != 1 {
		t.Errorf("wall lane: %v, %v", k, err)
	}
	k, err = ForLane(Gotest, receipt.Lane{Name: "Work", Metric: MetricInstructions, Counter: ptr(gotestCounter())})
	if err != nil || k.Name() != Gotest || len(k.Prepare(Run{Argv: []string{"x"}})) != 2 {
		t.Errorf("counted lane: %v, %v", k, err)
	}
	if _, err := ForLane(Gotest, receipt.Lane{Name: "Work", Metric: MetricInstructions}); err == nil {
		t.Error("counted lane without a counter: no error")
	}
	if _, err := ForLane("shell", receipt.Lane{}); err == nil {
		t.Error("unknown kind: no error")
	}
}

func TestCounter(t *testing.T) {
	gotest, exec := mustLookup(t, Gotest), mustLookup(t, Exec)
	c, p := gotest.Counter(Harness{Kind: Gotest, Package: "p", Benchtime: "200x"}, "Parse")
	if p != nil || !cmp.Equal(c, receipt.Counter{Tool: CounterTool, End: runCleanup, Frame: 1, Iterations: 200}) {
		t.Errorf("gotest Counter = %+v, %v", c, p)
	}
	if c, _ := gotest.Counter(Harness{Kind: Gotest, Package: "p"}, "Parse"); c.Iterations != 1 {
		t.Errorf("default benchtime: %d iterations, want 1", c.Iterations)
	}
	if _, p := gotest.Counter(Harness{Kind: Gotest, Package: "p", Benchtime: "1s"}, "Parse"); p == nil || p.Field != "benchtime" {
		t.Errorf("duration benchtime: %v", p)
	}
	if _, p := gotest.Counter(Harness{Kind: Gotest, Package: "p"}, "Get/x"); p == nil || p.Field != "" {
		t.Errorf("sub-benchmark: %v", p)
	}
	c, p = exec.Counter(Harness{Kind: Exec, OpStart: "main.opStart", OpEnd: "main.opEnd"}, "x")
	if p != nil || !cmp.Equal(c, receipt.Counter{Tool: CounterTool, Start: "main.opStart", End: "main.opEnd", Iterations: 1}) {
		t.Errorf("exec Counter = %+v, %v", c, p)
	}
	if _, p := exec.Counter(Harness{Kind: Exec, OpStart: "main.opStart"}, "x"); p == nil || p.Field != "op-end" {
		t.Errorf("exec without op-end: %v", p)
	}
}

func ptr[T any](v T) *T { return &v }

// TestReadPartParkedPacedCall: a call of the scavenger whose goroutine parked inside it
// is costed with everything its thread ran meanwhile, more than the part counted; the part
// then keeps its total instead of going negative. A paced cost within the part's total is
// still left out.
func TestReadPartParkedPacedCall(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, call int) string {
		path := filepath.Join(dir, name)
		text := "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\ndesc: Trigger: --dump-before=x.BenchmarkWork\n" +
			"events: Ir\nsummary: 1000\n\nfn=main.work\n0 400\nfn=runtime.bgscavenge\n0 100\ncfn=runtime.(*scavengerState).run\ncalls=1 0\n" +
			fmt.Sprintf("0 %d\n", call)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		call int
		want float64
	}{{500, 400}, {5000, 1000}} {
		p, _, err := readPart(write(fmt.Sprintf("part%d", tc.call), tc.call))
		if err != nil {
			t.Fatal(err)
		}
		if p.ir != tc.want {
			t.Errorf("a scavenger call costed %d: part ir %g, want %g", tc.call, p.ir, tc.want)
		}
	}
}
