// Command freshness checks and runs the bundled freshness scheduler's scenarios
// (package examples/freshness).
//
//	freshness doctor [-scenario NAME] [contract flags]
//	freshness run [-scenario NAME] [contract flags] [-policy P] [-seed N] [-real -scale F]
//
// doctor reports an over-committed contract before anything runs, with its numbers, and
// exits 1 when it finds one (0 when the contract holds). run runs the scenario with each
// policy (or the one named) and prints the counters; by default on the deterministic
// virtual clock, with -real on goroutines and timers, one scenario second taking -scale
// wall seconds. The contract flags (-workers, -p50, -p99, -max-age, -transport, -load,
// -queue, -duration) change the named scenario (default A). Exit status 2 is a usage
// error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/flipbench/flipbench/examples/freshness"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// errUsage marks an error the usage text explains.
var errUsage = errors.New("usage")

// run runs the command and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: freshness doctor|run [-scenario A|comfortable|underload] [flags]; freshness run -h lists the flags"
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var code int
	var err error
	switch args[0] {
	case "doctor":
		code, err = doctor(args[1:], stdout, stderr)
	case "run":
		code, err = runScenario(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "freshness: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
	switch {
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "freshness: %v\n", err)
		return 2
	}
	return code
}

// contract holds the flags that pick and change a scenario.
type contract struct {
	name                                  string
	workers, queue                        int
	p50, p99, maxAge, transport, duration time.Duration
	load                                  float64
	fs                                    *flag.FlagSet
}

// flags registers the contract flags on fs.
func (c *contract) flags(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.name, "scenario", "A", "the scenario: A, comfortable or underload")
	fs.IntVar(&c.workers, "workers", 0, "workers (default: the scenario's)")
	fs.IntVar(&c.queue, "queue", 0, "frames that may wait for a worker (default: the scenario's)")
	fs.DurationVar(&c.p50, "p50", 0, "the runtime profile's p50 (default: the scenario's)")
	fs.DurationVar(&c.p99, "p99", 0, "the runtime profile's p99 (default: the scenario's)")
	fs.DurationVar(&c.maxAge, "max-age", 0, "max_age (default: the scenario's)")
	fs.DurationVar(&c.transport, "transport", -1, "transport delay (default: the scenario's)")
	fs.DurationVar(&c.duration, "duration", 0, "span of scenario time frames are generated over (default: the scenario's)")
	fs.Float64Var(&c.load, "load", 0, "load factor, 1.25 for 125% (default: the scenario's)")
}

// scenario returns the named scenario with the flags that were set applied.
func (c *contract) scenario() (freshness.Scenario, error) {
	sc, ok := freshness.LookupScenario(c.name)
	if !ok {
		var names []string
		for _, s := range freshness.Scenarios() {
			names = append(names, s.Name)
		}
		return sc, fmt.Errorf("-scenario %s: unknown scenario (have %s)", c.name, strings.Join(names, ", "))
	}
	sc.Variants = append([]freshness.Variant(nil), sc.Variants...)
	c.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "workers":
			sc.Workers = c.workers
		case "queue":
			sc.QueueCap = c.queue
		case "p50":
			sc.Variants[0].P50 = c.p50
		case "p99":
			sc.Variants[0].P99 = c.p99
		case "max-age":
			sc.MaxAge = c.maxAge
		case "transport":
			sc.Transport = c.transport
		case "duration":
			sc.Duration = c.duration
		case "load":
			sc.Load = c.load
		}
	})
	return sc, sc.Validate()
}

// parse parses args, refusing positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "freshness %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	return nil
}

// doctor runs the contract checks and prints them; over-committed exits 1.
func doctor(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c contract
	c.flags(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	sc, err := c.scenario()
	if err != nil {
		return 0, err
	}
	d, err := freshness.Doctor(sc)
	if err != nil {
		return 0, err
	}
	verdict := "the contract holds"
	if d.OverCommitted() {
		verdict = fmt.Sprintf("over-committed (%d of %d checks failed)", len(d.Failed()), len(d.Findings))
	}
	fmt.Fprintf(stdout, "scenario %s: %s\n", sc.Name, verdict)
	for _, f := range d.Findings {
		fmt.Fprintf(stdout, "  %s\n", f)
	}
	if d.OverCommitted() {
		return 1, nil
	}
	return 0, nil
}

// runScenario runs the scenario with each policy, or the one named, and prints the counters.
func runScenario(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c contract
	c.flags(fs)
	policy := fs.String("policy", "", "fifo, pessimistic or optimistic (default: all three)")
	seed := fs.Uint64("seed", 1, "the seed of the frames' runtimes")
	live := fs.Bool("real", false, "run on goroutines and timers instead of the virtual clock")
	scale := fs.Float64("scale", 0.25, "with -real: wall seconds per scenario second")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	sc, err := c.scenario()
	if err != nil {
		return 0, err
	}
	policies := freshness.Policies()
	if *policy != "" {
		p, err := freshness.ParsePolicy(*policy)
		if err != nil {
			return 0, fmt.Errorf("-policy: %w", err)
		}
		policies = []freshness.Policy{p}
	}
	clock := "virtual clock"
	if *live {
		clock = fmt.Sprintf("real clock, scale %g", *scale)
	}
	fmt.Fprintf(stdout, "scenario %s, seed %d, %s: %d frames over %v\n", sc.Name, *seed, clock, sc.Frames(), sc.Duration)
	for i, p := range policies {
		var clk freshness.Clock = freshness.NewVirtualClock()
		if *live {
			rc, err := freshness.NewRealClock(*scale)
			if err != nil {
				return 0, fmt.Errorf("-scale: %w", err)
			}
			clk = rc
		}
		st, err := freshness.Run(context.Background(), clk, sc, p, *seed)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			// Run has the doctor check the contract before every run; say what it found
			fmt.Fprintf(stdout, "  doctor      %s\n", verdict(st.Doctor))
		}
		fmt.Fprintf(stdout, "  %-11s %s\n", p, summary(st))
	}
	return 0, nil
}

// verdict states the doctor's diagnosis in one line.
func verdict(d freshness.Diagnosis) string {
	if !d.OverCommitted() {
		return "the contract holds"
	}
	var failed []string
	for _, f := range d.Failed() {
		failed = append(failed, f.Check)
	}
	return "over-committed (" + strings.Join(failed, ", ") + " failed): see freshness doctor"
}

// summary states a run's counters in one line.
func summary(st freshness.Stats) string {
	ages := "age at delivery -"
	if p50, ok := st.AgeQuantile(0.5); ok {
		p99, _ := st.AgeQuantile(0.99)
		ages = fmt.Sprintf("age at delivery p50 %s p99 %s", ms(p50), ms(p99))
	}
	return fmt.Sprintf("%d usable (%.4g/s, %.1f%% of frames), %d completed obsolete, %d discarded before dispatch, %d superseded; %d past the promise, %d variant switches; stale compute %s of %s; %s",
		st.Usable, st.UsablePerSecond(), 100*float64(st.Usable)/float64(max(st.Frames, 1)), st.CompletedObsolete, st.DiscardedBeforeDispatch, st.Superseded,
		st.DeadlineMissed, st.Switches, ms(st.StaleCompute), ms(st.Compute), ages)
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.4g ms", float64(d)/float64(time.Millisecond)) }
