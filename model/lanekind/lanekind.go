// Package lanekind is the one place where lane kinds differ. A harness's kind (the
// harness.kind of a spec: gotest or exec) decides
//
//   - which harness fields it needs and allows (Kind.Check),
//   - how a git arm of it is built: the build command, the binary's name, whether the go
//     command and the package's testdata/ are part of the build (Kind.Build),
//   - the command that runs one lane in one process (Kind.Command),
//   - how the lanes of a built binary are listed, if they can be (Kind.ListArgs,
//     Kind.Lanes, Kind.Offers),
//   - whether its lanes are b.N loops, and with which benchtime (Kind.Benchtime),
//   - which processes one run starts and how their output becomes samples (Kind.Prepare,
//     Kind.Collect),
//   - which functions delimit one operation when the lane's instructions are counted
//     (Kind.Counter),
//   - how one extra process of a lane writes CPU and allocation profiles, and how many
//     operations it ran (Kind.Profile, Kind.Operations).
//
// A lane with metric: instructions runs its kind wrapped in the instruction counter
// (Counted, through ForLane): the same command natively and then under Valgrind's
// callgrind, whose dumps give instructions per operation (see Counted and
// docs/instructions.md).
//
// lanekind starts no process: it says which processes a run, a listing or a profile
// starts (Kind.Prepare, Kind.ListArgs, Kind.Profile) and reads what they printed
// (Kind.Collect, Kind.Lanes), and package harness, which imports it, starts them through
// harness.Starter (harness.RunOnce, harness.ListLanes; harness.Valgrind checks that
// Valgrind can run).
//
// The packages that build and run lanes (spec, armbuild, harness, the CLI) ask a Kind
// found with Lookup or ForLane; none of them compares a kind's name. A new kind is one
// file holding a type that implements Kind, and one entry in Kinds.
//
// Every kind's lanes print Go benchmark format, read by ParseOutput.
package lanekind

import (
	"fmt"
	"strings"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
)

// Names of the kinds, as written in harness.kind.
const (
	// Exec is any program speaking the Go benchmark format, run by a command template.
	Exec = "exec"
	// Gotest is Go benchmarks compiled with go test -c.
	Gotest = "gotest"
)

// Kinds returns every kind, in the order they are listed to users.
func Kinds() []Kind { return []Kind{execKind{}, gotestKind{}} }

// Names returns the names of every kind, in the order of Kinds.
func Names() []string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name())
	}
	return names
}

