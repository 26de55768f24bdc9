package ledger

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/within"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/report"
)

// Check validates the ledger under root and returns every problem found, ordered by file
// and line; an empty list means the ledger is sound. It checks each page's front matter
// (fields, types, vocabularies: spec.Parse), that its number matches its file name and no
// other page's, its required sections and results markers, its directions against
// experiments/directions.yaml, that no template placeholder is left, that its relative
// links resolve, that every receipt it lists exists with the listed SHA-256, that every
// listed receipt's data folder matches its manifest (so any changed byte in any receipt
// file is caught) and that its analysis.json, when of the current schema, is the drift
// check computed afresh from its plan.json and raw.jsonl (loaded.Open), and that its
// results block, status and receipts are what finalize makes from its newest listed
// receipt, the decision rule applied afresh. Last, experiments/README.md must be what
// flipbench ledger writes. Problem paths are root joined with the file's path below it.
// Beside the problems it returns notes (Problem.Note), which fail nothing: a page whose
// verdict today's analysis method (current; the zero Method is driftcheck.CurrentMethod)
// would change, which keeps its verdict until someone re-analyses it on purpose. The
// error is for failures that stop the check itself, like an unreadable folder.
func Check(root string, current driftcheck.Method) ([]*Problem, error) {
	if current.Schema == 0 {
		current = driftcheck.CurrentMethod("")
	}
	c := &checker{root: root, current: current}
	pages, err := Pages(root)
	if err != nil {
		return nil, err
	}
	c.directions()
	outside, err := OutsidePages(root)
	if err != nil {
		return nil, err
	}
	for _, p := range outside {
		c.add(p, 0, "a symbolic link out of the ledger; a page is a file of the ledger, so this one is not read")
	}
	ids := map[int]string{}
	for _, path := range pages {
		id, _ := PageID(path)
		if first, dup := ids[id]; dup {
			c.add(path, 1, "experiment number %d is also used by %s; give this page the next free number (flipbench new)", id, filepath.Base(first))
		} else {
			ids[id] = path
		}
		if err := c.page(path); err != nil {
			return nil, err
		}
	}
	c.index()
	slices.SortStableFunc(c.problems, func(a, b *Problem) int {
		if x := cmp.Compare(a.File, b.File); x != 0 {
			return x
		}
		return cmp.Compare(a.Line, b.Line)
	})
	return c.problems, nil
}

// checker collects the problems of one ledger.
type checker struct {
	root       string
	current    driftcheck.Method // today's analysis method, for the notes
	problems   []*Problem
	known      []string // registered directions; nil when there is no registry
	noRegistry bool
	// missingSaid says the missing registry was reported (once, for the first page that
	// names a direction).
	missingSaid bool
}

// note records a note: worth knowing, failing nothing.
func (c *checker) note(file string, line int, format string, args ...any) {
	c.problems = append(c.problems, &Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...), Note: true})
}

