package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/harness"
)

// waitFlag is --wait [DURATION]: how long a verb that measures waits for the machine lock
// another run holds. Left out, the lock is refused at once (naming its holder); --wait
// alone waits as long as it takes; --wait 10m (or --wait=10m) waits at most ten minutes.
// CI jobs sharing a runner queue this way.
type waitFlag struct {
	d time.Duration
}

// waitForever is --wait's value when it is given without a duration.
const waitForever = "forever"

func (w *waitFlag) String() string {
	switch w.d {
	case 0:
		return "0s"
	case harness.WaitForever:
		return waitForever
	}
	return w.d.String()
}

func (w *waitFlag) Set(s string) error {
	if s == waitForever {
		w.d = harness.WaitForever
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration like 10m, or no value to wait as long as it takes")
	}
	w.d = d
	return nil
}

func (w *waitFlag) Type() string { return "duration" }

// addWaitFlag adds --wait [DURATION] to cmd.
func addWaitFlag(cmd *cobra.Command, w *waitFlag) {
	cmd.Flags().Var(w, "wait", "wait for the machine lock another run holds: as long as it takes, or at most DURATION (--wait 10m)")
	cmd.Flags().Lookup("wait").NoOptDefVal = waitForever
}

// takeWaitArg gives --wait its duration when it was written as a separate word
// ("--wait 10m"): a flag whose value is optional takes only "--wait=10m", so the duration
// lands among the arguments. argv is the command line as typed; the duration is removed
// from args.
func takeWaitArg(w *waitFlag, argv, args []string) ([]string, error) {
	if w.d != harness.WaitForever {
		return args, nil
	}
	i := slices.Index(argv, "--wait")
	if i < 0 || i+1 >= len(argv) || strings.HasPrefix(argv[i+1], "-") {
		return args, nil
	}
	next := argv[i+1]
	if _, err := time.ParseDuration(next); err != nil {
		return args, nil
	}
	j := slices.Index(args, next)
	if j < 0 {
		return args, nil
	}
	if err := w.Set(next); err != nil {
		return nil, usageError("--wait %s: %v", next, err)
	}
	return slices.Delete(slices.Clone(args), j, j+1), nil
}

// acquireLockWait takes the machine-wide measurement lock ($FLIPBENCH_LOCK, or the
// default), waiting for another run's up to wait (0: not at all), and says on stderr
// whom it waits for. It is what every verb that measures calls.
func acquireLockWait(ctx context.Context, s Streams, args []string, dir string, wait time.Duration) (*harness.Lock, error) {
	path := s.getenv("FLIPBENCH_LOCK")
	if path == "" {
		path = harness.DefaultLockPath
	}
	holder := harness.Holder{PID: os.Getpid(), Command: strings.Join(args, " "), Since: s.Clock.Now().UTC(), Dir: dir}
	how := "as long as it takes"
	if wait != harness.WaitForever {
		how = "up to " + wait.String()
	}
	return harness.AcquireLock(ctx, path, holder, harness.LockWait{Max: wait, Waiting: func(msg string) {
		fmt.Fprintf(s.Err, "flipbench: waiting %s for the machine lock: %s\n", how, msg)
	}})
}
