package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// progress shows a run's progress on stderr: a live bar on a terminal; in a log (CI),
// the looks' lines, one a round, or a line every tenth of a run without looks, and a
// line per process only with -v (verbose) or for a failed one. It implements
// harness.Events.
type progress struct {
	w       io.Writer
	live    bool
	verbose bool
	// tenths is the tenths of the plan's runs a log without -v has reported.
	tenths int
	// verdicts are each lane's verdict at the previous look ("lane/arm"), so that a
	// look's line names what changed.
	verdicts map[string]string
	p        *mpb.Progress
	bar      *mpb.Bar

	mu    sync.Mutex // label is read by mpb's render goroutine
	label string

	clock clock.Clock // times the run (Streams.Clock)
	start time.Time   // when Begin was called
	first int         // runs already done then (resumed)

	budget time.Duration // a sequential run's budget (Forecast), 0 for none

	// A sequential run's reach: the runs its budget can run (Forecast: the rounds it
	// buys), updated after each look for the lanes still pending; 0 when unknown.
	reach, rounds, perLane, done int
	// again counts the runs that measured a set-aside pass again (Record.Attempt > 0):
	// they are outside the plan's count, so "run n/total" counts the others.
	again int
	// maxPairs is the rule's last round; lastElapsed and lastLanes the measured time and
	// the lanes of the rounds before the latest look, which size the rounds left.
	maxPairs    int
	minPairs    int // the rule's first look: rounds before it decide nothing
	lastElapsed time.Duration
	lastLanes   int
}

// setProtocol tells the progress the run's resolved protocol, before Begin: a sequential
// run's budget caps the ETA until the forecast (Forecast) says more.
func (p *progress) setProtocol(pr spec.Protocol) {
	if pr.Sequential != nil {
		p.budget = time.Duration(pr.Sequential.Budget)
	}
}

func newProgress(s Streams) *progress {
	return &progress{w: s.Err, live: s.ErrIsTerminal, verbose: s.Verbose(), clock: s.Clock}
}

func (p *progress) Begin(total, done int) {
	p.start, p.first = p.clock.Now(), done
	if done > 0 {
		fmt.Fprintf(p.w, "flipbench: resuming: %d of %d runs already on disk\n", done, total)
	}
	if !p.live {
		return
	}
	p.p = mpb.New(mpb.WithOutput(p.w), mpb.WithWidth(40))
	p.bar = p.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.CountersNoUnit("runs %d/%d ")),
		mpb.AppendDecorators(decor.Percentage(), decor.Name(" elapsed "), decor.Elapsed(decor.ET_STYLE_GO),
			decor.Name(" ETA "), decor.Any(func(st decor.Statistics) string { return p.eta(int(st.Current), int(st.Total)) }),
			decor.Any(func(decor.Statistics) string { return "  " + p.currentLabel() })),
	)
	p.bar.SetCurrent(int64(done))
}

func (p *progress) RunDone(n, total int, rec receipt.Record) {
	line := fmt.Sprintf("c%d p%d %-7s %s/%s", rec.Collection, rec.Pass, rec.Order, rec.Lane, rec.Arm)
	if rec.Attempt > 0 {
		line += " (measured again)"
	}
	if rec.OK() {
		line += " median " + human.Value(driftcheck.Median(rec.Samples), rec.Unit)
	} else {
		line += " FAILED"
	}
	p.mu.Lock()
	if rec.Attempt > 0 {
		p.again++
	}
	again := p.again
	n -= again // the plan's runs done; the runs measured again are counted apart
	p.label, p.done = line, n
	reach := p.reach
	p.mu.Unlock()
	if p.live {
		p.bar.SetCurrent(int64(n))
		return
	}
	if !p.verbose && rec.OK() && !p.tenth(n, total) {
		return
	}
	extra := ""
	if again > 0 {
		extra = fmt.Sprintf(" +%d again (passes measured again)", again)
	}
	if reach > 0 && reach < total {
		// Count against what the budget can run, not what max-pairs allows.
		reach = max(reach, n)
		fmt.Fprintf(p.w, "flipbench: run %d/~%d%s (%s): %s\n", n, reach, extra, p.timing(n, reach), line)
		return
	}
	fmt.Fprintf(p.w, "flipbench: run %d/%d%s (%s): %s\n", n, total, extra, p.timing(n, total), line)
}

// tenth reports whether a log without -v prints run n of total: never in a sequential
// run (its looks print a line a round), else when n reaches another tenth of the runs.
func (p *progress) tenth(n, total int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budget > 0 || p.minPairs > 0 || total <= 0 {
		return false
	}
	if t := n * 10 / total; t > p.tenths {
		p.tenths = t
		return true
	}
	return false
}

func (p *progress) Warn(w receipt.Warning) {
	msg := w.Text
	if p.live {
		// mpb owns the terminal; print above the bar.
		p.p.Write([]byte("flipbench: warning: " + msg + "\n"))
		return
	}
	fmt.Fprintf(p.w, "flipbench: warning: %s\n", msg)
}

func (p *progress) currentLabel() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.label
}

// Finish stops the live bar, if any.
func (p *progress) Finish() {
	if p.p != nil {
		p.bar.Abort(false)
		p.p.Wait()
		p.p = nil
	}
}

// note prints a line above the live bar, or as a plain line.
func (p *progress) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.live && p.p != nil {
		p.p.Write([]byte("flipbench: " + msg + "\n"))
		return
	}
	fmt.Fprintf(p.w, "flipbench: %s\n", msg)
}

// timing says how long the run has taken and about how long the rest will take:
// "elapsed 1m2s, ETA 3m4s".
func (p *progress) timing(n, total int) string {
	return fmt.Sprintf("elapsed %s, ETA %s", p.clock.Since(p.start).Round(time.Second), p.eta(n, total))
}

// eta is about how long the rest of the run takes, from the runs this session made, and
// at most what is left of a sequential run's budget, which ends it first: "3m4s",
// "4m0s (budget)", "?" before the first run.
func (p *progress) eta(n, total int) string {
	el := p.clock.Since(p.start)
	made := n - p.first
	if made <= 0 {
		return "?"
	}
	eta := el / time.Duration(made) * time.Duration(total-n)
	p.mu.Lock()
	budget := p.budget
	p.mu.Unlock()
	if left := budget - el; budget > 0 && left < eta {
		return max(left, 0).Round(time.Second).String() + " (budget)"
	}
	return eta.Round(time.Second).String()
}

// Forecast prints the run's plan before round 1 (and after round 1 when it then knew
// less): lanes, time per round, the rounds the budget buys, each lane's reachable MDE
// and the advice.
func (p *progress) Forecast(f pipeline.Forecast) {
	p.mu.Lock()
	p.budget = f.Budget
	if f.Sequential {
		// Known before round 1 whether or not the time of a round is.
		p.maxPairs, p.minPairs = f.MaxPairs, f.MinPairs
	}
	if f.Sequential && f.PerRound > 0 {
		// A round is a pass pair of every lane in every collection, in every arm.
		p.rounds, p.perLane = f.Rounds, 2*f.Arms*f.Collections
		p.reach = p.done + max(f.Rounds-f.After, 0)*len(f.Lanes)*p.perLane
	}
	if f.After == 0 {
		p.lastLanes = len(f.Lanes) // round 1 measures every lane
	}
	p.mu.Unlock()
	for _, line := range f.Lines() {
		p.note("%s", line)
	}
}

// Note prints one line of the run's notes.
func (p *progress) Note(msg string) { p.note("%s", msg) }
