package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// Compare's output formats.
const (
	formatText     = "text"
	formatMarkdown = "markdown"
	formatJSON     = "json"
	formatSummary  = "summary"
)

// failOnSlower is the --fail-on value that exits 3 when a lane reproduced slower.
const failOnSlower = "slower"

// addCompareOutputFlags registers --quiet, --format, --json and --fail-on.
func addCompareOutputFlags(f *pflag.FlagSet, opts *compareOptions) {
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "print only the table and the receipt: no progress, no build log, at most "+fmt.Sprint(quietLines)+" warning lines on stderr")
	f.StringVar(&opts.format, "format", formatText, "the table's format: text (a terminal), markdown (every lane, as markdown), summary (a pull-request comment of about 15 lines: the lanes that are not neutral, the neutral ones named) or json (docs/json.md)")
	f.BoolVar(&opts.json, "json", false, "print the comparison as JSON on stdout (--format json)")
	f.StringVar(&opts.failOn, "fail-on", "", "exit 3 after the table when a lane reproduced slower (slower); by default the verdicts do not change the exit status")
	f.BoolVar(&opts.measureIdentical, "measure-identical", false, "measure even when base and candidate binaries are identical (compare says so and measures nothing otherwise)")
}

// checkCompareOutput validates --format, --json, --fail-on and the role flags.
func checkCompareOutput(opts *compareOptions) error {
	if opts.json {
		if opts.format != formatText && opts.format != formatJSON {
			return usageError("--json with --format %s: give one of them", opts.format)
		}
		opts.format = formatJSON
	}
	if opts.format != formatText && opts.format != formatMarkdown && opts.format != formatSummary && opts.format != formatJSON {
		return usageError("--format %q: want text, markdown, summary or json", opts.format)
	}
	if opts.failOn != "" && opts.failOn != failOnSlower {
		return usageError("--fail-on %q: want slower", opts.failOn)
	}
	if err := opts.roles.Check(); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// compareJSON is flipbench compare --json's document: every package's comparison.
type compareJSON struct {
	SchemaVersion int              `json:"schema_version"`
	Base          string           `json:"base"`
	Candidate     string           `json:"candidate"`
	Packages      []compare.Result `json:"packages"`
}

// writeJSON prints the comparisons of a --json run.
func (c *compareJSON) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// quietLines is the most lines --quiet lets through to stderr.
const quietLines = 20

// quietWriter passes on only the warning lines written to it ("flipbench: warning: ..."),
// at most quietLines-1 of them, and counts the rest for Close.
type quietWriter struct {
	w       io.Writer
	mu      sync.Mutex
	partial []byte
	passed  int
	dropped int
}

func (q *quietWriter) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.partial = append(q.partial, p...)
	for {
		i := bytes.IndexByte(q.partial, '\n')
		if i < 0 {
			break
		}
		line := q.partial[:i+1]
		if bytes.HasPrefix(line, []byte("flipbench: warning: ")) {
			if q.passed < quietLines-1 {
				if _, err := q.w.Write(line); err != nil {
					return len(p), err
				}
				q.passed++
			} else {
				q.dropped++
			}
		}
		q.partial = q.partial[i+1:]
	}
	return len(p), nil
}

// Close says how many warnings it held back.
func (q *quietWriter) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dropped > 0 {
		_, err := fmt.Fprintf(q.w, "flipbench: %d more warnings: they are in the receipt\n", q.dropped)
		return err
	}
	return nil
}

// quietStreams returns the streams a --quiet comparison measures with: stderr filtered
// to warnings, no live progress bar. Close the writer when the run is done.
func quietStreams(s Streams) (Streams, *quietWriter) {
	q := &quietWriter{w: s.Err}
	s.Err, s.ErrIsTerminal = q, false
	return s, q
}

// writeCompareResult prints a finished comparison: the table in the chosen format (or,
// for --json, keeps it for the document printed at the end), its benchtime warnings, the
// receipt, and once per repository the hint about results/.
func writeCompareResult(ctx context.Context, s Streams, opts *compareOptions, root string, d *loaded.Receipt, names compare.Names, receiptPage string) error {
	var err error
	if opts.format == formatJSON {
		for _, w := range report.BenchtimeWarnings(d) {
			fmt.Fprintf(s.Err, "flipbench: warning: %s\n", w)
		}
		fmt.Fprintf(s.Err, "flipbench: receipt: %s\n", relPath(receiptPage))
		return nil
	}
	switch opts.format {
	case formatSummary:
		err = compare.Brief(s.Out, d, names, "`"+relPath(receiptPage)+"`")
	case formatMarkdown:
		err = compare.Markdown(s.Out, d, names)
	default:
		err = compare.Table(s.Out, d, names, terminalWidth(s))
	}
	if err != nil {
		return err
	}
	for _, w := range report.BenchtimeWarnings(d) {
		fmt.Fprintf(s.Err, "flipbench: warning: %s\n", w)
	}
	switch opts.format {
	case formatSummary:
	case formatMarkdown:
		fmt.Fprintf(s.Out, "\nReceipt: `%s`\n", relPath(receiptPage))
	default:
		fmt.Fprintf(s.Out, "\nreceipt: %s\n", relPath(receiptPage))
	}
	if !opts.quiet && opts.results == "" {
		resultsHint(ctx, s, root)
	}
	return nil
}

// hintMarker is the file in the build folder that says the results/ hint was given.
const hintMarker = "hinted-results"

// resultsHint says once per repository, when results/ sits untracked and not ignored in
// the repository, what to do with it.
func resultsHint(ctx context.Context, s Streams, root string) {
	dir := filepath.Join(root, ledger.ResultsDir)
	untracked, err := armbuild.Untracked(ctx, root, dir)
	if err != nil || !untracked {
		return
	}
	top, err := armbuild.TopLevel(ctx, root)
	if err != nil {
		return
	}
	marker := filepath.Join(top, armbuild.DotDir, hintMarker)
	if _, err := os.Stat(marker); err == nil {
		return
	}
	fmt.Fprintf(s.Err, "flipbench: note: %s/ holds the receipts and is untracked: run flipbench init to add it to .gitignore, or flipbench init --ledger to keep it as a ledger and commit it (said once)\n",
		strings.TrimSuffix(relPath(dir), "/"))
	_ = os.WriteFile(marker, []byte("flipbench compare said once what to do with results/\n"), 0o644)
}
