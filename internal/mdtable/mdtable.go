// Package mdtable writes markdown tables: the one table format of receipts, experiment
// pages, drift and incidence reports. Cells are left-aligned, never wrapped, and escaped
// so that a "|" or a line break in a reason string cannot break the table.
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
		out[i] = strings.ReplaceAll(strings.Join(strings.Fields(c), " "), "|", `\|`)
	}
	return out
}
