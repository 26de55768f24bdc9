package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// fakeStarter answers every run with deterministic output: the arm's value for the lane,
// without starting a process. fail names runs (lane/arm) that exit non-zero.
type fakeStarter struct {
	calls    []string
	fail     map[string]bool
	unit     map[string]string // arm -> the unit it prints (default ns/op)
	cancel   func()            // called on the call numbered cancelAt (1-based)
	cancelAt int
}

func (f *fakeStarter) Start(ctx context.Context, c Command) Process {
	argv := c.Argv
	f.calls = append(f.calls, strings.Join(argv, " "))
	if f.cancel != nil && len(f.calls) == f.cancelAt {
		f.cancel()
		return Process{Err: ctx.Err()}
	}
	// argv: bin -lane L -n N arm
	lane, arm := argv[2], argv[5]
	p := Process{PID: 1000 + len(f.calls), Started: time.Unix(0, 0), Ended: time.Unix(1, 0), MaxRSSBytes: 1 << 20}
	if f.fail[lane+"/"+arm] {
		p.Exit, p.Err, p.StderrTail = 2, errors.New("exited with status 2"), "boom"
		return p
	}
	var b strings.Builder
	for i := range 3 {
		unit := f.unit[arm]
		if unit == "" {
			unit = "ns/op"
		}
		fmt.Fprintf(&b, "Benchmark%s 1 %d %s\n", lane, 100+i+len(arm), unit)
	}
	p.Stdout = []byte(b.String())
	return p
}

type nopEvents struct{ warnings []string }

func (*nopEvents) Begin(total, done int)                    {}
func (*nopEvents) RunDone(n, total int, rec receipt.Record) {}
func (e *nopEvents) Warn(w receipt.Warning)                 { e.warnings = append(e.warnings, w.Text) }

// quietHost is a host snapshot with nothing to warn about.
func quietHost(when string, c, p int, now time.Time, dir string) receipt.Snapshot {
	return receipt.Snapshot{When: when, Collection: c, Pass: p, Time: now, CPUs: 2}
}

// quietOthers is a machine where nothing else runs.
func quietOthers() func() float64 { return func() float64 { return 0 } }

func TestRunnerWarnsWhenTheHostTurnsBusy(t *testing.T) {
	// The first measurement is the idle look before pass 1; then one per pass. Other work
	// takes 60% of the CPU during every second pass of a collection, and nothing otherwise.
	calls := 0
	busyEvenPasses := func() func() float64 {
		calls++
		n := calls
		return func() float64 {
			if n > 1 && (n-1)%2 == 0 {
				return 60
			}
			return 0
		}
	}
	ev := &nopEvents{}
	r := &Runner{Dir: t.TempDir(), Plan: testPlan(), Starter: &fakeStarter{}, Events: ev, Capture: quietHost, Others: busyEvenPasses, CleanUp: noCleanUp}
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"host busy after pass 2 of collection 1: other processes used 60% of the CPU while the pass ran; stop other work on this machine or rerun, since a busy host adds noise and drift",
		"host busy after pass 2 of collection 2: other processes used 60% of the CPU while the pass ran; stop other work on this machine or rerun, since a busy host adds noise and drift",
	}
	if strings.Join(ev.warnings, "|") != strings.Join(want, "|") || len(out.Warnings) != 2 {
		t.Fatalf("warnings %q, want %q", ev.warnings, want)
	}
	var env receipt.Env
	receipt.ReadJSON(filepath.Join(r.Dir, receipt.EnvFile), &env)
	if len(env.Snapshots) != 8 || env.Snapshots[3].BusyPct != 60 || env.Snapshots[1].BusyPct != 0 {
		t.Fatalf("snapshots %+v", env.Snapshots)
	}
}

func TestRunnerWarnsOnceWhileTheHostStaysBusy(t *testing.T) {
	alwaysBusy := func() func() float64 { return func() float64 { return 60 } }
	ev := &nopEvents{}
	r := &Runner{Dir: t.TempDir(), Plan: testPlan(), Starter: &fakeStarter{}, Events: ev, Capture: quietHost, Others: alwaysBusy, CleanUp: noCleanUp}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One warning before anything is measured, one when the first pass ends busy; the
	// three later passes, equally busy, add none.
	if len(ev.warnings) != 2 || !strings.HasPrefix(ev.warnings[0], "host busy before pass 1") || !strings.HasPrefix(ev.warnings[1], "host busy after pass 1 of collection 1") {
		t.Fatalf("warnings %q", ev.warnings)
	}
}

