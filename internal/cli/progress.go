package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// progress shows a run's progress on stderr: a live bar on a terminal, one plain line per
// run otherwise (CI logs). It implements harness.Events.
type progress struct {
	w    io.Writer
	live bool
	p    *mpb.Progress
	bar  *mpb.Bar

	mu    sync.Mutex // label is read by mpb's render goroutine
	label string

	start time.Time // when Begin was called
	first int       // runs already done then (resumed)

	// rule is a sequential run's stopping rule (nil for a fixed protocol): its budget
	// caps the runs progress counts against.
	rule *spec.Sequential
}

// setProtocol tells the progress the run's resolved protocol, before Begin.
func (p *progress) setProtocol(pr spec.Protocol) { p.rule = pr.Sequential }

func newProgress(s Streams) *progress {
	return &progress{w: s.Err, live: s.ErrIsTerminal}
}

func (p *progress) Begin(total, done int) {
	p.start, p.first = time.Now(), done
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
			decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO),
			decor.Any(func(decor.Statistics) string { return "  " + p.currentLabel() })),
	)
	p.bar.SetCurrent(int64(done))
}

func (p *progress) RunDone(n, total int, rec receipt.Record) {
	line := fmt.Sprintf("c%d p%d %-7s %s/%s", rec.Collection, rec.Pass, rec.Order, rec.Lane, rec.Arm)
	if rec.OK() {
		line += " median " + human.Value(driftcheck.Median(rec.Samples), rec.Unit)
	} else {
		line += " FAILED"
	}
	if p.live {
		p.mu.Lock()
		p.label = line
		p.mu.Unlock()
		p.bar.SetCurrent(int64(n))
		return
	}
	fmt.Fprintf(p.w, "flipbench: run %s: %s\n", p.count(n, total), line)
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

// Look prints a sequential run's look: the round, each lane's pooled verdict, and what
// comes next.
func (p *progress) Look(l receipt.Look) {
	var parts []string
	for _, ll := range l.Lanes {
		parts = append(parts, fmt.Sprintf("%s/%s %s %s", ll.Lane, ll.Arm, ll.Verdict, human.Delta(ll.EstimatePct)))
	}
	next := fmt.Sprintf("next round: %s", strings.Join(l.Pending, ", "))
	if l.Stop != "" {
		next = "stop: " + l.Stop
	}
	p.note("look after round %d (%s measured): %s; %s", l.Round, l.Elapsed.Round(time.Second), strings.Join(parts, ", "), next)
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

// count says which run this is, of how many, how long the run has taken and about how
// long the rest will take, from the runs this session made: "7/48 (elapsed 3s, ETA
// 16s)"; for a sequential run whose budget ends it before its last round, against the
// runs the budget can run: "25/~96 (the 10m0s budget runs about 4 of at most 20 rounds;
// elapsed 1m2s, ETA 3m4s)".
func (p *progress) count(n, total int) string {
	el := time.Since(p.start)
	made := n - p.first
	if made <= 0 {
		return fmt.Sprintf("%d/%d (elapsed %s, ETA ?)", n, total, el.Round(time.Second))
	}
	perRun := el / time.Duration(made)
	end, rounds := p.budgetRuns(n, total, el, perRun)
	eta := (perRun * time.Duration(end-n)).Round(time.Second)
	if end < total {
		return fmt.Sprintf("%d/~%d (the %s budget runs about %d of at most %d rounds; elapsed %s, ETA %s)",
			n, end, time.Duration(p.rule.Budget), rounds, p.rule.MaxPairs, el.Round(time.Second), eta)
	}
	return fmt.Sprintf("%d/%d (elapsed %s, ETA %s)", n, total, el.Round(time.Second), eta)
}

// budgetRuns returns the runs the budget can run at perRun a run (whole rounds, at least
// n, at most total) and the rounds they make; total when there is no budget.
func (p *progress) budgetRuns(n, total int, el, perRun time.Duration) (runs, rounds int) {
	r := p.rule
	if r == nil || r.Budget <= 0 || r.MaxPairs <= 0 || total%r.MaxPairs != 0 || perRun <= 0 {
		return total, 0
	}
	perRound := total / r.MaxPairs
	left := max(time.Duration(r.Budget)-el, 0)
	rounds = min(r.MaxPairs, (n+int(left/perRun))/perRound)
	rounds = max(rounds, (n+perRound-1)/perRound)
	return min(total, max(n, rounds*perRound)), rounds
}
