// Package texttable writes tables for a terminal: columns padded with spaces, a header
// line, and a last column that wraps so that no line is wider than the terminal. It is
// the terminal's counterpart of internal/mdtable (markdown): flipbench compare's table and
// flipbench drift's terminal output are written with it.
package texttable

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/flipbench/flipbench/internal/mdtable"
)

// DefaultWidth is the width tables fit when the caller knows no better: 100 columns.
const DefaultWidth = 100

// minWrap is the narrowest the wrapped last column may get; a table whose other columns
// leave less is written with the last column below each row, indented.
const minWrap = 48

// gap separates columns.
const gap = "  "

// Write writes header and rows as a table at most width columns wide (when its columns
// other than the last fit): every column but the last padded to its widest cell, the last
// wrapped at spaces into the room left. Cells are collapsed to one line first. A table
// whose leading columns leave less than a readable width for the last writes the last
// column on its own lines under each row, indented by four spaces and wrapped to width.
func Write(w io.Writer, header []string, rows [][]string, width int) error {
	if width <= 0 {
		width = DefaultWidth
	}
	n := len(header)
	all := append([][]string{header}, rows...)
	widths := make([]int, n)
	for _, r := range all {
		for i := 0; i < n && i < len(r); i++ {
			r[i] = mdtable.OneLine(r[i])
			widths[i] = max(widths[i], Width(r[i]))
		}
	}
	lead := 0
	for i := 0; i < n-1; i++ {
		lead += widths[i] + len(gap)
	}
	room := width - lead
	below := n > 1 && room < minWrap && room < widths[n-1]
	var b strings.Builder
	for _, r := range all {
		var cells []string
		for i := 0; i < n; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			cells = append(cells, c)
		}
		var line strings.Builder
		for i := 0; i < n-1; i++ {
			line.WriteString(cells[i])
			line.WriteString(strings.Repeat(" ", widths[i]-Width(cells[i])))
			line.WriteString(gap)
		}
		last := cells[n-1]
		switch {
		case below:
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
			for _, l := range Wrap(last, width-4) {
				b.WriteString("    " + l + "\n")
			}
		default:
			parts := Wrap(last, max(room, 1))
			if len(parts) == 0 {
				parts = []string{""}
			}
			b.WriteString(strings.TrimRight(line.String()+parts[0], " ") + "\n")
			for _, p := range parts[1:] {
				b.WriteString(strings.Repeat(" ", lead) + p + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Width is the number of terminal columns s takes (one per rune).
func Width(s string) int { return utf8.RuneCountInString(s) }

// Wrap breaks s at spaces into lines of at most width columns; a word longer than width
// is cut.
func Wrap(s string, width int) []string {
	var out []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		for Width(word) > width {
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			r := []rune(word)
			out = append(out, string(r[:width]))
			word = string(r[width:])
		}
		switch {
		case cur.Len() == 0:
			cur.WriteString(word)
		case Width(cur.String())+1+Width(word) <= width:
			cur.WriteString(" " + word)
		default:
			out = append(out, cur.String())
			cur.Reset()
			cur.WriteString(word)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
