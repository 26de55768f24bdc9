// Package ledger manages experiment pages: finding, parsing, finalizing and checking them,
// and the generated index of the experiments/ folder.
package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/internal/within"
)

// ExperimentsDir is the folder of experiment pages under the ledger root.
const ExperimentsDir = "experiments"

// ResultsDir is the folder of receipts under the ledger root.
const ResultsDir = "results"

var pageName = regexp.MustCompile(`^(\d+)-[a-z0-9][a-z0-9-]*\.md$`)

// FindPage resolves arg, a page path or an experiment number, to the page's path and its
// ledger root (the directory that holds experiments/). A number is looked up as
// experiments/NNN-*.md in dir and, failing that, in its parents.
func FindPage(dir, arg string) (page, root string, err error) {
	if id, err := strconv.Atoi(arg); err == nil && !strings.ContainsAny(arg, "./") {
		return findByID(dir, id)
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", "", fmt.Errorf("experiment page %s: %w", arg, err)
	}
	if filepath.Base(filepath.Dir(abs)) != ExperimentsDir {
		return "", "", fmt.Errorf("experiment page %s: must be inside an %s/ folder", arg, ExperimentsDir)
	}
	return abs, filepath.Dir(filepath.Dir(abs)), nil
}

func findByID(dir string, id int) (string, string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for {
		matches, err := Pages(d)
		if err != nil {
			return "", "", err
		}
		for _, m := range matches {
			if n, _ := PageID(m); n == id {
				return m, d, nil
			}
		}
		if len(matches) > 0 {
			return "", "", fmt.Errorf("experiment %d: no page %s/%03d-*.md", id, filepath.Join(d, ExperimentsDir), id)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("experiment %d: no %s/ folder here or above %s", id, ExperimentsDir, dir)
		}
		d = parent
	}
}

// Pages lists the experiment pages under root/experiments, sorted by name. A page that is
// a symbolic link out of the ledger is not one of them (OutsidePages lists those).
func Pages(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, ExperimentsDir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var pages []string
	for _, e := range entries {
		p := filepath.Join(root, ExperimentsDir, e.Name())
		if !e.IsDir() && pageName.MatchString(e.Name()) && !leadsOut(root, p, e) {
			pages = append(pages, p)
		}
	}
	return pages, nil
}

// OutsidePages lists the files under root/experiments named like pages that are symbolic
// links out of the ledger: never read as pages, and reported by Check.
func OutsidePages(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, ExperimentsDir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(root, ExperimentsDir, e.Name())
		if pageName.MatchString(e.Name()) && leadsOut(root, p, e) {
			out = append(out, p)
		}
	}
	return out, nil
}

// leadsOut reports whether the directory entry e at p is a symbolic link out of root.
func leadsOut(root, p string, e os.DirEntry) bool {
	if e.Type()&os.ModeSymlink == 0 {
		return false
	}
	abs, err := filepath.Abs(p)
	if err == nil {
		_, err = within.Path(root, abs)
	}
	return err != nil
}

// PageID returns the experiment number in a page's file name.
func PageID(page string) (int, bool) {
	m := pageName.FindStringSubmatch(filepath.Base(page))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// FindRoot returns the ledger root at or above dir: the nearest directory holding an
// experiments/ folder.
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(d, ExperimentsDir)); err == nil && st.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s/ folder in %s or above", ExperimentsDir, dir)
		}
		d = parent
	}
}
