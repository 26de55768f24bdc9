package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/spec"
)

// FinalizeOptions are the choices of Finalize.
type FinalizeOptions struct {
	// Root is the ledger root (the folder holding experiments/ and results/).
	Root string
	// Receipt is the receipt to finalize from: its data folder or its page. Empty means
	// the newest receipt of the experiment under Root/results.
	Receipt string
	// Incidence is the incidence measurement for the rule's incidence gate. Nil means
	// the receipt's own: the incidence.json an ab run wrote into its data folder, if any.
	Incidence *decide.Incidence
	// Current is this flipbench's analysis method: what Reanalyse judges by. The zero
	// Method is driftcheck.CurrentMethod("").
	Current driftcheck.Method
	// Reanalyse, when not empty, is why the page is judged by Current on purpose rather
	// than by the method its receipt was planned with; the page records the method and
	// the reason (reanalysed in its front matter) and shows both verdicts.
	Reanalyse string
}

// current returns the method Reanalyse judges by.
func (o FinalizeOptions) current() driftcheck.Method {
	if o.Current.Schema == 0 {
		return driftcheck.CurrentMethod("")
	}
	return o.Current
}

// Finalized is the outcome of Finalize.
type Finalized struct {
	// Page is the page's path; Receipt the receipt data folder used.
	Page    string
	Receipt string
	// Content is the finalized page; Changed says whether it differs from the page on disk.
	Content []byte
	Changed bool
	// Decision is the decision rule's verdict, by Method.
	Decision decide.Decision
	// Method is the analysis method the page is judged by: its receipt's (Receipt's
	// plan), or the one it was re-analysed with (Reanalysed).
	Method driftcheck.Method
	// Reanalysed is what the page records of a judgement by another method than the
	// receipt's, nil when there is none; Recorded is then the decision by the receipt's
	// own method, which the page shows beside Decision.
	Reanalysed *spec.Reanalysis
	Recorded   *decide.Decision
	// Status is the status the page now has. ByHand says a person set it, so finalize
	// kept it; Disagrees says the rule would have set another one.
	Status    spec.Status
	ByHand    bool
	Disagrees bool
	// Receipts are the receipts the page now lists.
	Receipts []spec.ReceiptRef
	// Unfinished are the receipts newer than the one used that are not finished (a run
	// still measuring, or interrupted), which finalize passed over.
	Unfinished []string
}

