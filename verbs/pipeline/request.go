package pipeline

import (
	"fmt"
	"strings"

	"github.com/flipbench/flipbench/internal/relpath"
	"github.com/flipbench/flipbench/model/spec"
)

// RequestError is a value of a verb's request that cannot be used, said in the terms of
// the flag that set it ("--continue DIR: ..."): the CLI exits with its usage status.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }

// Unwrap returns the error the request's value caused.
func (e *RequestError) Unwrap() error { return e.Err }

// requestErrorf returns a *RequestError.
func requestErrorf(format string, args ...any) error {
	return &RequestError{Err: fmt.Errorf(format, args...)}
}

// flagErrors returns err, from resolving a spec with a request's overrides, as a
// *RequestError when each of its problems names a flag ("--passes 3: must be even");
// other errors pass through.
func flagErrors(err error) error {
	errs := spec.Errors(err)
	if len(errs) == 0 {
		return err
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, "--") {
			return err
		}
	}
	return &RequestError{Err: err}
}

// note shows one line through the events that show notes (PlanEvents): what a verb chose
// before it measures ("gating on 3 benchmarks: ..."), and its notes ("note: ...").
func note(opts Options, format string, args ...any) {
	if show, ok := opts.Events.(PlanEvents); ok {
		show.Note(fmt.Sprintf(format, args...))
	}
}

// shortPath names a file in a note: relative to the working directory when below it.
func shortPath(p string) string { return relpath.Short(p) }
