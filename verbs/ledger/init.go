package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// InitResult says what Init changed: the lines added to the .gitignore file and the
// ledger files created, as paths relative to the repository root.
type InitResult struct {
	Ignored []string
	Created []string
}

// InitOptions say how a repository keeps flipbench's outputs.
type InitOptions struct {
	// Top is the repository root, where .gitignore is; Root the ledger root
	// (experiments/ and results/), Top or a folder inside it.
	Top, Root string
	// Ledger keeps the receipts as a ledger: experiments/ with its directions registry
	// and index, results/ committed beside it. Without it results/ is ignored.
	Ledger bool
	// DotDir is the build folder to ignore (armbuild.DotDir).
	DotDir string
}

// Init sets a repository up for flipbench: its .gitignore ignores the build folder and,
// unless opts.Ledger, the receipts folder; with opts.Ledger the ledger's skeleton is
// written (experiments/directions.yaml and the index experiments/README.md, which
// flipbench check then accepts). What exists is kept: running it twice changes nothing.
func Init(opts InitOptions) (InitResult, error) {
	var res InitResult
	rel, err := filepath.Rel(opts.Top, opts.Root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return res, fmt.Errorf("ledger root %s is not inside the repository %s", opts.Root, opts.Top)
	}
	prefix := "/"
	if rel != "." {
		prefix += filepath.ToSlash(rel) + "/"
	}
	lines := []string{"/" + opts.DotDir + "/"}
	if !opts.Ledger {
		lines = append(lines, prefix+ResultsDir+"/")
	}
	if res.Ignored, err = ensureLines(filepath.Join(opts.Top, ".gitignore"), lines); err != nil {
		return res, err
	}
	if !opts.Ledger {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Join(opts.Root, ExperimentsDir), 0o755); err != nil {
		return res, err
	}
	dirs := directionsPath(opts.Root)
	if _, err := os.Stat(dirs); errors.Is(err, os.ErrNotExist) {
		const body = "# The directions registry: one line of work per line, as name: one-line description.\n" +
			"# A page names its directions (directions: [name]) from this list; flipbench check holds it to them.\n"
		if err := os.WriteFile(dirs, []byte(body), 0o644); err != nil {
			return res, err
		}
		res.Created = append(res.Created, filepath.ToSlash(filepath.Join(rel, DirectionsFile)))
	} else if err != nil {
		return res, err
	}
	changed, err := WriteIndex(opts.Root)
	if err != nil {
		return res, err
	}
	if changed {
		res.Created = append(res.Created, filepath.ToSlash(filepath.Join(rel, IndexFile)))
	}
	return res, nil
}

// ensureLines appends to the file at path every line of want it does not have yet (as a
// line of its own, or without the leading or trailing slash), creating the file when it
// is missing, and returns the lines it added.
func ensureLines(path string, want []string) ([]string, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.Trim(strings.TrimSpace(l), "/")] = true
	}
	var added []string
	for _, l := range want {
		if !have[strings.Trim(l, "/")] {
			added = append(added, l)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("# flipbench's build folder and receipts (flipbench init)\n")
	for _, l := range added {
		b.WriteString(l + "\n")
	}
	return added, os.WriteFile(path, b.Bytes(), 0o644)
}
