// Package clock is flipbench's one clock: the time a run reads for what it records. That
// is every stamp (a receipt folder's name, a page's date, a host snapshot's time, a
// build's time, the machine lock's holder) and every duration a receipt or the progress
// line shows (a process's start and end, a build's seconds, the iteration calibration,
// the time a run has taken).
//
// The command line makes the clock once (cli.Streams.Clock, the machine's) and passes it
// down: pipeline.Options.Clock, which the pipeline hands to harness (Runner.Clock,
// ExecStarter.Clock) and armbuild (Options.Clock). A test fakes time by passing another
// Clock at the top (Fixed, or a function of its own); nothing below makes a clock of its
// own.
//
// Timeouts are not read from it. How long to wait for the machine lock, a process or the
// kernel is measured by Go's timers (context.WithTimeout, time.NewTimer) on the machine's
// monotonic clock, so a fake clock never keeps a wait from ending, nor a real one from
// being bounded.
package clock

import "time"

// Clock returns the current time. Its zero value (nil) is the machine's clock, so a struct
// whose Clock field is unset tells the real time.
type Clock func() time.Time

// Real returns the machine's clock: what the command line passes down.
func Real() Clock { return time.Now }

// Fixed returns a clock that always says t.
func Fixed(t time.Time) Clock { return func() time.Time { return t } }

// Now returns the current time on c: the machine's when c is nil.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}

// Since returns the time elapsed on c since t.
func (c Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
