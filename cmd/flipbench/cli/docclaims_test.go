package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/calibrate"
	"github.com/flipbench/flipbench/verbs/ledger"
)

// readmeRuns are the receipts the README's first section reports on, with their pages.
var readmeRuns = []struct{ page, receipt string }{
	{"experiments/275-admission-priority.md", "results/2026-12-02T21-10-47Z-exp275-quick"},
	{"experiments/266-sticky-reader-dispatch.md", "results/2026-12-02T20-09-43Z-exp266-quick"},
}

// TestReadmeReceipts checks that what the README says its example runs found is what
// their receipts show today, every number and the order of the steps included: the block
// between <!-- generated from receipts: readme-runs begin/end --> is written from the
// receipts (the analysis computed afresh, the rule applied to the page) and refreshed
// with go test ./cmd/flipbench/cli -run TestReadmeReceipts -update.
func TestReadmeReceipts(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var b strings.Builder
	for _, r := range readmeRuns {
		line, err := runSummary(root, r.page, r.receipt)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(line)
	}
	path := filepath.Join(root, "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- generated from receipts: readme-runs begin -->\n", "<!-- generated from receipts: readme-runs end -->\n"
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q block", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	if got := text[i+len(begin) : j]; got != b.String() {
		if *update {
			if err := os.WriteFile(path, []byte(text[:i+len(begin)]+b.String()+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's readme-runs block is stale (go test ./cmd/flipbench/cli -run TestReadmeReceipts -update rewrites it)\nhave:\n%s\nwant:\n%s", got, b.String())
	}
}

// runSummary writes one bullet about a receipt: what ran, in which order, and what the
// decision rule made of it.
func runSummary(root, page, dir string) (string, error) {
	d, err := ledger.LoadReceipt(filepath.Join(root, dir))
	if err != nil {
		return "", err
	}
	f, err := ledger.Finalize(filepath.Join(root, page), ledger.FinalizeOptions{Root: root, Receipt: filepath.Join(root, dir)})
	if err != nil {
		return "", err
	}
	var steps []string
	git := 0
	for _, a := range d.Plan.Arms {
		if a.Commit != "" {
			git++
		}
	}
	if git > 0 {
		steps = append(steps, fmt.Sprintf("%s built from git", wordCount(git, "arm", "arms")))
	}
	run := "a fixed run"
	if pin := d.Plan.Protocol.Pinned(); pin != "" {
		run += " (" + pin + ")"
	}
	if s := d.Plan.Protocol.Sequential; s != nil {
		run = strings.Replace(run, "a fixed run", "a sequential run", 1)
		if len(d.Looks) > 0 {
			last := d.Looks[len(d.Looks)-1]
			run += fmt.Sprintf(" that stopped after %s (%s)", wordCount(last.Round, "round", "rounds"), seqStopText(last.Stop, d.Plan.Profile, s.Budget.String()))
		}
	}
	inc, _ := incidence.Read(d.Dir)
	probe := ""
	if inc != nil {
		probe = fmt.Sprintf("the incidence probe over suite %s (%s %s)", inc.Gate.Suite, withCommas(inc.Total), inc.Gate.Total)
	}
	if probe != "" && incidenceFirst(d) {
		steps = append(steps, probe, run)
	} else {
		steps = append(steps, run)
		if probe != "" {
			steps = append(steps, probe)
		}
	}
	var found []string
	if len(d.Analysis.Candidates) == 1 {
		found = laneFindings(d, f.Page)
	}
	text := fmt.Sprintf("- `%s.md`: %s", dir, strings.Join(steps, ", then "))
	if len(found) > 0 {
		text += "; " + strings.Join(found, "; ")
	}
	return text + fmt.Sprintf("; the decision rule: %s.\n", f.Decision.Summary()), nil
}

// incidenceFirst reports whether a receipt's incidence suite ran before its A/B runs.
func incidenceFirst(d *loaded.Receipt) bool {
	data, err := os.ReadFile(filepath.Join(d.Dir, "incidence-runs.jsonl"))
	if err != nil || len(d.Records) == 0 {
		return false
	}
	first, _, _ := strings.Cut(string(data), "\n")
	var r receipt.Record
	if json.Unmarshal([]byte(first), &r) != nil {
		return false
	}
	return r.Started.Before(d.Records[0].Started)
}

// laneFindings says what the primary and guard lanes of a one-candidate receipt showed,
// pooled over collections.
func laneFindings(d *loaded.Receipt, page string) []string {
	p, err := ledger.ReadPage(page)
	if err != nil || p.Spec == nil {
		return nil
	}
	by := map[driftcheck.LaneVerdict][]string{}
	var order []driftcheck.LaneVerdict
	var out []string
	for _, role := range []spec.Role{spec.RolePrimary, spec.RoleGuard} {
		clear(by)
		order = order[:0]
		var mdes []float64
		for _, l := range p.Spec.Lanes {
			if l.Role != role {
				continue
			}
			i := slices.IndexFunc(d.Analysis.Pooled, func(s driftcheck.LaneSummary) bool { return s.Lane == l.Name })
			if i < 0 {
				continue
			}
			s := d.Analysis.Pooled[i]
			if _, ok := by[s.Verdict]; !ok {
				order = append(order, s.Verdict)
			}
			desc := l.Name
			if s.Verdict == driftcheck.LaneReproducedFaster || s.Verdict == driftcheck.LaneReproducedSlower {
				desc += " " + human.Pct(s.EstimatePct)
			}
			if s.Verdict == driftcheck.LaneUndecided {
				mdes = append(mdes, s.MDEPct)
			}
			by[s.Verdict] = append(by[s.Verdict], desc)
		}
		var parts []string
		for _, v := range order {
			part := strings.Join(by[v], ", ") + " " + string(v)
			if v == driftcheck.LaneUndecided && len(mdes) > 0 {
				part += fmt.Sprintf(" at MDEs of %s to %s", human.Percent(slices.Min(mdes)), human.Percent(slices.Max(mdes)))
			}
			parts = append(parts, part)
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s lanes (pooled over collections): %s", role, strings.Join(parts, "; ")))
		}
	}
	return out
}

// seqStopText says why a sequential run stopped.
func seqStopText(stop, profile, budget string) string {
	what := "the spec's"
	if profile != "" {
		what = "the " + profile + " profile's"
	}
	switch stop {
	case "budget":
		return fmt.Sprintf("another round would have overrun %s %s budget", what, budget)
	case "max-pairs":
		return fmt.Sprintf("%s max-pairs", what)
	}
	return stop
}

// wordCount writes a count with its noun in words up to ten: "three arms", "4 rounds".
func wordCount(n int, one, many string) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	noun := many
	if n == 1 {
		noun = one
	}
	if n >= 0 && n < len(words) {
		return words[n] + " " + noun
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// withCommas writes a whole count with commas: 119,495.
func withCommas(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestGateWorkflowValgrind checks that the CI workflow that runs flipbench's own gate
// installs Valgrind when experiments/gate.yaml counts a lane's instructions, and that
// docs/gate.md says it does only when it does.
func TestGateWorkflowValgrind(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	g, err := spec.ParseGateFile(filepath.Join(root, "experiments", "gate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	counts := g.Harness.Metric == "instructions" || slices.ContainsFunc(g.Lanes, func(l spec.Lane) bool { return l.Metric == "instructions" })
	workflow, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "bench-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	installs := strings.Contains(string(workflow), "run: make valgrind")
	if counts && !installs {
		t.Error("experiments/gate.yaml counts instructions under Valgrind, but .github/workflows/bench-gate.yml does not run make valgrind")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "gate.md"))
	if err != nil {
		t.Fatal(err)
	}
	if says := strings.Contains(string(doc), "The workflow installs Valgrind with `make valgrind`."); says != installs {
		t.Errorf("docs/gate.md says the workflow installs Valgrind: %v; the workflow does: %v", says, installs)
	}
}

// TestPinningTables checks the noise tables of docs/methodology.md's "Pinning lanes to
// CPUs": every cell "N% (B%)" of a column whose header links a calibration receipt is
// that receipt's noise of one pass delta and its between-process part for the row's lane
// (calibrate.FromReceipt), as the linked receipt page shows it: from the analysis stored
// with the receipt. -update rewrites the cells.
func TestPinningTables(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "methodology.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	link := regexp.MustCompile(`\(\.\./(results/[^)]+-calibrate)\.md\)`)
	cell := regexp.MustCompile(`^\d+(\.\d+)?% \(\d+(\.\d+)?%\)$`)
	changed, tables := false, 0
	for i := 0; i < len(lines); i++ {
		cols := strings.Split(strings.Trim(lines[i], "| "), " | ")
		var receipts []string
		for _, c := range cols {
			if m := link.FindStringSubmatch(c); m != nil {
				receipts = append(receipts, m[1])
			} else {
				receipts = append(receipts, "")
			}
		}
		if !strings.HasPrefix(lines[i], "| lane |") || !slices.ContainsFunc(receipts, func(r string) bool { return r != "" }) {
			continue
		}
		tables++
		noise := map[string]map[string]string{} // receipt -> lane -> cell
		for _, r := range receipts {
			if r == "" {
				continue
			}
			// The linked receipt page shows the analysis stored with it: the cells say
			// what it says (an older drift check's, for these receipts).
			dir := filepath.Join("..", "..", "..", r)
			plan, err := receipt.ReadPlan(dir)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := receipt.ReadRecords(dir)
			if err != nil {
				t.Fatal(err)
			}
			var rep driftcheck.Report
			if err := receipt.ReadJSON(filepath.Join(dir, receipt.AnalysisFile), &rep); err != nil {
				t.Fatal(err)
			}
			if err := receipt.VerifyManifest(dir); err != nil {
				t.Fatal(err)
			}
			lanes, err := calibrate.FromReceipt(plan, recs, rep, r, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			noise[r] = map[string]string{}
			for _, l := range lanes {
				noise[r][l.Lane] = fmt.Sprintf("%s (%s)", human.Percent(l.NoisePct), human.Percent(l.BetweenPct))
			}
		}
		for j := i + 2; j < len(lines) && strings.HasPrefix(lines[j], "| "); j++ {
			row := strings.Split(strings.Trim(lines[j], "| "), " | ")
			lane, _, _ := strings.Cut(row[0], " (")
			for k, r := range receipts {
				if r == "" || k >= len(row) || !cell.MatchString(row[k]) {
					continue
				}
				want, ok := noise[r][lane]
				if !ok {
					t.Errorf("docs/methodology.md:%d: lane %s is not in %s", j+1, lane, r)
					continue
				}
				if row[k] != want {
					if *update {
						row[k], changed = want, true
						continue
					}
					t.Errorf("docs/methodology.md:%d: %s in %s reads %s, the receipt says %s (go test ./cmd/flipbench/cli -run TestPinningTables -update)", j+1, lane, r, row[k], want)
				}
			}
			lines[j] = "| " + strings.Join(row, " | ") + " |"
		}
	}
	if tables == 0 {
		t.Fatal("docs/methodology.md has no noise table linking a calibration receipt")
	}
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadmeFirstScreen: the README's first screen serves a new user (issue 54): after
// this repository's two set-up commands, what flipbench is, then `flipbench compare` in
// the user's own module with a real table, all within its first 30 lines, before anything
// about this repository's own experiments.
func TestReadmeFirstScreen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	at := func(re string) int {
		r := regexp.MustCompile(re)
		return slices.IndexFunc(lines, r.MatchString)
	}
	setup, what, cmd, table, own := at("^make ab EXP=275 "), at("^flipbench tells you "), at("flipbench compare "), at(`^lane +base +cand +change \[90% CI\] +verdict$`), at("EXP=266|experiment 266|266-sticky")
	if !(setup >= 0 && setup < what && what < cmd && cmd < table && table < 30 && (own < 0 || own > table)) {
		t.Errorf("README's first screen: set-up commands at line %d, what flipbench is at %d, flipbench compare at %d, its table at %d (want in that order within 30 lines), this repository's experiments first named at %d",
			setup+1, what+1, cmd+1, table+1, own+1)
	}
}
