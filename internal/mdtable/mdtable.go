// Package mdtable writes markdown tables: the one table format of receipts, experiment
// pages, drift and incidence reports. Cells are left-aligned, never wrapped, and escaped
// so that a "|" or a line break in a reason string cannot break the table.
//
// It also holds the two helpers every markdown renderer around a table shares, so that
// packages below report (incidence) and report itself use one of each: OneLine, which
// fits a message into a list item or a cell, and ErrWriter, which lets a renderer make many
// formatted writes and check for an error once.
package mdtable

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Write renders one markdown table with header and rows.
func Write(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(escape(header))
	for _, r := range rows {
		if err := t.Append(escape(r)); err != nil {
			return err
		}
	}
	return t.Render()
}

// escape makes cells safe inside a markdown table: runs of white space (line breaks
// included) become one space, and "|" is escaped.
func escape(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(OneLine(c), "|", `\|`)
	}
	return out
}

// OrDash returns s, or "-" for an empty table cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine collapses runs of white space, newlines included, to one space, so a message
// fits in a list item or a table cell.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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
