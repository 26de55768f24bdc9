package codeshape

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// architectureDoc is the document whose layer table the layer test reads.
const architectureDoc = "docs/architecture.md"

// testSupport is the row of the layer table for packages only tests import: they may
// import any layer, and no production package may import them.
const testSupport = "test support"

// layers is the layer table of docs/architecture.md: the folders of each layer, top
// (index 0) to bottom, and the folders of test support.
type layers struct {
	names   []string       // layer names, top first
	folder  map[string]int // a folder (module-relative path) to its layer's index
	support []string       // folders only tests import
}

// readLayers parses the table between the markers `<!-- layers: begin -->` and
// `<!-- layers: end -->`: one row per layer, top first, its first cell "N. name", its
// second the layer's folders in backquotes; a row whose first cell is "test support"
// names the folders only tests import.
func readLayers(doc []byte) (*layers, error) {
	begin, end := []byte("<!-- layers: begin -->"), []byte("<!-- layers: end -->")
	i, j := bytes.Index(doc, begin), bytes.Index(doc, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("%s: no layer table between %s and %s", architectureDoc, begin, end)
	}
	l := &layers{folder: map[string]int{}}
	numbered := regexp.MustCompile(`^(\d+)\. (.+)$`)
	quoted := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(bytes.NewReader(doc[i:j]))
	for sc.Scan() {
		cells := strings.Split(strings.Trim(strings.TrimSpace(sc.Text()), "|"), "|")
		if len(cells) < 2 {
			continue
		}
		name := strings.TrimSpace(cells[0])
		var folders []string
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			folders = append(folders, m[1])
		}
		switch m := numbered.FindStringSubmatch(name); {
		case name == testSupport:
			l.support = append(l.support, folders...)
		case m != nil:
			if m[1] != fmt.Sprint(len(l.names)+1) {
				return nil, fmt.Errorf("%s: layer %q is numbered %s, want %d", architectureDoc, m[2], m[1], len(l.names)+1)
			}
			for _, f := range folders {
				if _, dup := l.folder[f]; dup {
					return nil, fmt.Errorf("%s: folder %s is in two layers", architectureDoc, f)
				}
				l.folder[f] = len(l.names)
			}
			l.names = append(l.names, m[2])
		}
	}
	if len(l.names) < 7 {
		return nil, fmt.Errorf("%s: the layer table names %d layers, want at least 7", architectureDoc, len(l.names))
	}
	return l, nil
}

// of returns the layer index of a module-relative package path (by its longest listed
// folder), whether it is test support, and whether any row lists it.
func (l *layers) of(pkg string) (layer int, support, ok bool) {
	for _, s := range l.support {
		if pkg == s || strings.HasPrefix(pkg, s+"/") {
			return 0, true, true
		}
	}
	best := -1
	for f, i := range l.folder {
		if (pkg == f || strings.HasPrefix(pkg, f+"/")) && len(f) > best {
			best, layer = len(f), i
		}
	}
	return layer, false, best >= 0
}

// folderOf is the folder a package counts in when folders must not import each other
// both ways: the first two elements of its path (steps/compare, internal/human,
// cmd/flipbench), or the first for a package at the top (harness, report).
func folderOf(pkg string) string {
	parts := strings.SplitN(pkg, "/", 3)
	if len(parts) == 1 {
		return parts[0]
	}
	return parts[0] + "/" + parts[1]
}

// imports lists the module's packages and their imports of other packages of the module
// (production code only: tests may import upward), module-relative ("" is the root).
func imports(root string) (map[string][]string, error) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		from := strings.TrimPrefix(f[0], prefix)
		graph[from] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, prefix) {
				graph[from] = append(graph[from], strings.TrimPrefix(imp, prefix))
			}
		}
	}
	return graph, nil
}

// layerProblems lists every import that runs up a layer, every production import of test
// support, every package no layer lists, and every pair of folders importing each other
// (directly or through other folders), one line each, in a stable order.
func layerProblems(l *layers, graph map[string][]string) []string {
	var bad []string
	folders := map[string]map[string]string{} // folder -> imported folder -> an example import
	for from, tos := range graph {
		fl, fsup, ok := l.of(from)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer of %s; add its folder to one", from, architectureDoc))
			continue
		}
		for _, to := range tos {
			tl, tsup, ok := l.of(to)
			switch {
			case !ok || fsup:
			case tsup:
				bad = append(bad, fmt.Sprintf("%s imports %s, which only tests may import", from, to))
			case tl < fl:
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s), a layer above it", from, l.names[fl], to, l.names[tl]))
			}
			if a, b := folderOf(from), folderOf(to); a != b && !fsup {
				if folders[a] == nil {
					folders[a] = map[string]string{}
				}
				folders[a][b] = from + " imports " + to
			}
		}
	}
	bad = append(bad, folderCycles(folders)...)
	slices.Sort(bad)
	return bad
}

