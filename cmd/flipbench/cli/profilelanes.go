package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/analysis/profdiff"
)

// profileLanesFlag is --profile-lanes: which lanes get one more process per arm with
// profiling after the measured runs (docs/profiles.md).
type profileLanesFlag struct {
	v       string
	samples profileSamples
}

func (f *profileLanesFlag) String() string { return f.v }

func (f *profileLanesFlag) Set(s string) error {
	if !profdiff.ValidSelection(s) {
		return usageError("--profile-lanes %q: want %s", s, strings.Join(profdiff.Selections(), ", "))
	}
	f.v = s
	return nil
}

func (f *profileLanesFlag) Type() string { return "which" }

// addProfileLanesFlag adds --profile-lanes to cmd, defaulting to the reproduced lanes,
// and --profile-samples.
func addProfileLanesFlag(cmd *cobra.Command, f *profileLanesFlag) {
	f.v = profdiff.SelectReproduced
	cmd.Flags().Var(f, "profile-lanes", "after the measured runs, profile one more process per arm of these lanes: "+
		strings.Join(profdiff.Selections(), ", ")+" (docs/profiles.md)")
	cmd.Flags().Var(&f.samples, "profile-samples", "samples each profiled process runs (default: the protocol's)")
}

// profileSamples is --profile-samples: a positive count.
type profileSamples struct{ n int }

func (p *profileSamples) String() string { return strconv.Itoa(p.n) }

func (p *profileSamples) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return usageError("--profile-samples %q: want a positive count", s)
	}
	p.n = n
	return nil
}

func (p *profileSamples) Type() string { return "n" }