func testPlan() *receipt.Plan {
	cmd := []string{"bin", "-lane", "{lane}", "-n", "{samples}", "{arm}"}
	p := &receipt.Plan{
		Protocol: receipt.Protocol{Samples: 3, Passes: 2, Collections: 2, Timeout: time.Second},
		Arms:     []receipt.Arm{{Name: "base", Command: cmd, Kind: lanekind.Exec}, {Name: "cand", Command: cmd, Kind: lanekind.Exec}},
		Lanes:    []receipt.Lane{{Name: "a", Role: "primary"}, {Name: "b", Role: "guard"}},
	}
	p.Runs = Schedule([]string{"base", "cand"}, []string{"a", "b"}, 2, 2, 1, false)
	return p
}

func TestRunnerRecordsEveryRun(t *testing.T) {
	dir := t.TempDir()
	fs := &fakeStarter{fail: map[string]bool{"b/cand": true}}
	ev := &nopEvents{}
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: fs, Events: ev, Capture: quietHost, Others: quietOthers}
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Ran != 16 || out.Failed != 4 || out.Resumed != 0 {
		t.Fatalf("outcome %+v, want 16 ran, 4 failed", out)
	}
	recs, err := receipt.ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		want := r.Plan.Runs[i]
		if rec.Key() != want.Key() || rec.Order != want.Order {
			t.Fatalf("record %d is %+v, planned %+v", i, rec.Key(), want)
		}
		if rec.Lane == "b" && rec.Arm == "cand" {
			if rec.OK() || rec.Exit != 2 || rec.StderrTail != "boom" {
				t.Fatalf("failed run recorded as %+v", rec)
			}
			continue
		}
		if !rec.OK() || len(rec.Samples) != 3 || rec.Unit != "ns/op" || rec.MaxRSSBytes != 1<<20 {
			t.Fatalf("record %d: %+v", i, rec)
		}
	}
	if len(ev.warnings) != 4 || !strings.Contains(ev.warnings[0], "arm cand, lane b, collection 1 pass 1: exited with status 2") {
		t.Fatalf("warnings %q", ev.warnings)
	}
	var env receipt.Env
	if err := receipt.ReadJSON(filepath.Join(dir, receipt.EnvFile), &env); err != nil {
		t.Fatal(err)
	}
	if len(env.Snapshots) != 8 || env.Snapshots[0].When != "before" || env.Snapshots[1].When != "after" {
		t.Fatalf("%d snapshots, want a before and an after for each of 4 passes", len(env.Snapshots))
	}
}

func TestRunnerResumesWithoutRepeating(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	fs := &fakeStarter{cancel: cancel, cancelAt: 6}
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: fs, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers}
	if _, err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	recs, _ := receipt.ReadRecords(dir)
	if len(recs) != 5 {
		t.Fatalf("%d records after interrupt at the 6th run, want 5", len(recs))
	}
	fs2 := &fakeStarter{}
	r.Starter = fs2
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Five runs finished: two whole (lane, pass) groups and the base run of a third, whose
	// candidate run was cut off. That group is measured again from its start, so its two
	// runs are back to back; the lone earlier run moves to superseded.jsonl.
	if out.Resumed != 4 || out.Ran != 12 || len(fs2.calls) != 12 {
		t.Fatalf("resume: %+v with %d calls, want 4 resumed and 12 run", out, len(fs2.calls))
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Text, "re-measuring 1 runs") {
		t.Fatalf("warnings %q", out.Warnings)
	}
	var moved int
	if b, err := os.ReadFile(filepath.Join(dir, receipt.SupersededFile)); err == nil {
		moved = strings.Count(string(b), "\n")
	}
	if moved != 1 {
		t.Fatalf("%d runs in %s, want 1", moved, receipt.SupersededFile)
	}
	recs, _ = receipt.ReadRecords(dir)
	seen := map[receipt.Key]bool{}
	for _, rec := range recs {
		if seen[rec.Key()] {
			t.Fatalf("run %+v recorded twice", rec.Key())
		}
		seen[rec.Key()] = true
	}
	if len(seen) != 16 {
		t.Fatalf("%d distinct runs, want 16", len(seen))
	}
}

// gotestCommand is the command template of a gotest lane with the default benchtime.
func gotestCommand(t *testing.T) []string {
	t.Helper()
	k, err := lanekind.Lookup(lanekind.Gotest)
	if err != nil {
		t.Fatal(err)
	}
	return k.Command(lanekind.Harness{})
}

