package ledger

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/flipbench/flipbench/model/spec"
)

// The markers around the generated results block of a page. finalize replaces everything
// between them; the prose around them is never rewritten.
const (
	BeginMarker = "<!-- flipbench:results:begin -->"
	EndMarker   = "<!-- flipbench:results:end -->"
)

// RequiredSections returns the second-level headings every page must have, in order.
func RequiredSections() []string { return []string{"Problem", "Hypothesis", "Approach", "Decision"} }

// Problem is one problem in a ledger file, printed as "file:line: message".
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem concerns the file as a whole.
	Line int
	Msg  string
	// Note says it is worth knowing but fails nothing (Check's notes).
	Note bool
}

// Error formats the problem as "file:line: message".
func (p *Problem) Error() string {
	msg := p.Msg
	if p.Note {
		msg = "note: " + msg
	}
	switch {
	case p.File == "":
		return msg
	case p.Line > 0:
		return p.File + ":" + strconv.Itoa(p.Line) + ": " + msg
	default:
		return p.File + ": " + msg
	}
}

// Page is an experiment page split into its parts. The spec is parsed by spec.Parse and
// the body by goldmark; every part keeps its page line numbers.
type Page struct {
	// Path is the page's path as given; it prefixes every problem.
	Path string
	// Data is the page's content.
	Data []byte
	// Spec is the parsed front matter, or nil when SpecErr is set.
	Spec *spec.Experiment
	// SpecErr holds the front matter's problems (spec.Error values, joined).
	SpecErr error
	// Front is the front matter text; FrontLine is the page line it starts on.
	Front     []byte
	FrontLine int
	// Body is everything after the front matter; BodyOffset is its offset in Data and
	// BodyLine the page line it starts on.
	Body       []byte
	BodyOffset int
	BodyLine   int
	// Sections maps each second-level heading's text to its page line (first one wins).
	Sections map[string]int
	// Begin and End are the offsets in Data of the results markers' lines (the start of
	// the line); -1 when absent. BeginLine and EndLine are their page lines.
	Begin, End         int
	BeginLine, EndLine int
	// MarkerProblem says what is wrong with the markers, or is empty.
	MarkerProblem string
	// Links are the link and image destinations in the body, with their page lines.
	Links []Link

	codes [][2]int // byte ranges of the body (body offsets) inside code blocks and spans
}

// Link is a link or image destination in a page's body.
type Link struct {
	Dest string
	Line int
}

// ReadPage reads and parses the page at path; see ParsePage.
func ReadPage(path string) (*Page, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePage(path, data)
}

// ParsePage splits and parses an experiment page. It returns an error only when the page
// has no front matter to split off; problems inside the front matter are in SpecErr and
// the rest is reported by Check.
func ParsePage(path string, data []byte) (*Page, error) {
	front, frontLine, body, err := spec.SplitPage(data)
	if err != nil {
		return nil, &Problem{File: path, Line: 1, Msg: err.Error()}
	}
	p := &Page{
		Path:       path,
		Data:       data,
		Front:      front,
		FrontLine:  frontLine,
		Body:       body,
		BodyOffset: len(data) - len(body),
		Sections:   map[string]int{},
		Begin:      -1,
		End:        -1,
	}
	p.BodyLine = 1 + bytes.Count(data[:p.BodyOffset], []byte("\n"))
	p.Spec, p.SpecErr = spec.Parse(path, data)
	p.parseBody()
	p.findMarkers()
	return p, nil
}

// lineAt returns the page line of a body offset.
func (p *Page) lineAt(off int) int {
	off = min(max(off, 0), len(p.Body))
	return p.BodyLine + bytes.Count(p.Body[:off], []byte("\n"))
}

// newMarkdown returns the goldmark converter used for pages: CommonMark plus GitHub
// flavoured tables, strikethrough, autolinks and task lists. Raw HTML is left out of the
// HTML it renders (goldmark's default).
func newMarkdown() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.GFM))
}

// parseBody parses the body with goldmark and collects headings, links and code ranges.
func (p *Page) parseBody() {
	doc := newMarkdown().Parser().Parse(text.NewReader(p.Body))
	src := p.Body
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if n.Level == 2 && n.Lines().Len() > 0 {
				title := strings.TrimSpace(inlineText(n, src))
				if _, ok := p.Sections[title]; !ok {
					p.Sections[title] = p.lineAt(n.Lines().At(0).Start)
				}
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			if lines.Len() > 0 {
				p.codes = append(p.codes, [2]int{lines.At(0).Start, lines.At(lines.Len() - 1).Stop})
			}
		case *ast.CodeSpan:
			if start, stop, ok := inlineRange(n); ok {
				// Include the backticks around the span.
				p.codes = append(p.codes, [2]int{max(start-1, 0), min(stop+1, len(src))})
			}
		case *ast.Link:
			p.Links = append(p.Links, Link{Dest: string(n.Destination), Line: p.nodeLine(n)})
		case *ast.Image:
			p.Links = append(p.Links, Link{Dest: string(n.Destination), Line: p.nodeLine(n)})
		}
		return ast.WalkContinue, nil
	})
}

