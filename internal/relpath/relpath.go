// Package relpath shortens paths for messages: one relative to the working directory when
// it lies below it, else the path as given.
package relpath

import (
	"os"
	"path/filepath"
	"strings"
)

// Short shortens an absolute path to one relative to the working directory, for
// messages; a path outside the working directory is returned as it is.
func Short(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
