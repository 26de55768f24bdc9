package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// Each experiment is linked from the first column of its row.
	if !regexp.MustCompile(`<tr>\s*<td[^>]*><a href="experiments/001-fake.html">001</a></td>`).Match(index) {
		t.Errorf("the index's first column does not link the page:\n%s", index)
	}
}

// chromium returns Debian's headless browser, or fails the test: the site's layout is
// checked in it wherever the tests run (make chromium installs it; make test does that
// first), never skipped.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: run make chromium (apt-get update && apt-get install -y chromium), which make test runs first")
	return ""
}

// runChromium runs headless Chromium on a page of the site at 1400x2000 with extra
// arguments and returns its standard output.
func runChromium(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--window-size=1400,2000"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(argv, "file://"+abs)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", page, err, stderr.Bytes())
	}
	return out
}

// TestSiteScreenshot renders the site's experiment page in headless Chromium and checks
// that the screenshot shows a page, not a blank or an error.
func TestSiteScreenshot(t *testing.T) {
	bin := chromium(t)
	root := siteLedger(t)
	out := filepath.Join(t.TempDir(), "site")
	if _, err := BuildSite(root, out); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	runChromium(t, bin, filepath.Join(out, "experiments", "001-fake.html"), "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1400x2000", b)
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

// layoutScript measures a page as Chromium lays it out at 1400 px and writes what is
// wrong into the DOM, for --dump-dom to carry out: a page wider than the window, a table
// wider than the text column or scrolling inside itself, an empty header row, a plot that
// does not load. It runs once the page has loaded, its plots included.
const layoutScript = `<script>
window.addEventListener("load", function () {
  var bad = [];
  var root = document.documentElement, main = document.querySelector("main").getBoundingClientRect();
  if (root.scrollWidth > root.clientWidth) bad.push("the page is " + root.scrollWidth + " px wide in a " + root.clientWidth + " px window");
  if (main.width < root.clientWidth - 60) bad.push("the text column is " + Math.round(main.width) + " px in a " + root.clientWidth + " px window: the page does not use the window's width");
  var tables = document.querySelectorAll("table");
  tables.forEach(function (t, i) {
    var r = t.getBoundingClientRect(), head = t.querySelector("th") ? t.querySelector("th").textContent : "";
    if (r.right > main.right + 1 || r.left < main.left - 1) bad.push("table " + i + " (" + head + ") is " + Math.round(r.width) + " px wide, past the " + Math.round(main.width) + " px text column");
    if (t.scrollWidth > t.clientWidth + 1) bad.push("table " + i + " (" + head + ") scrolls: " + t.scrollWidth + " px in " + t.clientWidth);
  });
  document.querySelectorAll("thead tr").forEach(function (tr, i) {
    if (tr.textContent.trim() === "") bad.push("header row " + i + " is empty");
  });
  document.querySelectorAll("img").forEach(function (img) {
    if (!img.complete || img.naturalWidth === 0) bad.push("image " + img.getAttribute("src") + " does not load");
  });
  var out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({window: root.clientWidth, tables: tables.length, problems: bad});
  document.body.appendChild(out);
});
</script>`

// layoutResult is what layoutScript finds.
type layoutResult struct {
	Window   int      `json:"window"`
	Tables   int      `json:"tables"`
	Problems []string `json:"problems"`
}

// TestSiteLayout lays out the site's index, an experiment page, a receipt page and the
// receipt as one page (ReceiptHTML) in headless Chromium at 1400 px and checks that no table is wider than the page, none
// scrolls, no header row is empty and every plot loads (layoutScript, run in a copy of
// each page: the site itself carries no script).
func TestSiteLayout(t *testing.T) {
	bin := chromium(t)
	root := siteLedger(t)
	out := filepath.Join(t.TempDir(), "site")
	if _, err := BuildSite(root, out); err != nil {
		t.Fatal(err)
	}
	// And the receipt as one HTML page (ReceiptHTML), its plots inside it.
	single, err := ReceiptHTML(filepath.Join(root, filepath.FromSlash(fixtureReceipt)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "single.html"), single, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"index.html", "experiments/001-fake.html", fixtureReceipt + ".html", "single.html"} {
		t.Run(page, func(t *testing.T) {
			path := filepath.Join(out, filepath.FromSlash(page))
			html, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			check := strings.TrimSuffix(path, ".html") + ".layout.html"
			if err := os.WriteFile(check, bytes.Replace(html, []byte("</body>"), []byte(layoutScript+"</body>"), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := runChromium(t, bin, check, "--dump-dom", "--virtual-time-budget=5000")
			m := regexp.MustCompile(`(?s)<pre id="layout-check">(.*?)</pre>`).FindSubmatch(dom)
			if m == nil {
				t.Fatalf("no layout result in the dumped page:\n%.2000s", dom)
			}
			var res layoutResult
			if err := json.Unmarshal([]byte(stdhtml.UnescapeString(string(m[1]))), &res); err != nil {
				t.Fatalf("%v: %s", err, m[1])
			}
			// 1400 px less a scroll bar, if the page has one.
			if res.Window < 1360 || res.Window > 1400 || res.Tables == 0 {
				t.Errorf("laid out at %d px with %d tables; want 1400 px (less a scroll bar) and some tables", res.Window, res.Tables)
			}
			for _, p := range res.Problems {
				t.Error(p)
			}
		})
	}
}

// rgb returns a pixel's 8-bit colour channels.
func rgb(img image.Image, x, y int) (int, int, int) {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}

// CheckSiteLinks parses every HTML file of a built site and returns the local links
// (href and src) that point to no file of the site, as "file: link".
func CheckSiteLinks(out string) ([]string, error) {
	var broken []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		links, err := htmlLinks(f)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, l := range links {
			target, ok := localTarget(l)
			if !ok {
				continue
			}
			if unescaped, err := url.PathUnescape(target); err == nil {
				target = unescaped
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), filepath.FromSlash(target))); err != nil {
				rel, _ := filepath.Rel(out, p)
				broken = append(broken, filepath.ToSlash(rel)+": "+l)
			}
		}
		return nil
	})
	return broken, err
}

// htmlLinks returns the href and src attributes of the HTML document in r. It parses
// leniently (HTML is not XML): unknown entities and unclosed elements are accepted.
func htmlLinks(r io.Reader) ([]string, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "href" || a.Name.Local == "src" {
					out = append(out, a.Value)
				}
			}
		}
	}
}