// nodeLine returns the page line of an inline node: that of its first text, or of the
// block holding it.
func (p *Page) nodeLine(n ast.Node) int {
	if start, _, ok := inlineRange(n); ok {
		return p.lineAt(start)
	}
	for b := n.Parent(); b != nil; b = b.Parent() {
		if b.Type() == ast.TypeBlock && b.Lines().Len() > 0 {
			return p.lineAt(b.Lines().At(0).Start)
		}
	}
	return p.BodyLine
}

// inlineRange returns the body range covered by the text segments inside n.
func inlineRange(n ast.Node) (start, stop int, ok bool) {
	start, stop = -1, -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, isText := c.(*ast.Text); entering && isText {
			if start < 0 || t.Segment.Start < start {
				start = t.Segment.Start
			}
			stop = max(stop, t.Segment.Stop)
		}
		return ast.WalkContinue, nil
	})
	return start, stop, start >= 0
}

// inlineText concatenates the text segments inside n (Node.Text is deprecated).
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// findMarkers locates the results markers: each on a line of its own, once, begin first.
func (p *Page) findMarkers() {
	begins := markerLines(p.Body, BeginMarker)
	ends := markerLines(p.Body, EndMarker)
	switch {
	case len(begins) == 0 && len(ends) == 0:
		p.MarkerProblem = "no results markers: add the line " + BeginMarker + " and, below it, the line " + EndMarker +
			", each on its own, between ## Approach and ## Decision; finalize writes the results between them"
		return
	case len(begins) == 0:
		p.MarkerProblem = fmt.Sprintf("%s has no %s before it; add it on its own line where the results should start", EndMarker, BeginMarker)
		return
	case len(ends) == 0:
		p.MarkerProblem = fmt.Sprintf("%s has no %s after it; add it on its own line where the results should end", BeginMarker, EndMarker)
		return
	case len(begins) > 1 || len(ends) > 1:
		p.MarkerProblem = fmt.Sprintf("the results markers must appear once each (found %d begin, %d end); remove the extra ones", len(begins), len(ends))
		return
	case ends[0] < begins[0]:
		p.MarkerProblem = fmt.Sprintf("%s comes before %s; swap them", EndMarker, BeginMarker)
		return
	}
	p.Begin, p.End = p.BodyOffset+begins[0], p.BodyOffset+ends[0]
	p.BeginLine, p.EndLine = p.lineAt(begins[0]), p.lineAt(ends[0])
}

// markerLines returns the body offsets of the lines that consist of marker (blanks
// around it allowed).
func markerLines(body []byte, marker string) []int {
	var out []int
	for off := 0; off < len(body); {
		line, _, _ := bytes.Cut(body[off:], []byte("\n"))
		if string(bytes.TrimSpace(line)) == marker {
			out = append(out, off)
		}
		off += len(line) + 1
	}
	return out
}

// inCode reports whether the body offset off lies in a code block or code span.
func (p *Page) inCode(off int) bool {
	return slices.ContainsFunc(p.codes, func(r [2]int) bool { return off >= r[0] && off < r[1] })
}

// placeholderPattern matches a template placeholder such as <what is slow, for whom>.
const placeholderPattern = `<[A-Za-z][^<>\n]*>`

// htmlTags are the tag names that count as HTML, not as placeholders, when written bare
// (<br>) or with attributes (<a href="x">).
func htmlTags() []string {
	return []string{"a", "abbr", "b", "br", "code", "del", "details", "div", "em", "hr", "i", "img",
		"kbd", "li", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "summary", "sup",
		"table", "tbody", "td", "th", "thead", "tr", "u", "ul"}
}

// isPlaceholder reports whether m, a match of placeholderPattern, is a template
// placeholder rather than an HTML tag or an autolink.
func isPlaceholder(m string) bool {
	inner := strings.Trim(m, "<>")
	if strings.Contains(inner, "://") || strings.HasPrefix(inner, "mailto:") ||
		regexp.MustCompile(`^[^\s@]+@[^\s@]+$`).MatchString(inner) {
		return false
	}
	name, rest, _ := strings.Cut(strings.TrimSuffix(inner, "/"), " ")
	if slices.Contains(htmlTags(), strings.ToLower(name)) && (rest == "" || strings.Contains(rest, "=")) {
		return false
	}
	return true
}

// Placeholders returns the template placeholders left in the page, outside code and
// outside the generated results block, as problems.
func (p *Page) Placeholders() []*Problem {
	re := regexp.MustCompile(placeholderPattern)
	var out []*Problem
	add := func(line int, m string) {
		out = append(out, &Problem{File: p.Path, Line: line, Msg: fmt.Sprintf("template placeholder %s: replace it with the real text", m)})
	}
	for i, line := range bytes.Split(p.Front, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			continue // a comment: the template's examples may stay
		}
		if comment := bytes.Index(line, []byte(" #")); comment >= 0 {
			line = line[:comment]
		}
		for _, m := range re.FindAll(line, -1) {
			if isPlaceholder(string(m)) {
				add(p.FrontLine+i, string(m))
			}
		}
	}
	for _, loc := range re.FindAllIndex(p.Body, -1) {
		off := loc[0]
		abs := p.BodyOffset + off
		if p.inCode(off) || (p.Begin >= 0 && abs > p.Begin && abs < p.End) {
			continue
		}
		if m := string(p.Body[loc[0]:loc[1]]); isPlaceholder(m) {
			add(p.lineAt(off), m)
		}
	}
	return out
}
