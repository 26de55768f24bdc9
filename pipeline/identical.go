package pipeline

import (
	"slices"

	"github.com/flipbench/flipbench/receipt"
)

// Identical reports whether every candidate arm would run exactly what the base runs: the
// same binary (by sha256), arguments, environment, lane command and working directory.
// Measuring such arms can only measure noise, so the gate passes them at once and compare
// says so instead of measuring (docs/gate.md).
func Identical(arms []receipt.Arm) bool {
	if len(arms) < 2 {
		return false
	}
	base := arms[0]
	for _, a := range arms[1:] {
		if a.SHA256 == "" || a.SHA256 != base.SHA256 || !slices.Equal(a.Args, base.Args) || !slices.Equal(sorted(a.Env), sorted(base.Env)) ||
			!slices.Equal(a.Command, base.Command) || a.Dir != base.Dir || a.Kind != base.Kind {
			return false
		}
	}
	return true
}

// sorted returns a sorted copy of xs.
func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