// folderCycles returns one line per cycle among folders (a folder that reaches itself
// through the imports of others), naming the imports that close it.
func folderCycles(edges map[string]map[string]string) []string {
	var cycles []string
	seen := map[string]bool{}
	names := make([]string, 0, len(edges))
	for f := range edges {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, start := range names {
		// A breadth-first search from start's imports back to start finds the shortest
		// cycle through it.
		prev := map[string]string{}
		queue := []string{}
		for _, to := range sortedKeys(edges[start]) {
			prev[to] = start
			queue = append(queue, to)
		}
		for len(queue) > 0 && prev[start] == "" {
			cur := queue[0]
			queue = queue[1:]
			for _, to := range sortedKeys(edges[cur]) {
				if _, ok := prev[to]; !ok {
					prev[to] = cur
					queue = append(queue, to)
				}
			}
		}
		if prev[start] == "" {
			continue
		}
		path := []string{start}
		for f := prev[start]; f != start; f = prev[f] {
			path = append(path, f)
		}
		slices.Reverse(path[1:])
		key := slices.Clone(path)
		slices.Sort(key)
		if seen[strings.Join(key, " ")] {
			continue
		}
		seen[strings.Join(key, " ")] = true
		var why []string
		for k, f := range path {
			why = append(why, edges[f][path[(k+1)%len(path)]])
		}
		cycles = append(cycles, fmt.Sprintf("folders import each other: %s -> %s (%s)", strings.Join(path, " -> "), start, strings.Join(why, "; ")))
	}
	return cycles
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestLayers fails on any import that runs up a layer of docs/architecture.md's table,
// on folders that import each other, on a production import of test support and on a
// package in no layer: the layers the doc names are the layers the code has.
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, architectureDoc))
	if err != nil {
		t.Fatal(err)
	}
	l, err := readLayers(doc)
	if err != nil {
		t.Fatal(err)
	}
	graph, err := imports(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) < 40 {
		t.Fatalf("go list found %d packages; the listing missed the tree", len(graph))
	}
	for _, p := range layerProblems(l, graph) {
		t.Error(p)
	}
}

// TestLayerProblemsFound checks the checker on a small made-up module: an upward import,
// a cycle of folders within one layer, a production import of test support and a
// package in no layer are each found; legal imports are not.
func TestLayerProblemsFound(t *testing.T) {
	doc := []byte("<!-- layers: begin -->\n| layer | folders |\n|---|---|\n" +
		"| 1. program | `cmd` |\n| 2. verbs | `verbs` |\n| 3. steps | `steps`, `harness` |\n" +
		"| 4. renderers | `report` |\n| 5. analyses | `analysis` |\n| 6. model | `model` |\n" +
		"| 7. helpers | `internal` |\n| test support | `internal/testkit` |\n<!-- layers: end -->\n")
	l, err := readLayers(doc)
	if err != nil {
		t.Fatal(err)
	}
	graph := map[string][]string{
		"cmd/tool":           {"verbs/run", "internal/h"},
		"verbs/run":          {"steps/a", "harness"},
		"steps/a":            {"harness", "internal/h"},
		"harness":            {"steps/b"},
		"steps/b":            {"steps/a", "verbs/run"},
		"model/spec":         {"internal/testkit/x"},
		"internal/testkit/x": {"cmd/tool"},
		"stray":              nil,
	}
	got := layerProblems(l, graph)
	want := []string{
		"folders import each other: harness -> steps/b -> steps/a -> harness (harness imports steps/b; steps/b imports steps/a; steps/a imports harness)",
		"folders import each other: verbs/run -> harness -> steps/b -> verbs/run (verbs/run imports harness; harness imports steps/b; steps/b imports verbs/run)",
		"model/spec imports internal/testkit/x, which only tests may import",
		"steps/b (steps) imports verbs/run (verbs), a layer above it",
		"stray: in no layer of docs/architecture.md; add its folder to one",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
