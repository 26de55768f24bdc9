package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flipbench/flipbench/internal/texttable"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// addRoleFlags registers compare's role flags.
func addRoleFlags(f *pflag.FlagSet, r *compare.Roles) {
	f.StringVar(&r.Primary, "primary", "", "the lanes (a regular expression on their names) the change is for: primary lanes, expected --expect")
	f.StringVar(&r.Guard, "guard", "", "the lanes that must not get slower: guards")
	f.StringVar(&r.Control, "control", "", "the lanes that must not change at all: controls")
	f.StringVar(&r.Expect, "expect", "", "the primaries' predicted direction: faster (default), slower or neutral")
}

// pageName is the file name of page id: NNN-slug.md.
func pageName(id int, title string) string { return fmt.Sprintf("%03d-%s.md", id, ledger.Slug(title)) }

// pageFree refuses an experiment number another page of the ledger at root has.
func pageFree(root string, id int) error {
	pages, err := ledger.Pages(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, p := range pages {
		if n, _ := ledger.PageID(p); n == id {
			return fmt.Errorf("--save %d: experiment %d is taken by %s", id, id, relPath(p))
		}
	}
	return nil
}

// terminalWidth is the width tables fit: $COLUMNS when it is a number, else
// texttable.DefaultWidth.
func terminalWidth(s Streams) int {
	if n, err := strconv.Atoi(s.getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return texttable.DefaultWidth
}

// compareTarget is what compare's arguments name: the root its receipts (and a saved
// page) go under, the packages, the base and candidate with their names, and the page
// number of --save (0 for none).
type compareTarget struct {
	root       string
	pkgs       []string
	base, cand string
	names      compare.Names
	saveID     int
}

// compareTargets resolves compare's arguments in the git repository of the working
// directory.
func compareTargets(ctx context.Context, opts *compareOptions) (compareTarget, error) {
	var t compareTarget
	top, err := armbuild.TopLevel(ctx, ".")
	if err != nil {
		return t, fmt.Errorf("compare needs a git repository: %w", err)
	}
	t.root = top
	if opts.save != "" {
		if t.saveID, err = strconv.Atoi(strings.TrimLeft(opts.save, "0")); err != nil || t.saveID <= 0 {
			return t, usageError("--save %q: want a positive experiment number, as in --save 12", opts.save)
		}
		if r, err := ledger.FindRoot("."); err == nil {
			if rel, err := filepath.Rel(top, r); err == nil && !strings.HasPrefix(rel, "..") {
				t.root = r // an existing ledger in the repository
			}
		}
	} else if opts.title != "" {
		return t, usageError("--title: only with --save")
	}
	wd, err := os.Getwd()
	if err != nil {
		return t, err
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	if t.pkgs, err = compare.Packages(ctx, wd, t.root, opts.packages); err != nil {
		return t, err
	}
	if opts.save != "" && len(t.pkgs) > 1 {
		return t, usageError("--save: one page is one package; %d packages match (%s)", len(t.pkgs), strings.Join(t.pkgs, ", "))
	}
	t.base, t.cand, t.names, err = compare.Refs(ctx, t.root, opts.refs)
	return t, err
}
