package ledger

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/model/receipt"
)

// receiptTemplate is the HTML frame of one receipt (ReceiptHTML).
//
//go:embed receipt.html
var receiptTemplate string

// receiptFrame is what the receipt frame shows.
type receiptFrame struct {
	Title, Name, Page string
	CSS               template.CSS
	Body              template.HTML
	Plots             []receiptPlot
}

// receiptPlot is one plot of a receipt, inlined as a data URL.
type receiptPlot struct {
	Name string
	Src  template.URL
}

// ReceiptHTML renders the receipt whose data folder is dir as one HTML document a browser
// opens with nothing beside it: the receipt page (receipt.PagePath) rendered as the site
// renders pages (goldmark, GitHub flavoured; raw HTML left out), the site's style sheet
// inside it, and the receipt's plots (the folder's .svg files) inside it as data URLs:
// where the page shows them, and under "Plots" for those it does not. Links are left as
// the page writes them, relative to the folder that holds it, so the document written
// beside the page reaches the receipt's files.
func ReceiptHTML(dir string) ([]byte, error) {
	dir = filepath.Clean(dir)
	page := receipt.PagePath(dir)
	md, err := os.ReadFile(page)
	if err != nil {
		return nil, fmt.Errorf("%s: not a receipt (no page %s): %w", dir, page, err)
	}
	plots, err := svgPlots(dir)
	if err != nil {
		return nil, err
	}
	// goldmark refuses SVG data URLs (an SVG document can hold script, which an <img>
	// never runs): a plot the page shows gets a placeholder, replaced in the HTML.
	shown := map[string]bool{}
	var inline []string
	image := func(dest string) string {
		name := path.Base(dest)
		if _, ok := plots[name]; ok && path.Dir(dest) == filepath.Base(dir) {
			shown[name] = true
			inline = append(inline, name)
			return fmt.Sprintf("#flipbench-plot-%d", len(inline)-1)
		}
		return dest
	}
	body, err := markdownHTML(md, func(dest string) string { return dest }, image)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", page, err)
	}
	for i, name := range inline {
		body = template.HTML(strings.ReplaceAll(string(body), fmt.Sprintf(`src="#flipbench-plot-%d"`, i), `src="`+string(plots[name])+`"`))
	}
	f := receiptFrame{Title: firstHeading(md), Name: filepath.Base(dir), Page: filepath.Base(page), CSS: template.CSS(siteCSS), Body: body}
	if f.Title == "" {
		f.Title = f.Name
	}
	for _, name := range slices.Sorted(maps.Keys(plots)) {
		if !shown[name] {
			f.Plots = append(f.Plots, receiptPlot{Name: name, Src: plots[name]})
		}
	}
	tmpl, err := template.New("receipt").Parse(receiptTemplate)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// svgPlots reads the .svg files of a receipt folder as data URLs, by file name.
func svgPlots(dir string) (map[string]template.URL, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	plots := map[string]template.URL{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".svg") {
			continue
		}
		svg, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		plots[e.Name()] = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg))
	}
	return plots, nil
}
