package cli

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/receipt"
)

var update = flag.Bool("update", false, "rewrite the golden output inside testdata/script/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flipbench": func() { os.Exit(Main(os.Args[1:], StdStreams())) },
		"fakelane":  fakeLane,
		// flipbench-next is a flipbench whose analysis method differs from this build's
		// in its default spending function (O'Brien-Fleming for Pocock): an upgrade that
		// changed a default, for the scripts that check a finished page keeps its verdict.
		"flipbench-next": func() {
			s := StdStreams()
			m := driftcheck.CurrentMethod("next")
			m.Spending = driftcheck.SpendOBrienFleming
			s.Method = &m
			os.Exit(Main(os.Args[1:], s))
		},
	})
}

// TestScripts runs every testdata/script/*.txtar: each is one CLI behaviour end to end, with
// the fake lane program in place of real measurements.
func TestScripts(t *testing.T) {
	bs := &benchstat{dir: t.TempDir()}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			// Each script gets its own machine lock, so scripts can run in parallel.
			e.Setenv("FLIPBENCH_LOCK", filepath.Join(e.WorkDir, "flipbench.lock"))
			// Scripts run many flipbench processes at once on purpose: what they take of
			// each other is no host's burst, so none is measured again for it (a script
			// that wants the real meter unsets it).
			e.Setenv("FLIPBENCH_OTHERS_PCT", "0")
			// Nor is a script's waiting for a CPU a neighbour's: the interference rule is
			// off (a script that measures it turns it on).
			e.Setenv("FLIPBENCH_INTERFERENCE", "off")
			gitArmsEnv(e) // go and git for the gitarms_* scripts
			// TOOLBIN is the folder of the script's own commands (flipbench, fakelane),
			// for a PATH without anything else on it.
			for _, d := range filepath.SplitList(e.Getenv("PATH")) {
				if _, err := os.Stat(filepath.Join(d, "fakelane")); err == nil {
					e.Setenv("TOOLBIN", d)
					break
				}
			}
			return nil
		},
		// [cgroup]: a cgroup v2 hierarchy is writable here, so lanes run in cgroups of
		// their own and what a kill -9 leaves is ended by the next run, marked or not.
		Condition: func(cond string) (bool, error) {
			if cond == "cgroup" {
				return owner.CgroupWritable() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"receipt":    cmdReceipt,
			"waitruns":   cmdWaitRuns,
			"rawcheck":   cmdRawCheck,
			"exitcode":   cmdExitCode,
			"tally":      cmdTally,
			"dead":       cmdDead,
			"remanifest": cmdRemanifest,
			"looks":      cmdLooks,
			"spentmore":  cmdSpentMore,
			"block":      cmdBlock,
			"benchstat":  bs.cmd,
			"need":       cmdNeed,
		},
	})
}

// needs says, for each program a script may need, how to get it: make test installs what
// the Makefile can (a C compiler, Valgrind), and Go and git are what every machine that
// builds flipbench has.
var needs = map[string]string{
	"go":       "install Go 1.26 (https://go.dev/dl/)",
	"git":      "install git (apt-get install -y git)",
	"cc":       "run make cc (apt-get update && apt-get install -y gcc), which make test runs first",
	"valgrind": "run make valgrind (apt-get update && apt-get install -y valgrind), which make test runs first",
}

// cmdNeed fails the script, loudly, when a program it needs is not installed: need
// PROG...; a test that CI must run never skips. ! need PROG checks that PROG is missing.
func cmdNeed(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: need PROG...")
	}
	for _, prog := range args {
		_, err := exec.LookPath(prog)
		if neg {
			if err == nil {
				ts.Fatalf("%s is installed", prog)
			}
			continue
		}
		if err != nil {
			how := needs[prog]
			if how == "" {
				how = "install it"
			}
			ts.Fatalf("%s is not installed, and this script needs it: %s", prog, how)
		}
	}
}

