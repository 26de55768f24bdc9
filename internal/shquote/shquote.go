// Package shquote writes command lines as a POSIX shell reads them back, for the commands
// receipts and pages record: a user copies one into a terminal and gets the same
// arguments ("--title 'ASCII fast path'", not "--title ASCII fast path").
package shquote

import (
	"regexp"
	"strings"
)

// safeWord is an argument the shell reads as it is.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// Word quotes one argument: as it is when the shell reads it so, else in single quotes,
// a single quote inside written '\”; the empty argument is ”.
func Word(a string) string {
	if safeWord.MatchString(a) {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// Join quotes every argument with Word and joins them with spaces.
func Join(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Word(a)
	}
	return strings.Join(out, " ")
}
