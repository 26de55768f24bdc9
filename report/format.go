package report

import (
	"io"

	"github.com/flipbench/flipbench/internal/mdtable"
)

// OneLine collapses runs of white space, newlines included, to one space, so a message
// fits in a list item or a table cell. It is mdtable.OneLine, which packages below report
// (incidence) use too.
func OneLine(s string) string { return mdtable.OneLine(s) }

// ErrWriter wraps a writer and remembers its first write error, so a renderer can make
// many formatted writes and check once. After an error, writes do nothing and return it.
// It is mdtable.ErrWriter, which packages below report (incidence) use too.
type ErrWriter = mdtable.ErrWriter

// NewErrWriter returns an ErrWriter writing to w.
func NewErrWriter(w io.Writer) *ErrWriter { return mdtable.NewErrWriter(w) }
