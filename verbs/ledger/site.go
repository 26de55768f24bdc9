package ledger

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/within"
	"github.com/flipbench/flipbench/model/spec"
)

// siteCSS is the style sheet of the static site.
//
//go:embed site.css
var siteCSS []byte

// siteTemplate is the HTML frame of every page of the static site.
//
//go:embed site.html
var siteTemplate string

// SiteResult says what BuildSite wrote.
type SiteResult struct {
	// Files are the files written, relative to the output folder, slash-separated.
	Files []string
	// Warnings are links that could not be carried into the site (they point outside the
	// ledger root), each as "file: link".
	Warnings []string
}

// BuildSite writes the ledger under root as a static HTML site into out: index.html (the
// ledger's index and the directions), one page per experiment (its front matter as a
// table, then its body), the receipt pages they link to, and the receipts' data folders
// (plots included) with a listing each. Markdown is rendered by goldmark with GitHub
// flavoured extensions; raw HTML in pages is left out, never passed through. Relative links
// keep working: the site mirrors the ledger's layout, and links to .md files point to the
// rendered .html.
func BuildSite(root, out string) (*SiteResult, error) {
	s := &site{root: filepath.Clean(root), out: out, res: &SiteResult{}, done: map[string]bool{}}
	tmpl, err := template.New("page").Parse(siteTemplate)
	if err != nil {
		return nil, err
	}
	s.tmpl = tmpl
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := s.write("style.css", siteCSS); err != nil {
		return nil, err
	}
	if err := s.index(); err != nil {
		return nil, err
	}
	pages, err := Pages(root)
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		if rel := s.relRoot(p); !s.done[rel] {
			if err := s.markdown(rel); err != nil {
				return nil, err
			}
		}
	}
	for len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		if err := s.target(next); err != nil {
			return nil, err
		}
	}
	slices.Sort(s.res.Files)
	return s.res, nil
}

// site is the state of one BuildSite call.
type site struct {
	root, out string
	tmpl      *template.Template
	res       *SiteResult
	done      map[string]bool // root-relative slash paths already queued
	queue     []string        // root-relative slash paths of link targets to carry over
}

