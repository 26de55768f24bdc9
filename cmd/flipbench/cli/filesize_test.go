package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test file of this package may have: it holds flags
// and printing, and the logic of a verb belongs in a library package (pipeline).
const maxFileLines = 250

// TestFileSizes fails on a non-test file of this package longer than maxFileLines.
func TestFileSizes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if n := bytes.Count(data, []byte("\n")); n > maxFileLines {
			t.Errorf("%s: %d lines, at most %d: move the verb's logic into its library package (pipeline), or split the file", name, n, maxFileLines)
		}
	}
	if checked < 20 {
		t.Errorf("checked %d files, want this package's sources (run in its folder)", checked)
	}
}