func TestExpand(t *testing.T) {
	arm := receipt.Arm{Name: "candA", Bin: "/b/x.test", Command: gotestCommand(t), Args: []string{"-v"}}
	got := strings.Join(Expand(arm, receipt.Run{Collection: 2, Pass: 3}, receipt.Lane{Name: "PointUnderLoad"}, receipt.Protocol{Samples: 41, Warmup: 10}), " ")
	want := "/b/x.test -test.run ^$ -test.bench ^BenchmarkPointUnderLoad$ -test.benchtime 1x -test.count 51 -test.benchmem -v"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lock")
	l, err := AcquireLock(ctx, path, Holder{PID: 42, Command: "flipbench ab 1", Dir: "results/x"}, LockWait{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLock(ctx, path, Holder{PID: 43}, LockWait{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `pid 42, "flipbench ab 1"`) || !strings.Contains(err.Error(), "writing results/x") {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(ctx, path, Holder{PID: 44}, LockWait{})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// With a wait, a held lock is waited for: taken when the holder releases it, or refused
// after the wait (saying how long), or given up when the context ends.
func TestLockWait(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lock")
	held, err := AcquireLock(ctx, path, Holder{PID: 42, Command: "flipbench gate"}, LockWait{})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	w := LockWait{Max: 50 * time.Millisecond, Poll: 5 * time.Millisecond, Waiting: func(msg string) { said = append(said, msg) }}
	_, err = AcquireLock(ctx, path, Holder{PID: 43}, w)
	if !errors.Is(err, ErrLocked) || !strings.HasSuffix(err.Error(), "(waited 50ms)") {
		t.Fatalf("after the wait: %v", err)
	}
	if len(said) != 1 || !strings.Contains(said[0], `pid 42, "flipbench gate"`) {
		t.Fatalf("Waiting said %q, want the holder once", said)
	}

	cctx, cancel := context.WithCancel(ctx)
	w.Max, w.Waiting = WaitForever, func(string) { cancel() }
	if _, err := AcquireLock(cctx, path, Holder{PID: 44}, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}

	got := make(chan error, 1)
	w.Waiting = func(string) { held.Release() }
	go func() {
		l, err := AcquireLock(ctx, path, Holder{PID: 45}, w)
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiting for a released lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the released lock was never taken")
	}
}

func TestRunnerRefusesAForeignLog(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: &fakeStarter{}, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The same folder resumed under a plan with a different sample count.
	r.Plan.Protocol.Samples = 5
	_, err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "has 3 samples, the plan 5; this folder was not written by this plan") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunnerPinsALanesUnit(t *testing.T) {
	dir := t.TempDir()
	// The candidate prints a rate where the base prints a time: comparing the two would be
	// meaningless, so the candidate's runs fail.
	fs := &fakeStarter{unit: map[string]string{"cand": "MB/s"}}
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: fs, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers}
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 8 {
		t.Fatalf("%d failed runs, want 8: the arm that did not run a lane first, in all its runs of it", out.Failed)
	}
	// The first run of a lane pins its unit: the base's or, in a lane the schedule runs
	// in reverse first, the candidate's.
	recs, _ := receipt.ReadRecords(dir)
	failed := map[string]string{} // lane -> arm whose runs failed
	for _, rec := range recs {
		if rec.Error == "" {
			continue
		}
		want := map[string]string{"cand": "printed MB/s, but this lane's other runs print ns/op", "base": "printed ns/op, but this lane's other runs print MB/s"}[rec.Arm]
		if rec.Error != want {
			t.Fatalf("run %+v: error %q, want %q", rec.Key(), rec.Error, want)
		}
		if arm, ok := failed[rec.Lane]; ok && arm != rec.Arm {
			t.Fatalf("lane %s: runs of both arms failed", rec.Lane)
		}
		failed[rec.Lane] = rec.Arm
	}
}

func TestRunnerStopsWhenAnArmChanges(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: &fakeStarter{}, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers,
		CheckArms: func() error {
			calls++
			if calls == 3 {
				return errors.New("arm cand: rebuilt")
			}
			return nil
		}}
	out, err := r.Run(context.Background())
	if err == nil || err.Error() != "arm cand: rebuilt" || out.Ran != 8 {
		t.Fatalf("err = %v after %d runs, want the check's error after two passes (8 runs)", err, out.Ran)
	}
}

// noCleanUp stands for CleanUp in tests that check every warning: the real one would
// report what other tests' killed runs left on the machine.
func noCleanUp(string) ([]string, error) { return nil, nil }

// noSpaceStarter fails every run from call number from on as a lane does whose disk is
// full, until it is told the disk has room again.
type noSpaceStarter struct {
	fakeStarter
	from int
	full bool
}

func (f *noSpaceStarter) Start(ctx context.Context, c Command) Process {
	p := f.fakeStarter.Start(ctx, c)
	if f.full && len(f.calls) >= f.from {
		p.Stdout, p.Exit, p.Err = nil, 1, errors.New("exited with status 1")
		p.StderrTail = "writing /tmp/lane-cache: write /tmp/lane-cache: no space left on device"
	}
	return p
}

// A lane that fails because the disk is full stops the run: the run is not recorded as a
// failure of the code, the error names the file systems, and a resume measures it again.
func TestRunnerStopsOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	fs := &noSpaceStarter{from: 6, full: true}
	r := &Runner{Dir: dir, Plan: testPlan(), Starter: fs, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers, CleanUp: noCleanUp}
	_, err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no space left on device (the lane said \"writing /tmp/lane-cache: write /tmp/lane-cache: no space left on device\"); the run stopped without recording it, so a resume measures it again; free space on ") ||
		!strings.Contains(err.Error(), " free of ") {
		t.Fatalf("err = %v, want the full disk named", err)
	}
	recs, _ := receipt.ReadRecords(dir)
	if len(recs) != 5 {
		t.Fatalf("%d runs recorded, want the 5 before the disk filled", len(recs))
	}
	for _, rec := range recs {
		if !rec.OK() {
			t.Fatalf("a failed run was recorded: %+v", rec)
		}
	}
	fs.full = false
	out, err := r.Run(context.Background())
	if err != nil || out.Failed != 0 || out.Ran+out.Resumed != 16 {
		t.Fatalf("resume: %+v, %v; want all 16 runs, none failed", out, err)
	}
}

// A run recorded as failed for want of space (by an older flipbench) is measured again by
// a resume, with its comparison group.
func TestRunnerRemeasuresRecordedNoSpaceRuns(t *testing.T) {
	dir := t.TempDir()
	plan := testPlan()
	log, _, err := receipt.Folder(dir).OpenLog()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range plan.Runs[:4] {
		rec := receipt.Record{Collection: run.Collection, Pass: run.Pass, Order: run.Order, Arm: run.Arm, Lane: run.Lane, Samples: []float64{1, 2, 3}, Unit: "ns/op"}
		if run.Arm == "cand" && run.Lane == plan.Runs[0].Lane {
			rec.Samples, rec.Error = []float64{}, "printed 0 results, want 3"
			rec.StderrTail = "open /tmp/x: no space left on device"
		}
		log.Append(rec)
	}
	log.Close()
	ev := &nopEvents{}
	r := &Runner{Dir: dir, Plan: plan, Starter: &fakeStarter{}, Events: ev, Capture: quietHost, Others: quietOthers, CleanUp: noCleanUp}
	out, err := r.Run(context.Background())
	if err != nil || out.Failed != 0 || out.Resumed != 2 || out.Ran != 14 {
		t.Fatalf("outcome %+v, %v; want the no-space group measured again (2 resumed, 14 ran, none failed)", out, err)
	}
	if len(ev.warnings) == 0 || !strings.Contains(ev.warnings[0], "re-measuring 2 runs") {
		t.Fatalf("warnings %q", ev.warnings)
	}
}

// A lane that fails without saying why, while a file system it writes to is full, stops
// the run as a full disk does: /proc, the lane's $TMPDIR here, always has 0 bytes free.
func TestRunnerStopsWhenALaneFailsOnAFullFileSystem(t *testing.T) {
	dir := t.TempDir()
	plan := testPlan()
	for i := range plan.Arms {
		plan.Arms[i].Env = []string{"TMPDIR=/proc"}
	}
	fs := &fakeStarter{fail: map[string]bool{"a/cand": true, "b/cand": true}}
	r := &Runner{Dir: dir, Plan: plan, Starter: fs, Events: &nopEvents{}, Capture: quietHost, Others: quietOthers, CleanUp: noCleanUp}
	_, err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `no space left on device (the lane said "boom")`) || !strings.Contains(err.Error(), "free space on /proc: 0 bytes free of 0 bytes") {
		t.Fatalf("err = %v, want the full file system named", err)
	}
	recs, _ := receipt.ReadRecords(dir)
	for _, rec := range recs {
		if !rec.OK() {
			t.Fatalf("a failed run was recorded: %+v", rec)
		}
	}
}