// cmdReceipt sets $RECEIPT to the only receipt data folder under results/ (or args[0])
// whose name matches args[1] (default *-exp*): receipt [dir [glob]].
func cmdReceipt(ts *testscript.TestScript, neg bool, args []string) {
	dir, glob := "results", "*-exp*"
	if len(args) > 0 {
		dir = args[0]
	}
	if len(args) > 1 {
		glob = args[1]
	}
	matches, _ := filepath.Glob(filepath.Join(ts.MkAbs(dir), glob))
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

// cmdWaitRuns waits up to three minutes (a loaded 2-core CI machine resumes slowly) until the raw.jsonl of the only receipt under results/
// whose name matches args[1] (default *-exp*) holds at least args[0] runs.
func cmdWaitRuns(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	glob := "*-exp*"
	if len(args) > 1 {
		glob = args[1]
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(ts.MkAbs("results"), glob, receipt.RawFile))
		if len(matches) == 1 {
			if recs, err := receipt.ReadRecords(filepath.Dir(matches[0])); err == nil && len(recs) >= n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("timed out waiting for %d runs", n)
}

// cmdLooks prints $RECEIPT's looks, one line each: the round, the lanes the next round
// runs (comma-separated, - for none), and the stop reason (- for none).
func cmdLooks(ts *testscript.TestScript, neg bool, args []string) {
	looks, err := receipt.ReadLooks(ts.Getenv("RECEIPT"))
	ts.Check(err)
	for _, l := range looks {
		pending, stop := strings.Join(l.Pending, ","), l.Stop
		if pending == "" {
			pending = "-"
		}
		if stop == "" {
			stop = "-"
		}
		fmt.Fprintf(ts.Stdout(), "%d %s %s\n", l.Round, pending, stop)
	}
}

// cmdSpentMore checks that the receipt folder args[1] (a run on a larger budget) measured
// longer than args[0], ran at least its rounds, and left no more lanes undecided at its
// last look: spentmore SMALL LARGE.
func cmdSpentMore(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: spentmore SMALL LARGE")
	}
	last := func(dir string) receipt.Look {
		looks, err := receipt.ReadLooks(ts.MkAbs(dir))
		ts.Check(err)
		if len(looks) == 0 {
			ts.Fatalf("%s: no looks", dir)
		}
		return looks[len(looks)-1]
	}
	undecided := func(l receipt.Look) int {
		n := 0
		for _, ll := range l.Lanes {
			if !ll.Verdict.Decided() {
				n++
			}
		}
		return n
	}
	small, large := last(args[0]), last(args[1])
	ts.Logf("small: %d rounds, %s, %d undecided (%s); large: %d rounds, %s, %d undecided (%s)",
		small.Round, small.Elapsed, undecided(small), small.Stop, large.Round, large.Elapsed, undecided(large), large.Stop)
	ok := large.Elapsed > small.Elapsed && large.Round >= small.Round && undecided(large) <= undecided(small)
	if ok == neg {
		ts.Fatalf("the larger budget's run did not measure longer with no more lanes undecided")
	}
}

// receiptLink matches a link to a receipt data folder, which names its stamp and folder.
var receiptLink = regexp.MustCompile(`[A-Za-z0-9_./-]*\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z-exp\d+-[A-Za-z0-9_.+-]+`)

// cmdBlock prints the results block of the page args[0] as a run on any machine makes it
// from the same pass pairs: without the line naming the receipt, the peak RSS table (each
// process's memory, which no seed fixes) and the host warnings (the machine at that
// moment), and with links into the receipt's folder as RECEIPT: block PAGE.
func cmdBlock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: block PAGE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	_, rest, ok := strings.Cut(string(b), "<!-- flipbench:results:begin -->")
	block, _, ok2 := strings.Cut(rest, "<!-- flipbench:results:end -->")
	if !ok || !ok2 {
		ts.Fatalf("%s: no results block", args[0])
	}
	skip := false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "Generated by `flipbench finalize` from the receipt"):
			continue
		case strings.HasPrefix(line, "#### Peak RSS"):
			skip = true
			continue
		case strings.HasPrefix(line, "###"):
			skip = false
		case strings.HasPrefix(line, "- host: "):
			continue
		}
		if !skip {
			fmt.Fprintln(ts.Stdout(), receiptLink.ReplaceAllString(line, "RECEIPT"))
		}
	}
}