// add records a problem.
func (c *checker) add(file string, line int, format string, args ...any) {
	c.problems = append(c.problems, &Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// directions reads the registry. It is optional: a page need not name a direction, and
// the registry must exist only when one does (pageDirections says so then).
func (c *checker) directions() {
	path := directionsPath(c.root)
	dirs, err := ReadDirections(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.noRegistry = true
		return
	case err != nil:
		var ps []*Problem
		for _, e := range flatten(err) {
			var p *Problem
			if errors.As(e, &p) {
				ps = append(ps, p)
			} else {
				ps = append(ps, &Problem{File: path, Msg: e.Error()})
			}
		}
		c.problems = append(c.problems, ps...)
	}
	for _, d := range dirs {
		c.known = append(c.known, d.Name)
	}
}

// flatten returns the errors joined in err, or err itself.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// page checks one page.
func (c *checker) page(path string) error {
	p, err := ReadPage(path)
	if err != nil {
		var pr *Problem
		if errors.As(err, &pr) {
			c.problems = append(c.problems, pr)
			return nil
		}
		return err
	}
	placeholders := p.Placeholders()
	if p.SpecErr != nil {
		if errs := spec.Errors(p.SpecErr); len(errs) > 0 {
			for _, e := range errs {
				if slices.ContainsFunc(placeholders, func(pr *Problem) bool { return pr.Line == e.Line }) {
					continue // the placeholder on that line says it better
				}
				msg := e.Msg
				if e.Field != "" {
					msg = e.Field + ": " + msg
				}
				c.add(path, e.Line, "%s", msg)
			}
		} else {
			c.add(path, 1, "%v", p.SpecErr)
		}
	}
	e := p.Spec
	if e != nil {
		if id, ok := PageID(path); ok && id != e.ID {
			c.add(path, e.Lines["id"], "id: %d does not match the number %d in the file name", e.ID, id)
		}
	}
	c.pageDirections(p)
	for _, s := range RequiredSections() {
		if _, ok := p.Sections[s]; !ok {
			c.add(path, p.BodyLine, "missing section ## %s (every page has ## %s)", s, strings.Join(RequiredSections(), ", ## "))
		}
	}
	if p.MarkerProblem != "" {
		c.add(path, p.BodyLine, "%s", p.MarkerProblem)
	}
	c.problems = append(c.problems, placeholders...)
	c.links(p)
	if e != nil {
		if ok := c.receipts(p); ok && len(e.Receipts) > 0 && p.MarkerProblem == "" {
			c.fresh(p)
		}
		if e.StatusBy == spec.StatusByRule && len(e.Receipts) == 0 {
			c.add(path, e.Lines["status-by"], "status-by: rule, but the page lists no receipt; run flipbench finalize %d", e.ID)
		}
	}
	return nil
}

// pageDirections checks a page's directions against the registry. It reads them from
// the front matter's YAML directly, so they are checked even when other fields are wrong.
func (c *checker) pageDirections(p *Page) {
	dirs, _, ok := frontDirections(p)
	if !ok {
		return // the front matter does not parse; spec.Parse said why
	}
	if len(dirs) == 0 {
		return // directions are optional
	}
	if c.noRegistry {
		if !c.missingSaid {
			c.missingSaid = true
			c.add(directionsPath(c.root), 0, "missing, but %s names directions: create it with one line per direction, name: one-line description", p.Path)
		}
		return
	}
	for i, d := range dirs {
		if d.name == "" || slices.Contains(c.known, d.name) {
			continue
		}
		msg := fmt.Sprintf("directions[%d]: unknown direction %q; add it to %s with a one-line description", i, d.name, DirectionsFile)
		if s := spec.Suggest(d.name, c.known); s != "" {
			msg += " (or did you mean " + s + "?)"
		}
		c.add(p.Path, d.line, "%s", msg)
	}
}

// direction is a direction named on a page, with its line.
type direction struct {
	name string
	line int
}

// frontDirections returns the directions a page's front matter lists and the line of the
// directions field (or of the front matter when it has none); ok is false when the front
// matter is not a YAML mapping.
func frontDirections(p *Page) (dirs []direction, line int, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(p.Front, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, 0, false
	}
	root := doc.Content[0]
	off := p.FrontLine - 1
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "directions" {
			continue
		}
		v := root.Content[i+1]
		if v.Kind != yaml.SequenceNode {
			return nil, 0, false // spec.Parse reports the type
		}
		for _, item := range v.Content {
			if item.Kind == yaml.ScalarNode {
				dirs = append(dirs, direction{item.Value, item.Line + off})
			}
		}
		return dirs, root.Content[i].Line + off, true
	}
	return nil, p.FrontLine, true
}

// links checks that the page's relative links resolve.
func (c *checker) links(p *Page) {
	for _, l := range p.Links {
		target, ok := localTarget(l.Dest)
		if !ok {
			continue
		}
		if strings.HasPrefix(target, "/") {
			c.add(p.Path, l.Line, "link %s: absolute path; use a path relative to the page", l.Dest)
			continue
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p.Path), filepath.FromSlash(target))); err != nil {
			c.add(p.Path, l.Line, "broken link %s: no such file or folder", l.Dest)
		}
	}
}