// Finalize computes the finalized form of the experiment page at path from a receipt: the
// results block between the markers, the status (set by the decision rule unless a person
// set it by hand: a status other than planned or running with no status-by), status-by,
// and the receipts list with SHA-256 hashes. Only those front matter keys change; every
// other byte of the page is kept. It writes nothing: the caller writes Content when
// Changed. The receipt must be finished (the newest finished one is taken; newer
// unfinished ones are passed over and named in Unfinished), match its manifest, have the
// page its data rendered, belong to the page's experiment and, when the page lists it
// already, still have the hashes listed (ListedChanges). Finalizing a finalized page from
// the same receipt changes nothing.
func Finalize(path string, opts FinalizeOptions) (*Finalized, error) {
	p, err := ReadPage(path)
	if err != nil {
		return nil, err
	}
	if p.SpecErr != nil {
		return nil, p.SpecErr
	}
	if p.MarkerProblem != "" {
		return nil, &Problem{File: path, Msg: p.MarkerProblem}
	}
	e := p.Spec
	dir := opts.Receipt
	var unfinished []string
	if dir == "" {
		if dir, unfinished, err = NewestReceipt(opts.Root, e.ID); err != nil {
			return nil, err
		}
	}
	if err := ListedChanges(path, e, ReceiptDir(dir)); err != nil {
		return nil, err
	}
	d, err := LoadReceipt(dir)
	if err != nil {
		return nil, err
	}
	if d.Plan.Part() {
		return nil, fmt.Errorf("receipt %s is %s of a run, with some of its pass pairs; merge the shards (flipbench merge) and finalize from the merged receipt", d.Dir, d.Plan.Shard.Name())
	}
	if d.Plan.Experiment != e.ID {
		return nil, fmt.Errorf("receipt %s is of experiment %d (its plan.json says so), not %d (%s)", d.Dir, d.Plan.Experiment, e.ID, path)
	}
	if n, ok := ParseReceiptName(d.Dir); ok && n.Experiment != e.ID {
		return nil, fmt.Errorf("receipt %s is named for experiment %d, not %d (%s); a renamed receipt is refused", d.Dir, n.Experiment, e.ID, path)
	}

	inc := opts.Incidence
	var incReport *incidence.Report
	if inc == nil {
		if inc, incReport, err = receiptIncidence(d.Dir); err != nil {
			return nil, err
		}
	}
	judge := func(d *loaded.Receipt) decide.Decision {
		return decide.Decide(decide.Input{Spec: e, Plan: d.Plan, Analysis: d.Analysis, Incidence: inc, Counts: decide.CountsOf(d.Records)})
	}
	rean, err := reanalysis(e, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var recorded *decide.Decision
	if rean != nil {
		m, _ := driftcheck.ParseMethod(rean.Method) // reanalysis checked it
		if !m.Same(d.Method) {
			own := judge(d)
			recorded = &own
			if d, err = d.ByMethod(m); err != nil {
				return nil, fmt.Errorf("%s is judged by the method it was re-analysed with (%s), which this flipbench cannot compute: %w; finalize --reanalyse judges it by today's", path, rean.Method, err)
			}
		}
	}
	dec := judge(d)
	f := &Finalized{Page: path, Receipt: d.Dir, Decision: dec, Status: dec.Status, Unfinished: unfinished,
		Method: d.Method, Reanalysed: rean, Recorded: recorded}
	if e.Status != spec.StatusPlanned && e.Status != spec.StatusRunning && e.StatusBy == "" {
		f.ByHand, f.Status = true, e.Status
		f.Disagrees = e.Status != dec.Status
	}
	pageDir := filepath.Dir(path)
	block, err := blockText(&blockInput{pageDir: pageDir, data: d, decision: dec, status: f.Status, byHand: f.ByHand, inc: inc, incReport: incReport,
		reanalysed: rean, recorded: recorded})
	if err != nil {
		return nil, err
	}
	if f.Receipts, err = receiptRefs(pageDir, d.Dir); err != nil {
		return nil, err
	}

	out := spliceBlock(p, block)
	var edit frontEdit
	edit.receipts = f.Receipts
	edit.reanalysed = rean
	if !f.ByHand {
		edit.status, edit.statusBy = string(f.Status), spec.StatusByRule
	}
	if out, err = edit.apply(out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := spec.Parse(path, out); err != nil {
		return nil, fmt.Errorf("finalize made an invalid front matter (a bug; the page is unchanged): %w", err)
	}
	f.Content = out
	f.Changed = !bytes.Equal(out, p.Data)
	return f, nil
}

// reanalysis returns what the page will record of a judgement by another method than its
// receipt's: a new one when opts asks for it (today's method, with the reason given), else
// the one the page records already, else nil.
func reanalysis(e *spec.Experiment, opts FinalizeOptions) (*spec.Reanalysis, error) {
	if why := strings.TrimSpace(opts.Reanalyse); why != "" {
		m := opts.current()
		if err := m.Computable(); err != nil {
			return nil, err
		}
		return &spec.Reanalysis{Method: m.String(), Why: why}, nil
	}
	if e.Reanalysed == nil {
		return nil, nil
	}
	if _, err := driftcheck.ParseMethod(e.Reanalysed.Method); err != nil {
		return nil, fmt.Errorf("reanalysed.method: %w", err)
	}
	return e.Reanalysed, nil
}

// spliceBlock returns the page with block between its markers, one blank line on either
// side.
func spliceBlock(p *Page, block []byte) []byte {
	start := p.Begin + bytes.IndexByte(p.Data[p.Begin:], '\n') + 1
	var out bytes.Buffer
	out.Write(p.Data[:start])
	out.WriteString("\n")
	out.Write(block)
	if !bytes.HasSuffix(block, []byte("\n")) {
		out.WriteString("\n")
	}
	out.WriteString("\n")
	out.Write(p.Data[p.End:])
	return out.Bytes()
}

// frontEdit is the set of targeted front matter changes finalize makes.
type frontEdit struct {
	// reanalysed, when set, is written as the page's reanalysed field.
	reanalysed *spec.Reanalysis
	// status and statusBy are written when not empty.
	status, statusBy string
	// receipts replaces the receipts list when not nil.
	receipts []spec.ReceiptRef
}

// topKey is a top-level key of the front matter and its extent in page lines (1-based,
// inclusive).
type topKey struct {
	name       string
	start, end int
}

// apply makes the edits on page data, line by line: the status value is replaced in
// place (a comment after it stays), status-by and receipts are replaced or inserted
// whole. All other lines are kept byte for byte.
func (fe frontEdit) apply(data []byte) ([]byte, error) {
	front, frontLine, _, err := spec.SplitPage(data)
	if err != nil {
		return nil, err
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	closing := frontLine + bytes.Count(front, []byte("\n")) // page line of the closing ---
	keys, err := topKeys(front, frontLine, closing, lines)
	if err != nil {
		return nil, err
	}
	find := func(name string) (topKey, bool) {
		i := slices.IndexFunc(keys, func(k topKey) bool { return k.name == name })
		if i < 0 {
			return topKey{}, false
		}
		return keys[i], true
	}
	eol := "\n"
	if bytes.HasSuffix(lines[frontLine-1], []byte("\r\n")) {
		eol = "\r\n"
	}

	type change struct {
		start, end int // lines replaced (inclusive); end = start-1 inserts before start
		text       []string
	}
	var changes []change
	status, ok := find("status")
	if fe.status != "" {
		if !ok {
			return nil, errors.New("no status field to set")
		}
		line := strings.TrimRight(string(lines[status.start-1]), "\r\n")
		m := regexp.MustCompile(`^(status:[ \t]*)("[^"]*"|'[^']*'|[^\s#]+)(.*)$`).FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: cannot read the status value to replace it", status.start)
		}
		changes = append(changes, change{status.start, status.start, []string{m[1] + fe.status + m[3]}})
	}
	if fe.statusBy != "" {
		if k, ok := find("status-by"); ok {
			changes = append(changes, change{k.start, k.end, []string{"status-by: " + fe.statusBy}})
		} else {
			at := closing
			if status.start > 0 {
				at = status.end + 1
			}
			changes = append(changes, change{at, at - 1, []string{"status-by: " + fe.statusBy}})
		}
	}
	if r := fe.reanalysed; r != nil {
		text := []string{fmt.Sprintf("reanalysed: {method: %s, why: %s}", yamlString(r.Method), yamlString(r.Why))}
		if k, ok := find("reanalysed"); ok {
			changes = append(changes, change{k.start, k.end, text})
		} else {
			changes = append(changes, change{closing, closing - 1, text})
		}
	}
	if fe.receipts != nil {
		text := []string{"receipts:"}
		for _, r := range fe.receipts {
			text = append(text, fmt.Sprintf("  - {path: %s, sha256: %s}", yamlPath(r.Path), r.SHA256))
		}
		if k, ok := find("receipts"); ok {
			changes = append(changes, change{k.start, k.end, text})
		} else {
			changes = append(changes, change{closing, closing - 1, text})
		}
	}
	slices.SortStableFunc(changes, func(a, b change) int { return b.start - a.start })
	for _, c := range changes {
		repl := make([][]byte, len(c.text))
		for i, t := range c.text {
			repl[i] = []byte(t + eol)
		}
		lines = slices.Replace(lines, c.start-1, c.end, repl...)
	}
	return bytes.Join(lines, nil), nil
}

// yamlString writes s as a double-quoted YAML scalar (a JSON string is one).
func yamlString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// topKeys returns the top-level keys of the front matter with their line extents. A key
// runs to the line before the next key (or the closing line), minus trailing blank lines
// and unindented comments, which belong to what follows.
func topKeys(front []byte, frontLine, closing int, lines [][]byte) ([]topKey, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the front matter is not a mapping")
	}
	root := doc.Content[0]
	var keys []topKey
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys = append(keys, topKey{name: root.Content[i].Value, start: root.Content[i].Line + frontLine - 1})
	}
	for i := range keys {
		end := closing - 1
		if i+1 < len(keys) {
			end = keys[i+1].start - 1
		}
		for end > keys[i].start {
			l := lines[end-1]
			if t := bytes.TrimSpace(l); len(t) == 0 || l[0] == '#' {
				end--
				continue
			}
			break
		}
		keys[i].end = end
	}
	return keys, nil
}

// yamlPath writes a path as a YAML flow scalar, quoted when it holds anything but
// letters, digits and ._/+- (which a plain scalar in a flow mapping can hold).
func yamlPath(p string) string {
	if regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`).MatchString(p) {
		return p
	}
	return strconv.Quote(p)
}
