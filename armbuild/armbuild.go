// Package armbuild turns the arms of an experiment spec into runnable binaries.
//
// An arm is either prebuilt (`bin:` a path, relative to the ledger root, or a bare name
// looked up on PATH) or built from git (`ref:` with optional patch, tags, ldflags). Either
// way the result is a receipt.Arm: the binary, its SHA-256, where it came from, and the lane
// command template, so the run loop never needs to know how an arm was made.
package armbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// Options configures Build.
type Options struct {
	// Root is the ledger root: the directory holding experiments/. Relative arm paths
	// (bin, patch) are resolved against it.
	Root string
	// Log receives build progress (one line per arm); nil discards it.
	Log io.Writer
}

// Build resolves or builds every arm of exp, base first, and returns them ready to run.
// Nothing is measured here, so every error is reported before any measurement starts.
func Build(ctx context.Context, exp *spec.Experiment, opts Options) ([]receipt.Arm, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	arms := append([]spec.Arm{exp.Base()}, exp.Candidates()...)
	out := make([]receipt.Arm, 0, len(arms))
	for _, a := range arms {
		var (
			ra  receipt.Arm
			err error
		)
		switch {
		case a.Bin != "":
			ra, err = prebuilt(exp, a, opts)
		default:
			ra, err = buildGit(ctx, exp, a, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("arm %s: %w", a.Name, err)
		}
		out = append(out, ra)
	}
	return out, nil
}

// prebuilt resolves a prebuilt arm's binary and hashes it.
func prebuilt(exp *spec.Experiment, a spec.Arm, opts Options) (receipt.Arm, error) {
	bin, err := resolveBin(opts.Root, a.Bin)
	if err != nil {
		return receipt.Arm{}, err
	}
	sum, err := receipt.HashFile(bin)
	if err != nil {
		return receipt.Arm{}, fmt.Errorf("bin: %w", err)
	}
	ra := newArm(exp, a)
	ra.Bin, ra.SHA256, ra.Source = bin, sum, "prebuilt "+a.Bin
	fmt.Fprintf(opts.Log, "arm %s: prebuilt %s (sha256 %s)\n", a.Name, bin, sum[:12])
	return ra, nil
}

// newArm fills the parts of a receipt.Arm that do not depend on how it was built.
func newArm(exp *spec.Experiment, a spec.Arm) receipt.Arm {
	ra := receipt.Arm{Name: a.Name, Kind: exp.Harness.Kind, Args: a.Args}
	switch exp.Harness.Kind {
	case harness.KindGotest:
		ra.Command = harness.GotestCommand(exp.Harness.Benchtime)
	default:
		ra.Command = exp.Harness.Command
	}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ra.Env = append(ra.Env, k+"="+a.Env[k])
	}
	return ra
}

// resolveBin finds a prebuilt binary: a path with a separator is relative to root; a bare
// name is looked up on PATH, as a shell would.
func resolveBin(root, bin string) (string, error) {
	if !strings.ContainsRune(bin, filepath.Separator) {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("bin %s: not found on PATH", bin)
		}
		return filepath.Abs(p)
	}
	p := bin
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("bin %s: %v (build it first, e.g. with make)", bin, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("bin %s: not an executable file", bin)
	}
	return filepath.Abs(p)
}