// relRoot returns a path below the root as a root-relative slash path.
func (s *site) relRoot(p string) string {
	r, err := filepath.Rel(s.root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// write writes a file of the site.
func (s *site) write(rel string, data []byte) error {
	dst := filepath.Join(s.out, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return err
	}
	s.res.Files = append(s.res.Files, rel)
	return nil
}

// frame is what the HTML frame shows.
type frame struct {
	Title string
	// Up is the path from the page to the site's root ("", "../").
	Up   string
	Meta []metaRow
	Body template.HTML
}

// metaRow is one row of an experiment's front matter table.
type metaRow struct {
	Key   string
	Value string
	Class string
	Links []metaLink
}

// metaLink is a link inside a metaRow.
type metaLink struct {
	Text, Href, Note string
}

// upPath returns the relative path from a root-relative file to the root.
func upPath(rel string) string {
	return strings.Repeat("../", strings.Count(rel, "/"))
}

// render writes one HTML page of the site at rel.
func (s *site) render(rel string, f frame) error {
	f.Up = upPath(rel)
	var buf bytes.Buffer
	if err := s.tmpl.Execute(&buf, f); err != nil {
		return err
	}
	return s.write(rel, buf.Bytes())
}

// htmlName maps a markdown path to its rendered page.
func htmlName(p string) string { return strings.TrimSuffix(p, ".md") + ".html" }

// index writes index.html: the ledger's index and the directions registry.
func (s *site) index() error {
	entries, err := IndexEntries(s.root)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# Experiments\n\nEvery experiment of the ledger, newest first. %s\n\n", headlineNote)
	if err := RenderIndex(&md, entries, s.relRoot); err != nil {
		return err
	}
	if dirs, err := ReadDirections(directionsPath(s.root)); err == nil && len(dirs) > 0 {
		fmt.Fprintf(&md, "\n## Directions\n\n")
		var rows [][]string
		for _, d := range dirs {
			rows = append(rows, []string{d.Name, d.Description})
		}
		if err := mdtable.Write(&md, []string{"direction", "description"}, rows); err != nil {
			return err
		}
	}
	body, err := s.toHTML(md.Bytes(), "index.md")
	if err != nil {
		return err
	}
	// Mark the index table, so the style sheet keeps its short cells on one line.
	body = template.HTML(strings.Replace(string(body), "<table>", `<table class="index">`, 1))
	return s.render("index.html", frame{Title: "Experiments", Body: body})
}

// markdown renders the markdown file at root-relative rel into rel with .html.
func (s *site) markdown(rel string) error {
	s.done[rel] = true
	src := filepath.Join(s.root, filepath.FromSlash(rel))
	if _, err := within.Path(s.root, filepath.FromSlash(rel)); err != nil {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: a symbolic link out of the ledger; not published", rel))
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	out := htmlName(rel)
	f := frame{Title: strings.TrimSuffix(path.Base(rel), ".md")}
	body := data
	if _, ok := PageID(rel); ok && path.Dir(rel) == ExperimentsDir {
		if p, err := ParsePage(src, data); err == nil {
			body = p.Body
			if p.Spec != nil {
				f.Title = fmt.Sprintf("Experiment %03d: %s", p.Spec.ID, p.Spec.Title)
				f.Meta = s.meta(rel, p.Spec)
			}
		}
	} else if fm, _, b, err := spec.SplitPage(data); err == nil && len(fm) > 0 {
		body = b
	}
	if t := firstHeading(body); t != "" && f.Meta == nil {
		f.Title = t
	}
	html, err := s.toHTML(body, rel)
	if err != nil {
		return fmt.Errorf("rendering %s: %w", rel, err)
	}
	f.Body = html
	return s.render(out, f)
}

// firstHeading returns the text of a markdown text's first heading, or "".
func firstHeading(md []byte) string {
	for _, line := range strings.Split(string(md), "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// meta builds an experiment's front matter table; links are queued like body links.
func (s *site) meta(rel string, e *spec.Experiment) []metaRow {
	rows := []metaRow{
		{Key: "status", Value: string(e.Status), Class: "status status-" + string(e.Status)},
	}
	if e.StatusBy != "" {
		rows[0].Value += " (set by the " + e.StatusBy + ")"
	} else if e.Status != spec.StatusPlanned && e.Status != spec.StatusRunning {
		rows[0].Value += " (set by hand)"
	}
	if r := e.Reanalysed; r != nil {
		rows[0].Value += ", re-analysed on purpose: " + r.Why
	}
	rows = append(rows,
		metaRow{Key: "category", Value: e.Category},
		metaRow{Key: "directions", Value: strings.Join(e.Directions, ", ")},
		metaRow{Key: "date", Value: e.Date},
	)
	var arms []string
	for _, a := range e.Arms {
		arms = append(arms, a.Name)
	}
	rows = append(rows, metaRow{Key: "arms", Value: strings.Join(arms, ", ")})
	var lanes []string
	for _, l := range e.Lanes {
		d := l.Name + " (" + string(l.Role)
		if l.Expect != "" {
			d += ", expect " + l.Expect
		}
		lanes = append(lanes, d+")")
	}
	rows = append(rows, metaRow{Key: "lanes", Value: strings.Join(lanes, "; ")})
	if len(e.Receipts) > 0 {
		r := metaRow{Key: "receipts"}
		for _, rc := range e.Receipts {
			href := s.link(rel, rc.Path)
			r.Links = append(r.Links, metaLink{Text: path.Base(rc.Path), Href: href, Note: "sha256 " + rc.SHA256[:min(12, len(rc.SHA256))]})
		}
		rows = append(rows, r)
	}
	return rows
}

// toHTML renders the markdown of the file at root-relative src: links to local files are
// queued for the site and rewritten (.md to .html, folders to their listing).
func (s *site) toHTML(md []byte, src string) (template.HTML, error) {
	link := func(dest string) string { return s.link(src, dest) }
	return markdownHTML(md, link, link)
}

// markdownHTML renders markdown with GitHub flavoured extensions and heading ids, every
// link's destination passed through link and every image's through image. Raw HTML is
// left out.
func markdownHTML(md []byte, link, image func(dest string) string) (template.HTML, error) {
	m := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	doc := m.Parser().Parse(text.NewReader(md))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			n.Destination = []byte(link(string(n.Destination)))
		case *ast.Image:
			n.Destination = []byte(image(string(n.Destination)))
		}
		return ast.WalkContinue, nil
	})
	var buf bytes.Buffer
	if err := m.Renderer().Render(&buf, md, doc); err != nil {
		return "", err
	}
	// goldmark escapes text and leaves raw HTML out, so its output is safe to embed.
	return template.HTML(buf.String()), nil
}

// link rewrites one link of the file at root-relative src and queues its target.
func (s *site) link(src, dest string) string {
	target, ok := localTarget(dest)
	if !ok || strings.HasPrefix(target, "/") {
		return dest
	}
	u, _ := url.Parse(dest)
	frag := ""
	if u != nil && u.Fragment != "" {
		frag = "#" + u.Fragment
	}
	full := path.Clean(path.Join(path.Dir(src), target))
	if full == ".." || strings.HasPrefix(full, "../") {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: %s points outside the ledger", src, dest))
		return dest
	}
	if _, err := within.Path(s.root, filepath.FromSlash(full)); err != nil {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: %s points outside the ledger through a symbolic link; not published", src, dest))
		return dest
	}
	st, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(full)))
	if err != nil {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: %s is broken", src, dest))
		return dest
	}
	if !s.done[full] {
		s.done[full] = true
		s.queue = append(s.queue, full)
	}
	switch {
	case st.IsDir():
		return strings.TrimSuffix(target, "/") + "/index.html" + frag
	case strings.HasSuffix(target, ".md"):
		return htmlName(target) + frag
	}
	return dest
}

