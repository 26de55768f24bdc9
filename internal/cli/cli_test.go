package cli

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flipbench/flipbench/receipt"
)

var update = flag.Bool("update", false, "rewrite the golden output inside testdata/script/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flipbench": func() { os.Exit(Main(os.Args[1:], StdStreams())) },
		"fakelane":  fakeLane,
	})
}

// TestScripts runs every testdata/script/*.txtar: each is one CLI behaviour end to end, with
// the fake lane program in place of real measurements.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			// Each script gets its own machine lock, so scripts can run in parallel.
			e.Setenv("FLIPBENCH_LOCK", filepath.Join(e.WorkDir, "flipbench.lock"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"receipt":  cmdReceipt,
			"waitruns": cmdWaitRuns,
			"rawcheck": cmdRawCheck,
		},
	})
}

// cmdReceipt sets $RECEIPT to the only receipt data folder under results/ (or args[0]).
func cmdReceipt(ts *testscript.TestScript, neg bool, args []string) {
	dir := "results"
	if len(args) > 0 {
		dir = args[0]
	}
	matches, _ := filepath.Glob(filepath.Join(ts.MkAbs(dir), "*-exp*"))
	var dirs []string
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			dirs = append(dirs, m)
		}
	}
	if len(dirs) != 1 {
		ts.Fatalf("want one receipt folder under %s, have %d: %v", dir, len(dirs), dirs)
	}
	ts.Setenv("RECEIPT", dirs[0])
}

// cmdWaitRuns waits up to a minute until $RECEIPT/raw.jsonl holds at least N runs.
func cmdWaitRuns(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(ts.MkAbs("results"), "*-exp*", receipt.RawFile))
		if len(matches) == 1 {
			if recs, err := receipt.ReadRecords(filepath.Dir(matches[0])); err == nil && len(recs) >= n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("timed out waiting for %d runs", n)
}

// cmdRawCheck checks $RECEIPT/raw.jsonl against its plan: every planned run exactly once,
// a distinct pid per run, and forward order (base first) in odd passes.
func cmdRawCheck(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.Getenv("RECEIPT")
	plan, err := receipt.ReadPlan(dir)
	ts.Check(err)
	recs, err := receipt.ReadRecords(dir)
	ts.Check(err)
	seen := map[receipt.Key]int{}
	pids := map[int]bool{}
	for _, r := range recs {
		seen[r.Key()]++
		if r.PID == 0 || pids[r.PID] {
			ts.Fatalf("run %+v: pid %d not distinct", r.Key(), r.PID)
		}
		pids[r.PID] = true
	}
	for i, run := range plan.Runs {
		if seen[run.Key()] != 1 {
			ts.Fatalf("run %+v recorded %d times, want once", run.Key(), seen[run.Key()])
		}
		wantOrder := receipt.Forward
		if run.Pass%2 == 0 {
			wantOrder = receipt.Reverse
		}
		if run.Order != wantOrder {
			ts.Fatalf("run %d: pass %d has order %s", i, run.Pass, run.Order)
		}
		if i > 0 && plan.Runs[i-1].Lane == run.Lane && plan.Runs[i-1].Pass == run.Pass {
			prev := plan.Runs[i-1].Arm
			if wantOrder == receipt.Forward && run.Arm == plan.Arms[0].Name {
				ts.Fatalf("run %d: base after %s in a forward pass", i, prev)
			}
		}
	}
	if len(recs) != len(plan.Runs) {
		ts.Fatalf("%d records for %d planned runs", len(recs), len(plan.Runs))
	}
	fmt.Fprintf(ts.Stdout(), "%d runs, each once, distinct pids\n", len(recs))
}

// fakeLane is a deterministic lane program for the tests. It takes the exec harness flags
// -lane, -samples, -warmup and prints exactly -samples results. Its value is FAKE_NS
// (default 1e6) times FAKE_FACTOR (default 1), with a fixed +-2% pattern per sample.
// FAKE_SLEEP_MS sleeps before printing. Lanes named for a failure act it out: crash
// (exit 3 after a stderr message), hang (sleeps for an hour), garbage (an unparsable value),
// short (one result too few), nan (a NaN value), negative (a negative time).
func fakeLane() {
	fs := flag.NewFlagSet("fakelane", flag.ExitOnError)
	lane := fs.String("lane", "", "lane")
	samples := fs.Int("samples", 1, "samples")
	fs.Int("warmup", 0, "warmup")
	fs.Parse(os.Args[1:])

	ns := envFloat("FAKE_NS", 1e6) * envFloat("FAKE_FACTOR", 1)
	if ms := envFloat("FAKE_SLEEP_MS", 0); ms > 0 {
		time.Sleep(time.Duration(ms * float64(time.Millisecond)))
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	n := *samples
	switch *lane {
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: lane crashed on purpose")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "short":
		n--
	}
	for i := range n {
		v := ns * (1 + 0.01*float64(i%5-2))
		switch {
		case *lane == "garbage" && i == 2:
			fmt.Fprintf(w, "Benchmark%s 1 12abc ns/op\n", *lane)
			continue
		case *lane == "nan" && i == 1:
			v = math.NaN()
		case *lane == "negative" && i == 0:
			v = -v
		}
		fmt.Fprintf(w, "Benchmark%s 1 %s ns/op\n", *lane, strconv.FormatFloat(v, 'f', -1, 64))
	}
}

func envFloat(k string, def float64) float64 {
	if s := strings.TrimSpace(os.Getenv(k)); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	}
	return def
}
