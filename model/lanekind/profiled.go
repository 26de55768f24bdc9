package lanekind

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// The environment variables that ask an exec lane for profiles: a lane program that
// honours them writes a CPU profile of its whole process to the file CPUProfileEnv names,
// and an allocation profile (runtime/pprof's "allocs") to the file MemProfileEnv names
// when it exits, both in the format runtime/pprof writes. flipbench sets them only in the
// extra profiled process it runs after the measured ones (docs/profiles.md); a lane that
// ignores them writes no profile, which the receipt then says.
const (
	CPUProfileEnv = "FLIPBENCH_CPUPROFILE"
	MemProfileEnv = "FLIPBENCH_MEMPROFILE"
)

// ProfileFiles names the profiles one profiled process writes; an empty name asks for
// none of that kind.
type ProfileFiles struct {
	// CPU is the CPU profile's file.
	CPU string
	// Mem is the allocation profile's file: every allocation is recorded (a memory
	// profile rate of 1), so the bytes allocated per site are counted, not sampled.
	Mem string
}

// Profile asks the test binary with its flags: -test.cpuprofile, and -test.memprofile
// with -test.memprofilerate 1.
func (gotestKind) Profile(r Run, f ProfileFiles) Proc {
	argv := append([]string(nil), r.Argv...)
	if f.CPU != "" {
		argv = append(argv, "-test.cpuprofile", f.CPU)
	}
	if f.Mem != "" {
		argv = append(argv, "-test.memprofile", f.Mem, "-test.memprofilerate", "1")
	}
	return Proc{Argv: argv, Env: append([]string(nil), r.Env...)}
}

// Profile asks the lane program with the environment (CPUProfileEnv, MemProfileEnv),
// and records every allocation with GODEBUG=memprofilerate=1.
func (execKind) Profile(r Run, f ProfileFiles) Proc {
	env := append([]string(nil), r.Env...)
	if f.CPU != "" {
		env = append(env, CPUProfileEnv+"="+f.CPU)
	}
	if f.Mem != "" {
		env = append(env, MemProfileEnv+"="+f.Mem, withGODEBUG(r.Env, "memprofilerate=1"))
	}
	return Proc{Argv: append([]string(nil), r.Argv...), Env: env}
}

// withGODEBUG returns the GODEBUG assignment of env (KEY=VALUE) with setting added after
// what the arm sets, which it overrides.
func withGODEBUG(env []string, setting string) string {
	var parts []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			parts = nil
			if v != "" {
				parts = append(parts, v)
			}
		}
	}
	return "GODEBUG=" + strings.Join(append(parts, setting), ",")
}

// Operations of a gotest lane: the b.N of every repetition it printed, warmup ones
// included, since the profile covers them all, and the call with b.N = 1 that the testing
// package makes before the printed one in a repetition whose b.N is more than 1. That is
// exact for a count benchtime (100x: 1 + 100 operations a repetition); under a duration
// benchtime the ramp's steps between them are not counted (they sum to about 1% of the
// last step when it grows b.N a hundredfold, more when it grows less).
func (gotestKind) Operations(r Run, out Output) (int, error) {
	return printedIterations(out.Stdout, r.Lane, r.Samples+r.Warmup, 0, true)
}

// Operations of an exec lane: the iterations of every result it printed, and its warmup
// operations, which print nothing, counted at the mean iterations of a printed one.
func (execKind) Operations(r Run, out Output) (int, error) {
	return printedIterations(out.Stdout, r.Lane, r.Samples, r.Warmup, false)
}

// printedIterations sums the iteration counts of the want results lane printed in out,
// one more for each result of more than one iteration when firstCall (the testing
// package's call with b.N = 1), and adds unprinted operations at the mean count of a
// printed one. A result of another benchmark, or a count other than want, is an error.
func printedIterations(out []byte, lane string, want, unprinted int, firstCall bool) (int, error) {
	rd := benchfmt.NewReader(bytes.NewReader(out), "stdout")
	n, total := 0, 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return 0, fmt.Errorf("output line %d: %s", rec.Line, rec.Msg)
		case *benchfmt.Result:
			_, line := rec.Pos()
			if !ownResult(rec.Name, lane) {
				return 0, fmt.Errorf("output line %d: Benchmark%s is not this lane's benchmark (want Benchmark%s)", line, rec.Name.Full(), lane)
			}
			n++
			total += max(rec.Iters, 1)
			if firstCall && rec.Iters > 1 {
				total++
			}
		}
	}
	if err := rd.Err(); err != nil {
		return 0, fmt.Errorf("reading output: %v", err)
	}
	if n != want {
		return 0, fmt.Errorf("printed %d results, want %d", n, want)
	}
	if unprinted > 0 && n > 0 {
		total += int(math.Round(float64(unprinted) * float64(total) / float64(n)))
	}
	return total, nil
}
