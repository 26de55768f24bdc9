package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReceiptHTML renders the fixture receipt as one page: the style sheet and every plot
// inside it, the page's links as it writes them, raw HTML left out.
func TestReceiptHTML(t *testing.T) {
	root := copyLedger(t)
	finalizeFixture(t, root)
	dir := filepath.Join(root, filepath.FromSlash(fixtureReceipt))
	edit(t, root, fixtureReceipt+".md", func(s string) string {
		return strings.Replace(s, "\n## ", "\n<script>alert('x')</script>\n\n## ", 1)
	})
	out, err := ReceiptHTML(dir)
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	if len(svgs) == 0 {
		t.Fatal("the fixture receipt has no plots")
	}
	if n := strings.Count(html, `src="data:image/svg&#43;xml;base64,`) + strings.Count(html, `src="data:image/svg+xml;base64,`); n != len(svgs) {
		t.Errorf("%d plots inlined, want %d (every .svg of the folder once)", n, len(svgs))
	}
	for _, bad := range []string{"<script", `<link rel="stylesheet"`, "#flipbench-plot-", `src=""`} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	name := filepath.Base(fixtureReceipt)
	for _, want := range []string{"<style>", "--accepted:", `href="` + name + `/"`, "<h1", "flipbench receipt " + name} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	// A folder without a page is not a receipt.
	if err := os.Remove(dir + ".md"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReceiptHTML(dir); err == nil || !strings.Contains(err.Error(), "not a receipt (no page") {
		t.Errorf("a folder without its page: err %v, want not a receipt", err)
	}
}
