// Package cli is flipbench's command tree. Each verb lives in its own file with the same
// shape: an options struct, newXxxCmd that parses and validates flags, and runXxx that does
// the work by calling the library packages. Only this package imports cobra, prints, or
// decides exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// Streams are the standard streams a command reads and writes, and the clock it reads.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	// ErrIsTerminal says whether Err is a terminal (live progress bars) or a log (plain lines).
	ErrIsTerminal bool
	// OutIsTerminal says whether Out is a terminal (tables that wrap to its width) or a
	// file or pipe (markdown, for a comment).
	OutIsTerminal bool
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Clock is the one clock of the command (package clock), passed down to everything
	// it runs; nil is the machine's. A test fakes time here.
	Clock clock.Clock
	// Method is the analysis method new runs are planned with and pages are re-analysed
	// with; nil is this build's (driftcheck.CurrentMethod). A test makes another
	// flipbench's analysis here.
	Method *driftcheck.Method

	argv []string // the command line after the program name, recorded in receipts
	// verbose is set by -v: a log gets a line per process, not a line per round.
	verbose *bool
}

// Verbose reports whether -v was given.
func (s Streams) Verbose() bool { return s.verbose != nil && *s.verbose }

// StdStreams returns the process's standard streams.
func StdStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTerminal: isTerminal(os.Stderr), OutIsTerminal: isTerminal(os.Stdout), Getenv: os.Getenv, Clock: clock.Real()}
}

// method returns the analysis method of this flipbench: Streams.Method, else the build's
// current method with its version.
//
// $FLIPBENCH_INTERFERENCE=off plans runs without the interference rule (the method's
// interference part empty: no sample is set aside for waiting for a CPU), for a machine
// that runs many flipbench processes at once on purpose (the test scripts), where the
// waiting is theirs; the plan records it.
func (s Streams) method() driftcheck.Method {
	m := driftcheck.CurrentMethod("")
	if s.Method != nil {
		m = *s.Method
	} else {
		bi, _ := debug.ReadBuildInfo()
		m.Version = moduleVersion(buildVersion, bi)
	}
	if s.getenv("FLIPBENCH_INTERFERENCE") == "off" {
		m.Interference = ""
	}
	return m
}

func (s Streams) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Exit codes. They are set here and nowhere else.
const (
	ExitOK           = 0
	ExitError        = 1
	ExitUsage        = 2
	ExitRegression   = 3
	ExitInconclusive = 4
)

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks an error in the command line (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// Main runs flipbench with args and returns the process exit code. Errors are printed
// once, as "flipbench: ...".
func Main(args []string, s Streams) int {
	s.argv = args
	if s.verbose == nil {
		s.verbose = new(bool)
	}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return ee.code
	}
	fmt.Fprintf(s.Err, "flipbench: %v\n", err)
	if errors.As(err, &ee) {
		return ee.code
	}
	if isFlagError(err) {
		return ExitUsage
	}
	return ExitError
}

// silentExit ends the command with code and no further message (the command already
// said what happened).
func silentExit(code int) error { return &exitError{code: code} }

func newRootCmd(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "flipbench",
		Short: "Performance experiments you can trust: order-flipped A/B runs, drift check, receipts",
		Long: `flipbench builds base and candidate versions of a benchmark harness, runs every lane
of every arm in its own process in order-flipped pass pairs across collections, labels each
pass-pair REPRODUCED or drift-suspected, and writes receipts that benchstat can re-check.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	if s.verbose != nil {
		root.PersistentFlags().BoolVarP(s.verbose, "verbose", "v", false, "in a log (stderr not a terminal), a line for every process, not one a round")
	}
	root.Version = versionText()
	root.SetVersionTemplate("flipbench {{.Version}}\n")
	root.AddCommand(
		newVersionCmd(s),
		newAbCmd(s),
		newCompareCmd(s),
		newBisectCmd(s),
		newBuildCmd(s),
		newArchiveCmd(s),
		newDriftCmd(s),
		newGateCmd(s),
		newFinalizeCmd(s),
		newNewCmd(s),
		newInitCmd(s),
		newLedgerCmd(s),
		newCheckCmd(s),
		newSiteCmd(s),
		newIncidenceCmd(s),
		newCalibrateCmd(s),
		newPlanCmd(s),
		newDoctorCmd(s),
		newMergeCmd(s),
	)
	return root
}

// isFlagError reports whether err is a usage error: one of ours or the pipeline's
// (pipeline.RequestError), or one of cobra's
// command-line complaints (an unknown command, a wrong number of arguments), which cobra
// returns as plain errors.
func isFlagError(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code == ExitUsage
	}
	var re *pipeline.RequestError
	if errors.As(err, &re) {
		return true // a request's value set by a flag
	}
	msg := err.Error()
	for _, prefix := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least ", "requires at most ", "invalid argument "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