// localTarget returns the file a link points to, without fragment or query, and whether
// it points to a local file at all (not a URL with a scheme, not a fragment of the page).
func localTarget(dest string) (string, bool) {
	if dest == "" || strings.HasPrefix(dest, "#") {
		return "", false
	}
	u, err := url.Parse(dest)
	if err != nil {
		return dest, true
	}
	if u.Scheme != "" || u.Host != "" {
		return "", false
	}
	if u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// receipts checks the receipts a page lists and the manifests of their data folders. It
// reports whether all of them are sound.
func (c *checker) receipts(p *Page) bool {
	e := p.Spec
	ok := true
	var dirs []string
	dirLine := map[string]int{}
	shown := map[string]string{} // data folder -> as the page writes it
	for i, r := range e.Receipts {
		field := fmt.Sprintf("receipts[%d]", i)
		line := e.Lines[field]
		path := filepath.Join(filepath.Dir(p.Path), filepath.FromSlash(r.Path))
		abs, err := filepath.Abs(path)
		if err == nil {
			_, err = within.Path(c.root, abs)
		}
		if err != nil {
			// A page vouches for receipts of its ledger only; hashing any file the page
			// names would read anything on the machine.
			c.add(p.Path, line, "%s: receipt %s is not inside the ledger: %v", field, r.Path, err)
			ok = false
			continue
		}
		sum, err := receipt.HashFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			c.add(p.Path, line, "%s: receipt %s is missing", field, r.Path)
			ok = false
			continue
		case err != nil:
			c.add(p.Path, line, "%s: receipt %s: %v", field, r.Path, err)
			ok = false
			continue
		case sum != r.SHA256:
			c.add(p.Path, line, "%s: receipt %s changed since it was listed (sha256 %s, the page lists %s)", field, r.Path, receipt.ShortHash(sum), receipt.ShortHash(r.SHA256))
			ok = false
		}
		dir, written := filepath.Dir(path), pathpkg.Dir(r.Path)
		if filepath.Base(path) != receipt.ManifestFile {
			dir, written = ReceiptDir(path), strings.TrimSuffix(r.Path, ".md")
		}
		if st, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); err == nil && !st.IsDir() && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
			dirLine[dir], shown[dir] = line, written
		}
	}
	newest := newestListed(filepath.Dir(p.Path), e)
	for _, dir := range dirs {
		if err := receipt.VerifyManifest(dir); err != nil {
			for _, e := range flatten(err) {
				msg := strings.ReplaceAll(e.Error(), dir+string(filepath.Separator), shown[dir]+"/")
				c.add(p.Path, dirLine[dir], "receipt data %s", msg)
			}
			ok = false
			continue
		}
		if filepath.Clean(dir) == filepath.Clean(newest) {
			continue // fresh finalizes from it, which loads it the same way
		}
		// Loading it recomputes its drift analysis from raw.jsonl and compares it with
		// analysis.json, so a forged analysis with a recomputed manifest is caught.
		if _, err := LoadReceipt(dir); err != nil {
			c.add(p.Path, dirLine[dir], "receipt %s: %s", shown[dir], report.OneLine(strings.ReplaceAll(err.Error(), "receipt "+dir+": ", "")))
			ok = false
		}
	}
	return ok
}

