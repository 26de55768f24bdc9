// Package within keeps the paths a page, a spec or a receipt names inside the folder they
// belong to (the ledger root, the repository): a path is inside only when it is, after
// ".." and every symbolic link are resolved. A page cannot make flipbench read, hash,
// publish or write a file elsewhere on the machine by naming it, nor by naming a link to
// it.
package within

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Path resolves p (relative to root unless absolute) and returns it when it lies inside
// root once symbolic links are followed; otherwise an error saying where it leads. A path
// that does not exist yet is resolved through its nearest existing parent, so a file about
// to be written is checked as well as one that exists.
func Path(root, p string) (string, error) {
	r, err := resolve(root)
	if err != nil {
		return "", err
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, p)
	}
	q, err := resolve(abs)
	if err != nil {
		return "", err
	}
	if !Inside(r, q) {
		return "", fmt.Errorf("%s leads outside %s (to %s)", p, root, q)
	}
	return q, nil
}

// Inside reports whether the clean absolute path p is root or below it.
func Inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolve returns the absolute path p with every symbolic link followed; the part of it
// that does not exist is appended to its nearest existing parent, resolved.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
