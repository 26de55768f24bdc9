package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/profdiff"
)

// profileLanesFlag is --profile-lanes: which lanes get one more process per arm with
// profiling after the measured runs (docs/profiles.md).
type profileLanesFlag struct{ v string }

func (f *profileLanesFlag) String() string { return f.v }

func (f *profileLanesFlag) Set(s string) error {
	if !profdiff.ValidSelection(s) {
		return usageError("--profile-lanes %q: want %s", s, strings.Join(profdiff.Selections(), ", "))
	}
	f.v = s
	return nil
}

func (f *profileLanesFlag) Type() string { return "which" }

// addProfileLanesFlag adds --profile-lanes to cmd, defaulting to the reproduced lanes.
func addProfileLanesFlag(cmd *cobra.Command, f *profileLanesFlag) {
	f.v = profdiff.SelectReproduced
	cmd.Flags().Var(f, "profile-lanes", "after the measured runs, profile one more process per arm of these lanes: "+
		strings.Join(profdiff.Selections(), ", ")+" (docs/profiles.md)")
}