// fresh checks that the page is what finalize makes from its newest listed receipt.
func (c *checker) fresh(p *Page) {
	e := p.Spec
	dir := newestListed(filepath.Dir(p.Path), e)
	if dir == "" {
		return
	}
	f, err := Finalize(p.Path, FinalizeOptions{Root: c.root, Receipt: dir})
	if err != nil {
		c.add(p.Path, p.BeginLine, "cannot re-create the results from receipt %s: %v", filepath.Base(dir), report.OneLine(err.Error()))
		return
	}
	// A rule edited after the run is not a sound page even once finalized: its status
	// is then the rule's "inconclusive (spec-changed)", and the page must be restored or
	// measured anew.
	for _, text := range f.Decision.SpecChanges() {
		c.add(p.Path, fieldLine(e, text), "spec-changed: %s", text)
	}
	c.decisionProse(p, f)
	c.methodNote(p, f, dir)
	if f.Changed {
		line := firstDiffLine(p.Data, f.Content)
		c.add(p.Path, line, "the results block, status or receipts differ from what finalize makes from receipt %s; "+
			"do not edit them by hand: run flipbench finalize %d --receipt %s", filepath.Base(dir), e.ID, dir)
	}
}

// methodNote notes a page whose verdict today's analysis method would change: the page
// keeps the verdict of the method it is judged by (f.Method) until someone re-analyses it
// on purpose, and the note says how.
func (c *checker) methodNote(p *Page, f *Finalized, dir string) {
	if f.Method.Same(c.current) {
		return
	}
	now, err := Finalize(p.Path, FinalizeOptions{Root: c.root, Receipt: dir, Current: c.current, Reanalyse: "check"})
	if err != nil {
		c.note(p.Path, 1, "today's analysis method (%s) cannot judge receipt %s: %v", c.current, filepath.Base(dir), report.OneLine(err.Error()))
		return
	}
	if now.Status != f.Status || now.Decision.Summary() != f.Decision.Summary() {
		c.note(p.Path, 1, "decided by the method %s: %s; today's method (%s) would decide %s; the page keeps its verdict until it is re-analysed on purpose: flipbench finalize %d --reanalyse --why \"...\"",
			f.Method, f.Decision.Summary(), c.current, now.Decision.Summary(), p.Spec.ID)
	}
}

// decisionProse checks what the page's ## Decision section says the rule decided: every
// "accepted by the rule", "rejected by the rule" or "inconclusive by the rule" there must
// name the page's status or the rule's verdict for one of its arms, so the prose cannot
// call a page accepted that the rule left inconclusive.
func (c *checker) decisionProse(p *Page, f *Finalized) {
	start, ok := p.Sections["Decision"]
	if !ok {
		return
	}
	said := regexp.MustCompile(`(?i)\b(accepted|rejected|inconclusive) by the (decision )?rule\b`)
	lines := strings.Split(string(p.Data), "\n")
	for i := start; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		for _, m := range said.FindAllStringSubmatch(lines[i], -1) {
			word := spec.Status(strings.ToLower(m[1]))
			if word == f.Status || slices.ContainsFunc(f.Decision.Arms, func(a decide.ArmDecision) bool { return a.Status == word }) {
				continue
			}
			c.add(p.Path, i+1, "## Decision says %q, but the status is %s and the rule decided %s; correct the prose (or point at the results block rather than restating it)",
				m[0], f.Status, f.Decision.Summary())
		}
	}
}

// fieldLine returns the page line of the field a spec-changed text starts with
// ("incidence.arms: ..."), or of the nearest enclosing field the page still has; 1 when
// none is found.
func fieldLine(e *spec.Experiment, text string) int {
	field, _, _ := strings.Cut(text, ":")
	for field != "" {
		if line, ok := e.Lines[field]; ok {
			return line
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 1
}

// firstDiffLine returns the first line at which a and b differ.
func firstDiffLine(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return 1 + bytes.Count(a[:i], []byte("\n"))
}

// index checks that experiments/README.md is what flipbench ledger writes.
func (c *checker) index() {
	path := filepath.Join(c.root, filepath.FromSlash(IndexFile))
	want, err := Index(c.root)
	if err != nil {
		c.add(path, 0, "cannot build the index: %v", err)
		return
	}
	got, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.add(path, 0, "missing; run flipbench ledger")
	case err != nil:
		c.add(path, 0, "%v", err)
	case !bytes.Equal(got, want):
		c.add(path, firstDiffLine(got, want), "out of date; run flipbench ledger")
	}
}