// Lookup returns the kind called name.
func Lookup(name string) (Kind, error) {
	for _, k := range Kinds() {
		if k.Name() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown harness kind %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Kind is how the lanes of one harness kind are checked, built, listed, run and read.
type Kind interface {
	// Name is the kind's value of harness.kind.
	Name() string
	// Check returns what is wrong with the kind-specific fields of h, each problem naming
	// its field relative to the harness ("command"). gate says the harness is a gate
	// spec's, whose arms are always built from git.
	Check(h Harness, gate bool) []Problem
	// Build says how a git arm of h is built. A harness that cannot be built from git
	// (an exec harness without a build command) returns a problem naming the field.
	Build(h Harness) (Build, *Problem)
	// Command returns the command template that runs one lane of h in one process, with
	// the placeholders of Placeholders unexpanded.
	Command(h Harness) []string
	// ListArgs returns the command that lists the lanes of the binary bin, or nil
	// (whatever bin is) when the kind cannot list its lanes.
	ListArgs(bin string) []string
	// Lanes returns the lane names in the output of the ListArgs command.
	Lanes(listing []byte) []string
	// Offers reports whether lane is among the listed lanes (or inside one of them, as a
	// sub-benchmark is inside its benchmark).
	Offers(listed []string, lane string) bool
	// Benchtime returns the -test.benchtime a lane command of the kind (an arm's
	// command, as Command returns it) gives its b.N loops, and false when the kind's
	// lanes have no b.N loop, so no benchtime to warn about.
	Benchtime(command []string) (string, bool)
	// Counter says how the instruction counter finds the operations of lane of h (for
	// metric: instructions), or why it cannot: a problem naming its field (relative to
	// the harness, or "" for the lane itself).
	Counter(h Harness, lane string) (receipt.Counter, *Problem)
	// Prepare returns the processes of one run, in the order they are started.
	Prepare(r Run) []Proc
	// Collect turns the finished processes of one run (one Output per Proc of Prepare, in
	// order) into the run's samples, or says why they give none.
	Collect(r Run, outs []Output) (Samples, error)
	// Profile returns the one process that runs r once more, natively, writing the
	// profiles f names (docs/profiles.md): never a measured run.
	Profile(r Run, f ProfileFiles) Proc
	// Operations returns how many operations the process of Profile ran, read from its
	// output: what its profiles are divided by to give costs per operation.
	Operations(r Run, out Output) (int, error)
}

// Harness is what a kind reads of a harness spec (spec.Harness).
type Harness struct {
	Kind string
	// Package is the Go package of the lanes (gotest), or the source directory copied
	// over every arm (exec).
	Package string
	// Command is an exec harness's command template.
	Command []string
	// Build is an exec harness's build command template.
	Build []string
	// Benchtime is a gotest harness's -test.benchtime.
	Benchtime string
	// OpStart and OpEnd are the functions an exec harness's lane program calls right
	// before and right after each operation, for its instruction-count lanes.
	OpStart, OpEnd string
}

// Problem is one thing wrong with a harness: the field, relative to the harness
// ("command"), and what is wrong with it.
type Problem struct {
	Field string
	Msg   string
}

// Build says how a git arm is built.
type Build struct {
	// Template is the build command, run in the arm's worktree, with the placeholders
	// {out} (the binary to write), {src}, {tags}, {ldflags} and {pkg} (the harness
	// package as a go package argument). A flag followed by a placeholder that expands to
	// nothing is left out.
	Template []string
	// Bin is the file name of the binary.
	Bin string
	// NeedsGo says the build runs the go command, so the go toolchain is part of the
	// build's cache key and its absence an error.
	NeedsGo bool
	// TestsOnly says only the _test.go files and testdata/ of the harness package are
	// harness source: the package's other files belong to the arm.
	TestsOnly bool
	// Testdata says the lanes run in the harness package's folder, where its testdata/
	// is (as go test runs them), so a cached build keeps a copy of it.
	Testdata bool
}

// Placeholders returns the placeholders of a lane command template. {bench} is the
// lane's go test -bench expression, each level of its name anchored (BenchPattern).
func Placeholders() []string {
	return []string{"{bin}", "{lane}", "{bench}", "{samples}", "{warmup}", "{count}", "{arm}", "{pass}", "{collection}"}
}

// BuildPlaceholders returns the placeholders of a build command template that a spec
// may write (exec's harness.build); {pkg} is the gotest build's own.
func BuildPlaceholders() []string { return []string{"{out}", "{src}", "{tags}", "{ldflags}"} }

// Run is one run of one lane, as the run loop hands it to its kind.
type Run struct {
	// Lane is the lane's name.
	Lane string
	// Argv is the arm's command template expanded for this run, with the arm's args.
	Argv []string
	// Env is added to the environment of the run's processes (the arm's env).
	Env []string
	// Scratch is an empty directory private to the run, removed after Collect.
	Scratch string
	// Samples and Warmup are the protocol's recorded and unrecorded operations.
	Samples, Warmup int
	// Unit selects the printed metric that becomes the samples; empty means the first.
	Unit string
	// Iterations, when above 0, is the b.N every sample runs (receipt.Lane.Iterations):
	// a gotest run replaces its command's -test.benchtime with Nx.
	Iterations int
}

// Proc is one process to start: its command and what is added to its environment.
type Proc struct {
	Argv []string
	Env  []string
}

// Output is one finished process.
type Output struct {
	Stdout  []byte
	Started time.Time
	Ended   time.Time
}

// runOnce is Prepare for the kinds that run the lane's command as it is, in one process.
func runOnce(r Run) []Proc { return []Proc{{Argv: r.Argv, Env: r.Env}} }

// one returns the only output of a one-process run.
func one(outs []Output) (Output, error) {
	if len(outs) != 1 {
		return Output{}, fmt.Errorf("internal error: %d process outputs for a one-process run", len(outs))
	}
	return outs[0], nil
}
