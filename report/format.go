package report

import (
	"fmt"
	"io"
	"strings"
)

// Pct formats a delta in percent with its sign and one decimal: "-12.1%", "+0.4%". Every
// delta in receipts, results blocks and the ledger index is written with it.
func Pct(d float64) string { return fmt.Sprintf("%+.1f%%", d) }

// OneLine collapses runs of white space, newlines included, to one space, so a message
// fits in a list item or a table cell.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Count writes n with the singular or the plural noun: "1 collection", "4 passes".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// mib formats a byte count in MiB.
func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// ErrWriter wraps a writer and remembers its first write error, so a renderer can make
// many formatted writes and check once. After an error, writes do nothing and return it.
type ErrWriter struct {
	w   io.Writer
	err error
}

// NewErrWriter returns an ErrWriter writing to w.
func NewErrWriter(w io.Writer) *ErrWriter { return &ErrWriter{w: w} }

// Write writes p unless an earlier write failed.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Err returns the first write error, or nil.
func (e *ErrWriter) Err() error { return e.err }