// target carries one link target into the site: markdown is rendered, a folder is copied
// with a listing, any other file is copied.
func (s *site) target(rel string) error {
	src := filepath.Join(s.root, filepath.FromSlash(rel))
	if _, err := within.Path(s.root, filepath.FromSlash(rel)); err != nil {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: a symbolic link out of the ledger; not published", rel))
		return nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	switch {
	case st.IsDir():
		return s.folder(rel)
	case strings.HasSuffix(rel, ".md"):
		return s.markdown(rel)
	}
	return s.copyFile(rel)
}

// copyFile copies one file of the ledger into the site. A file that is a symbolic link to
// something outside the ledger is not copied: the site publishes the ledger, nothing else.
func (s *site) copyFile(rel string) error {
	if _, err := within.Path(s.root, filepath.FromSlash(rel)); err != nil {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: a symbolic link out of the ledger; not published", rel))
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	return s.write(rel, data)
}

// folder copies the files of a folder (a receipt's data folder) and writes a listing.
func (s *site) folder(rel string) error {
	entries, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s/\n\n", path.Base(rel))
	var rows [][]string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		child := path.Join(rel, e.Name())
		if _, err := within.Path(s.root, filepath.FromSlash(child)); err != nil {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s: a symbolic link out of the ledger; not published", child))
			continue
		}
		if !s.done[child] {
			s.done[child] = true
			if err := s.copyFile(child); err != nil {
				return err
			}
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rows = append(rows, []string{fmt.Sprintf("[%s](%s)", e.Name(), url.PathEscape(e.Name())), fmt.Sprintf("%d bytes", info.Size())})
	}
	if err := mdtable.Write(&md, []string{"file", "size"}, rows); err != nil {
		return err
	}
	out := rel + "/index.html"
	m := goldmark.New(goldmark.WithExtensions(extension.GFM))
	var buf bytes.Buffer
	if err := m.Convert(md.Bytes(), &buf); err != nil {
		return err
	}
	return s.render(out, frame{Title: path.Base(rel) + "/", Body: template.HTML(buf.String())})
}
