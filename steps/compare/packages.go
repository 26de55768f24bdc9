package compare

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flipbench/flipbench/steps/armbuild"
)

// IsPackageArg reports whether a command-line argument of flipbench compare names
// packages rather than a git ref: it is ".", "..", starts with "./", "../" or "/", or is a
// pattern with "...". Everything else is a ref (main, origin/main, v1.2.0, HEAD~3).
func IsPackageArg(a string) bool {
	return a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") ||
		strings.HasPrefix(a, "/") || strings.Contains(a, "...")
}

// Packages resolves package arguments, as go list reads them in dir, to the packages that
// have test files, each as a path relative to the repository root top ("./btree", "."). A
// pattern that matches packages without tests leaves those out; an argument that names no
// package, or only packages without tests, is an error.
func Packages(ctx context.Context, dir, top string, args []string) ([]string, error) {
	if len(args) == 0 {
		args = []string{"."}
	}
	out, err := armbuild.GoList(ctx, dir, "{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}", args)
	if err != nil {
		msg := err.Error()
		var ce *armbuild.CmdError
		if errors.As(err, &ce) {
			msg = ce.FirstLine()
		}
		return nil, fmt.Errorf("go list %s: %s", strings.Join(args, " "), firstLine(msg))
	}
	var pkgs []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[1] == "0" && f[2] == "0" {
			continue
		}
		d := f[0]
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		rel, err := filepath.Rel(top, d)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("package %s is outside the repository %s", f[0], top)
		}
		p := "./" + filepath.ToSlash(rel)
		if rel == "." {
			p = "."
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: no package with test files, so no benchmarks to compare", strings.Join(args, " "))
	}
	return pkgs, nil
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