// expectedRuns returns the runs a finished receipt must hold: a shard's runs; every run of a fixed plan; for
// a sequential one, round 1 of every lane and each later round of the lanes its previous
// look left pending, as looks.jsonl says.
func expectedRuns(ts *testscript.TestScript, dir string, plan *receipt.Plan) []receipt.Run {
	if plan.Part() {
		return plan.Shard.Runs(plan)
	}
	if plan.Protocol.Sequential == nil {
		return plan.Runs
	}
	looks, err := receipt.ReadLooks(dir)
	ts.Check(err)
	pending := map[int][]string{}
	for _, l := range looks {
		pending[l.Round+1] = l.Pending
	}
	var out []receipt.Run
	for _, r := range plan.Runs {
		k := receipt.Round(r.Pass)
		if k == 1 || slices.Contains(pending[k], r.Lane) {
			out = append(out, r)
		}
	}
	// A look's re-measures run in the next round, so every look but the last adds every
	// arm's run of each pass it names, as that attempt.
	for i, l := range looks {
		if i == len(looks)-1 {
			break
		}
		for _, rm := range l.Remeasure {
			for _, r := range plan.Runs {
				if r.Collection == rm.Collection && r.Pass == rm.Pass && r.Lane == rm.Lane {
					r.Attempt = rm.Attempt
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// cmdRawCheck checks $RECEIPT/raw.jsonl against its plan: every planned run exactly once,
// a distinct pid per run, the arms of each (collection, pass, lane) back to back, base
// first in odd passes and last in even ones, as recorded.
func cmdRawCheck(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.Getenv("RECEIPT")
	plan, err := receipt.ReadPlan(dir)
	ts.Check(err)
	recs, err := receipt.ReadRecords(dir)
	ts.Check(err)
	seen := map[receipt.Key]int{}
	pids := map[int]bool{}
	lastOfGroup := map[receipt.GroupKey]int{}
	for i, r := range recs {
		// The arms of one (collection, pass, lane) run back to back, also across a resume.
		if j, ok := lastOfGroup[r.Group()]; ok && j != i-1 {
			ts.Fatalf("run %+v: its group's runs are not back to back in raw.jsonl (records %d and %d)", r.Key(), j, i)
		}
		lastOfGroup[r.Group()] = i
		seen[r.Key()]++
		if r.PID == 0 || pids[r.PID] {
			ts.Fatalf("run %+v: pid %d not distinct", r.Key(), r.PID)
		}
		pids[r.PID] = true
	}
	for _, run := range expectedRuns(ts, dir, plan) {
		if seen[run.Key()] != 1 {
			ts.Fatalf("run %+v recorded %d times, want once", run.Key(), seen[run.Key()])
		}
		delete(seen, run.Key())
	}
	for k := range seen {
		ts.Fatalf("run %+v recorded but not expected", k)
	}
	// The recorded order: every run with the order and place the plan gave it, and within
	// each group the arms in the order of their places.
	planned := map[receipt.Key]receipt.Run{}
	for _, r := range plan.Runs {
		planned[r.Key()] = r
	}
	byGroup := map[receipt.GroupKey][]receipt.Record{}
	for _, r := range recs {
		byGroup[r.Group()] = append(byGroup[r.Group()], r)
		k := r.Key()
		k.Attempt = 0 // a pass measured again keeps the plan's order and places
		if p := planned[k]; r.Order != p.Order || r.Position != p.Position {
			ts.Fatalf("run %+v: recorded order %s place %d, the plan %s place %d", r.Key(), r.Order, r.Position, p.Order, p.Position)
		}
	}
	for g, got := range byGroup {
		for i, r := range got {
			if r.Position != i+1 {
				ts.Fatalf("collection %d pass %d lane %s: run %d of the group is arm %s at place %d", g.Collection, g.Pass, g.Lane, i+1, r.Arm, r.Position)
			}
		}
	}
	if want := len(expectedRuns(ts, dir, plan)); len(recs) != want {
		ts.Fatalf("%d records for %d expected runs", len(recs), want)
	}
	fmt.Fprintf(ts.Stdout(), "%d runs, each once, distinct pids\n", len(recs))
}

// cmdDead checks that no process whose pid is listed in the file args[0] (one a line)
// still runs, waiting up to five seconds for them to end; a zombie counts as ended. It
// prints how many pids it checked: dead FILE.
func cmdDead(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: dead FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	pids := strings.Fields(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for {
			st, err := os.ReadFile("/proc/" + p + "/stat")
			i := strings.LastIndexByte(string(st), ')')
			if err != nil || i < 0 || i+3 > len(st) || st[i+2] == 'Z' || st[i+2] == 'X' {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("pid %s still runs: %s", p, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fmt.Fprintf(ts.Stdout(), "%d processes, none running\n", len(pids))
}

// cmdRemanifest does what a careful forger would after editing a receipt's data: it
// hashes the folder args[0] again and rewrites its manifest.json, keeping the page hash
// the manifest holds: remanifest DIR.
func cmdRemanifest(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: remanifest DIR")
	}
	dir := ts.MkAbs(args[0])
	old, err := receipt.ReadManifest(dir)
	ts.Check(err)
	m, err := receipt.Folder(dir).SealData()
	ts.Check(err)
	m.Page = old.Page
	ts.Check(atomicfile.WriteJSON(filepath.Join(dir, receipt.ManifestFile), m))
}

// cmdExitCode runs a program like exec does and checks its exact exit status:
// exitcode N prog args...
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	if got := runStatus(ts, args[1], args[2:], ts.Stdout(), ts.Stderr()); got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdTally runs a program N times and prints how often each exit status came up, e.g.
// "exit 0: 19 of 20": tally N prog args...
func cmdTally(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: tally N prog args...")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	counts := map[int]int{}
	var stderr strings.Builder
	for range n {
		counts[runStatus(ts, args[1], args[2:], io.Discard, &stderr)]++
	}
	codes := make([]int, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		fmt.Fprintf(ts.Stdout(), "exit %d: %d of %d\n", c, counts[c], n)
	}
	fmt.Fprint(ts.Stderr(), stderr.String())
}

// runStatus runs prog with the script's environment and working directory and returns
// its exit status.
func runStatus(ts *testscript.TestScript, name string, args []string, stdout, stderr io.Writer) int {
	// The test process's environment, less any fake-lane settings, plus the script's.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FAKE_") {
			env = append(env, kv)
		}
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "FLIPBENCH_LOCK", "FLIPBENCH_OTHERS_PCT", "FLIPBENCH_INTERFERENCE", "GITHUB_STEP_SUMMARY", "COLUMNS",
		"FAKE_NS", "FAKE_FACTOR", "FAKE_SLEEP_MS", "FAKE_NOISE_PCT", "FAKE_BETWEEN_PCT", "FAKE_ORDER_PCT", "FAKE_RAMP_PCT", "FAKE_COUNTER", "FAKE_SEED", "FAKE_SPAWN", "FAKE_SPAWN_BARE", "FAKE_NOSPACE", "FAKE_CONTAM_PCT", "FAKE_SPIN", "FAKE_THREADS",
		"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	prog := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, name); fileExists(p) {
			prog = p
			break
		}
	}
	if prog == "" {
		ts.Fatalf("%s: not found on the script's PATH", name)
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("running %s: %v", name, err)
	}
	return 0
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// fakeLane is a deterministic lane program for the tests. It takes the exec harness flags
// -lane, -samples, -warmup and prints exactly -samples results. Its value is FAKE_NS
// (default 1e6) times FAKE_FACTOR (default 1), with a fixed +-2% pattern per sample.
// FAKE_SLEEP_MS sleeps before printing. FAKE_NOISE_PCT adds normal noise of that standard
// deviation to every sample. FAKE_COUNTER (a file) numbers the processes: with it the noise
// is seeded by the process number, so a script's noisy runs are the same every time, and
// FAKE_RAMP_PCT models a drifting machine (every process that much slower than the one
// before). Lanes named for a failure act it out: crash (exit 3 after a stderr message),
// hang (sleeps for an hour), garbage (an unparsable value), short (one result too few),
// nan (a NaN value), negative (a negative time), other (prints another benchmark's
// results), flood (prints results without end). FAKE_SPAWN (a file) makes every process
// start a child in a session of its own (setsid) that sleeps for an hour, and append the
// child's pid to the file. FAKE_SPAWN_BARE (a file) makes every process leave a child that
// also clears its environment (env -i setsid -f fakelane -lane hang), so it carries no
// mark; the child appends its own pid to the file (-pidfile), and the process waits until
// it has. FAKE_NOSPACE=N (with FAKE_COUNTER) makes the N-th process and every
// later one fail as a lane does whose disk is full. FAKE_HANG_ARM=<arm> (with the -arm
// flag) makes every process of that arm print its first result and then hang for an hour:
// a candidate that hangs until the timeout.
//
// Realistic noise: FAKE_BETWEEN_PCT scales each process's whole run by exp(N(0,1) x that
// percent), the process-to-process noise of a shared machine; FAKE_NOISE_PCT is then the
// noise within the process. FAKE_CONTAM_PCT disturbs that percent of the processes as a
// neighbour's burst does: every sample twice as slow and five times as noisy. FAKE_ORDER_PCT, with the optional flags -arm and -pass (the
// {arm} and {pass} placeholders), slows the second arm run of each pass by that much: a
// lane whose value depends on run order. Every FAKE_ setting can be given per lane as
// FAKE_X_<lane> (FAKE_FACTOR_alpha=0.7), which wins over FAKE_X. FAKE_SEED seeds the noise
// by its value and the run's lane, arm, collection and pass (the -arm, -pass and
// -collection flags) instead: a run's samples are then the same whichever process, order
// or machine runs it (the shard scripts compare a whole run with its merged shards).
//
// Real work: FAKE_SPIN=N makes each sample N iterations of a loop on the CPU, its value the
// time they took; FAKE_THREADS=K starts K more threads spinning for the whole process, so
// that on one CPU (protocol.cpus) the sample's thread waits for them: a lane whose own
// threads contend.
//
// spawnBare leaves a child that clears its environment and leaves the session (env -i
// setsid -f), and waits until the child has appended its pid to the file pids.
func spawnBare(pids string) {
	self, err := exec.LookPath("fakelane")
	if err == nil {
		self, err = filepath.Abs(self)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakelane: spawning:", err)
		os.Exit(1)
	}
	before, _ := os.ReadFile(pids)
	cmd := exec.Command("env", "-i", "setsid", "-f", self, "-lane", "hang", "-pidfile", pids)
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakelane: spawning:", err)
		os.Exit(1)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") > strings.Count(string(before), "\n") {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "fakelane: the env -i child never started")
	os.Exit(1)
}

func fakeLane() {
	fs := flag.NewFlagSet("fakelane", flag.ExitOnError)
	lane := fs.String("lane", "", "lane")
	samples := fs.Int("samples", 1, "samples")
	fs.Int("warmup", 0, "warmup")
	arm := fs.String("arm", "", "arm")
	pass := fs.Int("pass", 0, "pass")
	collection := fs.Int("collection", 0, "collection")
	pidfile := fs.String("pidfile", "", "a file to append this process's pid to")
	fs.Parse(os.Args[1:])
	if *pidfile != "" {
		f, err := os.OpenFile(*pidfile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakelane:", err)
			os.Exit(1)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	envFloat := func(k string, def float64) float64 { return fakeEnv(k, *lane, def) }

	ns := envFloat("FAKE_NS", 1e6) * envFloat("FAKE_FACTOR", 1)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	if counter := os.Getenv("FAKE_COUNTER"); counter != "" {
		b, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o644)
		ns *= math.Pow(1+envFloat("FAKE_RAMP_PCT", 0)/100, float64(n))
		rng = rand.New(rand.NewPCG(uint64(n), 0x6e6f697365)) // "noise"
	}
	if seed := os.Getenv("FAKE_SEED"); seed != "" {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s/%s/%d/%d", seed, *lane, *arm, *collection, *pass)
		rng = rand.New(rand.NewPCG(h.Sum64(), 0x6e6f697365))
	}
	if counter := os.Getenv("FAKE_COUNTER"); counter != "" && os.Getenv("FAKE_NOSPACE") != "" {
		b, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if from, _ := strconv.Atoi(os.Getenv("FAKE_NOSPACE")); n >= from {
			fmt.Fprintln(os.Stderr, "write /tmp/fakelane-cache: no space left on device")
			os.Exit(1)
		}
	}
	if pids := os.Getenv("FAKE_SPAWN"); pids != "" {
		child := exec.Command("fakelane", "-lane", "hang")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "FAKE_SPAWN=") && !strings.HasPrefix(kv, "FAKE_SPAWN_BARE=") {
				child.Env = append(child.Env, kv)
			}
		}
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakelane: spawning:", err)
			os.Exit(1)
		}
		f, _ := os.OpenFile(pids, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		fmt.Fprintln(f, child.Process.Pid)
		f.Close()
	}
	if pids := os.Getenv("FAKE_SPAWN_BARE"); pids != "" {
		spawnBare(pids)
	}
	noise := envFloat("FAKE_NOISE_PCT", 0) / 100
	ns *= math.Exp(envFloat("FAKE_BETWEEN_PCT", 0) / 100 * rng.NormFloat64())
	if c := envFloat("FAKE_CONTAM_PCT", 0); c > 0 && rng.Float64() < c/100 {
		ns, noise = 2*ns, 5*noise // a neighbour's burst
	}
	if *arm != "" && *pass > 0 && (*arm != "base") == (*pass%2 == 1) {
		ns *= 1 + envFloat("FAKE_ORDER_PCT", 0)/100 // this arm runs second in its pass
	}
	if ms := envFloat("FAKE_SLEEP_MS", 0); ms > 0 {
		time.Sleep(time.Duration(ms * float64(time.Millisecond)))
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	hangs := *arm != "" && *arm == cmp.Or(os.Getenv("FAKE_HANG_ARM_"+*lane), os.Getenv("FAKE_HANG_ARM"))
	n := *samples
	switch *lane {
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: lane crashed on purpose")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "short":
		n--
	case "flood":
		for {
			fmt.Fprintf(w, "Benchmark%s 1 1000 ns/op\n", *lane)
		}
	}
	spinIters, threads := int(envFloat("FAKE_SPIN", 0)), int(envFloat("FAKE_THREADS", 0))
	if spinIters > 0 {
		runtime.LockOSThread()
		if threads > 0 {
			runtime.GOMAXPROCS(threads + 1) // so that the kernel, not Go, shares the CPU out
		}
		for range threads {
			go func() {
				runtime.LockOSThread()
				for x := uint64(1); ; x++ {
					x ^= x << 7
				}
			}()
		}
	}
	for i := range n {
		v := ns * (1 + 0.01*float64(i%5-2))
		if noise > 0 {
			v = ns * (1 + noise*rng.NormFloat64())
		}
		if spinIters > 0 {
			start := time.Now()
			x := uint64(1)
			for range spinIters {
				x ^= x << 7
			}
			v = float64(time.Since(start).Nanoseconds()) + float64(x%2)
		}
		switch {
		case *lane == "garbage" && i == 2:
			fmt.Fprintf(w, "Benchmark%s 1 12abc ns/op\n", *lane)
			continue
		case *lane == "nan" && i == 1:
			v = math.NaN()
		case *lane == "negative" && i == 0:
			v = -v
		}
		name := *lane
		if name == "other" {
			name = "SomethingElse"
		}
		fmt.Fprintf(w, "Benchmark%s 1 %s ns/op%s\n", name, strconv.FormatFloat(v, 'f', -1, 64), fakeMetrics())
		if spinIters > 0 {
			w.Flush() // each result as its sample ends, as a Go benchmark prints it
		}
		if hangs {
			w.Flush()
			time.Sleep(time.Hour)
		}
	}
}

// fakeMetrics returns the extra metrics FAKE_METRICS asks every result line to carry
// ("stale/op=0 age-ms=4" prints " 0 stale/op 4 age-ms"); FAKE_CPUS=1 adds the number of
// CPUs the lane may run on as cpus/op.
func fakeMetrics() string {
	var b strings.Builder
	if os.Getenv("FAKE_CPUS") == "1" {
		fmt.Fprintf(&b, " %d cpus/op", runtime.NumCPU())
	}
	for _, kv := range strings.Fields(os.Getenv("FAKE_METRICS")) {
		unit, value, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, " %s %s", value, unit)
	}
	return b.String()
}

// fakeEnv reads the fake lane's setting k for lane: FAKE_X_<lane>, else FAKE_X, else def.
func fakeEnv(k, lane string, def float64) float64 {
	if lane != "" {
		if s := strings.TrimSpace(os.Getenv(k + "_" + lane)); s != "" {
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				return v
			}
		}
	}
	return envFloat(k, def)
}

func envFloat(k string, def float64) float64 {
	if s := strings.TrimSpace(os.Getenv(k)); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	}
	return def
}

// benchstat is the benchstat command of the scripts: golang.org/x/perf/cmd/benchstat at the
// version in go.mod, built once (from this module, so it needs no network) the first time
// a script runs it.
type benchstat struct {
	dir  string
	once sync.Once
	bin  string
	err  error
}

// cmd runs benchstat with the script's arguments: benchstat FILE...
func (b *benchstat) cmd(ts *testscript.TestScript, neg bool, args []string) {
	b.once.Do(func() {
		b.bin = filepath.Join(b.dir, "benchstat")
		out, err := exec.Command("go", "build", "-o", b.bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("building benchstat: %v\n%s", err, out)
		}
	})
	ts.Check(b.err)
	err := ts.Exec(b.bin, args...)
	if neg != (err != nil) {
		ts.Fatalf("benchstat: %v (want failure: %v)", err, neg)
	}
}
