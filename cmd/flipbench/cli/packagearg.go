package cli

import (
	"context"
	"os"
	"path/filepath"

	"github.com/flipbench/flipbench/steps/compare"
)

// onePackage resolves the package arguments of verb (bisect, gate --package) to one
// package with tests, relative to the repository root.
func onePackage(ctx context.Context, root string, args []string, verb string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	pkgs, err := compare.Packages(ctx, wd, root, args)
	if err != nil {
		return "", err
	}
	if len(pkgs) != 1 {
		return "", usageError("%s: %d packages match (%v); give one", verb, len(pkgs), pkgs)
	}
	return pkgs[0], nil
}
