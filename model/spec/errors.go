package spec

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a spec, located by file, line and field. Its text is
// "file:line: field: message", e.g.
//
//	experiments/275-x.md:14: arms.candA.patch: must not be empty
//
// Parse and Validate return either one *Error or several joined with errors.Join (one per
// line of the error's text); use errors.As, or the Errors function, to get at them.
type Error struct {
	// File is the page's path, as given to Parse.
	File string
	// Line is the 1-based line in the page; 0 when unknown.
	Line int
	// Field is the dotted path of the field ("protocol.samples", "lanes[1].role"), or a
	// flag with its value ("--passes 3"); empty for problems of the page as a whole, such
	// as a YAML syntax error.
	Field string
	// Msg says what is wrong, in lower case.
	Msg string
}

// Error formats the problem as "file:line: field: message", leaving out the parts that
// are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors returns the spec problems inside err: the *Error values that err is, wraps or
// joins. It returns nil when err holds none.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch x := err.(type) {
		case nil:
		case *Error:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		default:
			walk(errors.Unwrap(err))
		}
	}
	walk(err)
	return out
}

// problems collects spec errors for one page.
type problems struct {
	file string
	list []*Error
}

// add records a problem at a line.
func (p *problems) add(line int, field, format string, args ...any) {
	p.list = append(p.list, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// err joins the problems, ordered by line (stable), or returns nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	slices.SortStableFunc(p.list, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	if len(p.list) == 1 {
		return p.list[0]
	}
	errs := make([]error, len(p.list))
	for i, e := range p.list {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// oneOf is the message for a value outside a closed vocabulary.
func oneOf[T ~string](v T, vocabulary []T) string {
	value := string(v)
	allowed := make([]string, len(vocabulary))
	for i, a := range vocabulary {
		allowed[i] = string(a)
	}
	if value == "" {
		return "is required; one of " + strings.Join(allowed, ", ")
	}
	msg := fmt.Sprintf("must be one of %s; got %q", strings.Join(allowed, ", "), value)
	if s := Suggest(value, allowed); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	return msg
}

// Suggest returns the entry of known nearest to s, if it is close enough to be a likely
// typo (at most a third of the entry's length in edits, and fewer edits than s has
// bytes), or "". Case and '_' versus '-' do not count as differences. Every "did you
// mean" of flipbench comes from it: the spec's field and value errors and the ledger's
// unknown directions.
func Suggest(s string, known []string) string {
	norm := func(x string) string { return strings.ReplaceAll(strings.ToLower(x), "_", "-") }
	best, bestDist := "", -1
	for _, k := range known {
		d := editDistance(norm(s), norm(k))
		limit := max(1, len(k)/3)
		if d > limit || d >= len(s) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b: insertions,
// deletions, substitutions and transpositions of adjacent bytes each cost 1.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
