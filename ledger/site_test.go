package ledger

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// siteLedger returns a sound copy of the fixture ledger whose page also holds raw HTML
// that must not reach the site.
func siteLedger(t *testing.T) string {
	t.Helper()
	root := copyLedger(t)
	edit(t, root, fixturePage, func(s string) string {
		return strings.Replace(s, "## Hypothesis", "<script>alert('x')</script>\n\n## Hypothesis", 1)
	})
	finalizeFixture(t, root)
	if _, err := WriteIndex(root); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestSite(t *testing.T) {
	root := siteLedger(t)
	out := filepath.Join(t.TempDir(), "site")
	res, err := BuildSite(root, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	for _, f := range []string{
		"index.html", "style.css", "experiments/001-fake.html", "method.html",
		fixtureReceipt + ".html", fixtureReceipt + "/index.html", fixtureReceipt + "/plot-candA-alpha.svg",
		fixtureReceipt + "/plot-candB-beta.svg", fixtureReceipt + "/manifest.json", fixtureReceipt + "/raw.jsonl",
	} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("site lacks %s: %v", f, err)
		}
	}
	broken, err := CheckSiteLinks(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("broken link in the site: %s", b)
	}

	page, err := os.ReadFile(filepath.Join(out, "experiments", "001-fake.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, bad := range []string{"<script", "<b>bold</b>", "flipbench:results:begin"} {
		if strings.Contains(html, bad) {
			t.Errorf("raw HTML %q reached the site", bad)
		}
	}
	for _, want := range []string{
		`<link rel="stylesheet" href="../style.css">`,
		`<td class="status status-accepted">accepted (set by the rule)</td>`,
		`<a href="../method.html#pass-pairs">method</a>`,
		`<img src="../` + fixtureReceipt + `/plot-candA-alpha.svg"`,
		`<a href="../` + fixtureReceipt + `.html">`,
		`<a href="../` + fixtureReceipt + `/index.html">`,
		"<h3 id=\"canda-vs-base-accepted\">candA vs base: accepted</h3>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(index), `<a href="experiments/001-fake.html">001-fake.md</a>`) {
		t.Errorf("index does not link the page:\n%s", index)
	}
}

// TestSiteScreenshot renders the site's experiment page in headless Chromium and checks
// that the screenshot shows a page, not a blank or an error. It is skipped where Chromium
// is not installed (CI machines start bare); TestSite still parses every page and checks
// its links there.
func TestSiteScreenshot(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	root := siteLedger(t)
	out := filepath.Join(t.TempDir(), "site")
	if _, err := BuildSite(root, out); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	abs, _ := filepath.Abs(filepath.Join(out, "experiments", "001-fake.html"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--screenshot="+shot, "--window-size=1200,1600", "file://"+abs)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
		t.Errorf("screenshot is %v, want 1200x1600", b)
	}
	// A rendered page has text, tables and links: a fair share of non-white pixels, and
	// the link colour somewhere.
	dark, link := 0, false
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl := rgb(img, x, y)
			if r+g+bl < 3*200 {
				dark++
			}
			if bl > 150 && r < 60 && g > 60 && g < 130 {
				link = true
			}
		}
	}
	if total := b.Dx() * b.Dy() / 4; dark < total/100 {
		t.Errorf("screenshot looks blank: %d of %d sampled pixels are dark", dark, total)
	}
	if !link {
		t.Error("screenshot shows no link colour: the style sheet was not applied")
	}
	if dir := os.Getenv("FLIPBENCH_SCREENSHOT_DIR"); dir != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(filepath.Join(dir, "site-page.png"), data, 0o644)
	}
}

// rgb returns a pixel's 8-bit colour channels.
func rgb(img image.Image, x, y int) (int, int, int) {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}
