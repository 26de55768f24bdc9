package ledger

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/model/lanekind"
)

// TemplateFile is the page template under the ledger root, for an exec harness (prebuilt
// lane programs). NewPage falls back to a built-in copy when a ledger has none.
const TemplateFile = "experiments/TEMPLATE.md"

// GotestTemplateFile is the page template for Go benchmarks (a gotest harness, arms from
// git refs), under the ledger root; NewPage falls back to a built-in copy.
const GotestTemplateFile = "experiments/TEMPLATE-gotest.md"

// defaultTemplate is the built-in page template, the same as the repository's
// experiments/TEMPLATE.md.
//
//go:embed template.md
var defaultTemplate []byte

// gotestTemplate is the built-in Go benchmark page template, the same as the repository's
// experiments/TEMPLATE-gotest.md.
//
//go:embed template-gotest.md
var gotestTemplate []byte

// DefaultTemplate returns the built-in page template (exec).
func DefaultTemplate() []byte { return append([]byte(nil), defaultTemplate...) }

// GotestTemplate returns the built-in page template for Go benchmarks.
func GotestTemplate() []byte { return append([]byte(nil), gotestTemplate...) }

// pageTemplate is the page template of one harness kind: the file under the ledger root
// and its built-in copy.
type pageTemplate struct {
	file    string
	builtin func() []byte
}

// pageTemplates are the page templates by harness kind (lanekind's names). A kind without
// one has no template to scaffold from.
func pageTemplates() map[string]pageTemplate {
	return map[string]pageTemplate{
		lanekind.Exec:   {TemplateFile, DefaultTemplate},
		lanekind.Gotest: {GotestTemplateFile, GotestTemplate},
	}
}

// Templates names the page templates NewPage offers, by harness kind, in lanekind's order.
func Templates() []string {
	ts := pageTemplates()
	var names []string
	for _, n := range lanekind.Names() {
		if _, ok := ts[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// NewPage scaffolds the page of experiment id under root/experiments from the ledger's
// template for the harness kind (exec: TemplateFile, gotest: GotestTemplateFile; the
// built-in one when the ledger has none), with its id, title and date filled in; every
// other placeholder is left for the author, and flipbench check fails until they are
// replaced. A number that another page already has is refused, naming that page. It
// returns the new page's path.
func NewPage(root string, id int, title, kind string, date time.Time) (string, error) {
	if id <= 0 {
		return "", fmt.Errorf("experiment number %d: must be positive", id)
	}
	title = strings.TrimSpace(title)
	if title == "" || strings.ContainsAny(title, "\r\n") {
		return "", errors.New("title: want one line of text")
	}
	pages, err := Pages(root)
	if err != nil {
		return "", err
	}
	for _, p := range pages {
		if n, _ := PageID(p); n == id {
			return "", fmt.Errorf("experiment %d is taken by %s; the next free number is %d", id, p, nextFree(pages))
		}
	}
	if kind == "" {
		kind = lanekind.Exec
	}
	t, ok := pageTemplates()[kind]
	if !ok {
		return "", fmt.Errorf("template %q: want one of %s", kind, strings.Join(Templates(), ", "))
	}
	file, builtin := t.file, t.builtin()
	tmpl, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if errors.Is(err, os.ErrNotExist) {
		tmpl, err = builtin, nil
	}
	if err != nil {
		return "", err
	}
	page, err := fillTemplate(tmpl, id, title, date)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	dir := filepath.Join(root, ExperimentsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%03d-%s.md", id, Slug(title)))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(page); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// nextFree returns the smallest number above every page's number.
func nextFree(pages []string) int {
	next := 1
	for _, p := range pages {
		n, _ := PageID(p)
		next = max(next, n+1)
	}
	return next
}

// fillTemplate puts the id, title and date into a template: <NNN> becomes the id,
// <YYYY-MM-DD> the date, and the front matter's title line the title.
func fillTemplate(tmpl []byte, id int, title string, date time.Time) ([]byte, error) {
	s := string(tmpl)
	s = strings.ReplaceAll(s, "<NNN>", strconv.Itoa(id))
	s = strings.ReplaceAll(s, "<YYYY-MM-DD>", date.Format(time.DateOnly))
	quoted, err := yaml.Marshal(title)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`(?m)^title:.*$`)
	loc := re.FindStringIndex(s)
	if loc == nil {
		return nil, errors.New("no title: line in the front matter")
	}
	s = s[:loc[0]] + "title: " + strings.TrimSpace(string(quoted)) + s[loc[1]:]
	return []byte(s), nil
}

// Slug turns a title into the name part of a page's file name: lower-case words joined
// by "-", at most about 48 characters.
func Slug(title string) string {
	words := strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var b strings.Builder
	for _, w := range words {
		if b.Len() > 0 && b.Len()+1+len(w) > 48 {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(w[:min(len(w), 48)])
	}
	if b.Len() == 0 {
		return "experiment"
	}
	return b.String()
}
