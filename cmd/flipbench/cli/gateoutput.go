package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/gate"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// printGate prints a gate's decision: the summary on stdout (markdown, text or JSON) and
// in $GITHUB_STEP_SUMMARY, then on stderr why it failed or is inconclusive, with the exit
// status that says so.
func printGate(s Streams, opts *gateOptions, out *pipeline.GateOutcome) error {
	base := receipt.ShortHash(out.BaseCommit) + " (merge base of " + opts.base + ")"
	page := relPath(out.Page)
	var summary bytes.Buffer
	if err := gate.Markdown(&summary, out.Decision, base, opts.candidate, page, out.Level); err != nil {
		return err
	}
	if path := s.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, summary.Bytes()); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	var err error
	switch {
	case opts.json:
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			SchemaVersion int `json:"schema_version"`
			gate.Result
			Base      string `json:"base"`
			Candidate string `json:"candidate"`
			Receipt   string `json:"receipt"`
		}{gate.SchemaVersion, out.Decision, out.BaseCommit, opts.candidate, page})
	case gateFormat(s, opts) == formatText:
		err = gate.Text(s.Out, out.Decision, base, opts.candidate, page, out.Level, terminalWidth(s))
	default:
		_, err = s.Out.Write(summary.Bytes())
	}
	if err != nil {
		return err
	}
	return gateExit(s, out)
}

// gateExit says on stderr why a gate failed or is inconclusive and returns the exit
// status that says so; nil for a pass.
func gateExit(s Streams, out *pipeline.GateOutcome) error {
	decision := out.Decision
	switch decision.Outcome {
	case gate.Broken:
		var failed []string
		for _, f := range decision.Failures {
			failed = append(failed, f.String())
		}
		fmt.Fprintf(s.Err, "flipbench: gate failed: runs failed, so the build is broken (a crash is a real failure, not noise; a rerun will not fix it): %s\n",
			strings.Join(failed, "; "))
		return silentExit(ExitError)
	case gate.Regression:
		var lanes []string
		for _, f := range decision.Findings {
			if f.Outcome == gate.Regression {
				lanes = append(lanes, f.Lane)
			}
		}
		fmt.Fprintf(s.Err, "flipbench: gate failed: reproduced regression in %s\n", strings.Join(lanes, ", "))
		return silentExit(ExitRegression)
	case gate.Rerun:
		why := "drift or too little data"
		if n := len(out.Looks); n > 0 && out.Looks[n-1].Stop == receipt.StopBudget && out.Looks[n-1].Round < 2 {
			why = fmt.Sprintf("the budget was spent after round 1 (%s), and the rule decides from round 2: raise --budget to at least %s or gate fewer lanes (--lanes, --bench)",
				out.Looks[n-1].Elapsed.Round(time.Second), (3 * out.Looks[n-1].Elapsed).Round(time.Second))
		}
		fmt.Fprintf(s.Err, "flipbench: gate inconclusive: rerun advised (%s); the build is not failed; a rerun can add its pairs to these: --continue %s\n", why, relPath(out.Dir))
		return silentExit(ExitInconclusive)
	}
	return nil
}

// gateFormat is the format of the gate's summary on stdout: --format, else text on a
// terminal and markdown elsewhere (a CI log, a file for a pull-request comment).
func gateFormat(s Streams, opts *gateOptions) string {
	switch {
	case opts.format != "":
		return opts.format
	case s.OutIsTerminal:
		return formatText
	}
	return formatMarkdown
}

// gateIdentical reports a gate whose base and candidate binaries are identical: it passes
// at once, with nothing measured (exit 0), in the formats the gate writes.
func gateIdentical(s Streams, opts *gateOptions, base string, arms []receipt.Arm) error {
	why := identical(arms)
	md := fmt.Sprintf("## flipbench gate: pass: %s\n\nBase `%s (merge base of %s)`, candidate `%s`.\n", why, receipt.ShortHash(base), opts.base, opts.candidate)
	if path := s.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, []byte(md)); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	fmt.Fprintf(s.Err, "flipbench: %s\n", why)
	if opts.json {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			SchemaVersion int `json:"schema_version"`
			gate.Result
			Identical bool   `json:"identical"`
			Base      string `json:"base"`
			Candidate string `json:"candidate"`
		}{gate.SchemaVersion, gate.Result{Outcome: gate.Pass, Findings: []gate.Finding{}, Failures: []gate.Failure{}}, true, base, opts.candidate})
	}
	if gateFormat(s, opts) == formatText {
		_, err := fmt.Fprintf(s.Out, "flipbench gate: pass: %s\nBase %s (merge base of %s), candidate %s.\n", why, receipt.ShortHash(base), opts.base, opts.candidate)
		return err
	}
	_, err := fmt.Fprint(s.Out, md)
	return err
}
