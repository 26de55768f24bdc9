package cli

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/steps/gate"
	"github.com/flipbench/flipbench/verbs/bisect"
)

// TestJSONDocumented checks that docs/json.md names every field of every machine-readable
// output: plan.json, raw.jsonl, looks.jsonl, analysis.json (and drift --json), gate
// --json and profiles.json. A field added to one of their types without a line in the reference fails here.
func TestJSONDocumented(t *testing.T) {
	data, err := os.ReadFile("../../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for name, v := range map[string]any{
		"plan.json":      receipt.Plan{},
		"raw.jsonl":      receipt.Record{},
		"looks.jsonl":    receipt.Look{},
		"analysis.json":  driftcheck.Report{},
		"gate --json":    gate.Result{},
		"compare --json": compareJSON{},
		"profiles.json":  profdiff.Report{},
	} {
		for _, field := range jsonFields(reflect.TypeOf(v), map[reflect.Type]bool{}) {
			if !regexp.MustCompile("[`.]" + regexp.QuoteMeta(field) + "[`.\\[]").MatchString(doc) {
				t.Errorf("docs/json.md does not name field %s of %s", field, name)
			}
		}
	}
	data, err = os.ReadFile("../../../docs/bisect.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range jsonFields(reflect.TypeOf(bisect.Log{}), map[reflect.Type]bool{}) {
		if !regexp.MustCompile("[`.]" + regexp.QuoteMeta(field) + "[`.\\[]").MatchString(string(data)) {
			t.Errorf("docs/bisect.md does not name field %s of bisect.json", field)
		}
	}
}

// jsonFields returns the JSON names of a struct type's fields and of the structs inside
// it.
func jsonFields(t reflect.Type, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() == "time" {
		return nil
	}
	seen[t] = true
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name != "" {
			out = append(out, name)
		}
		out = append(out, jsonFields(f.Type, seen)...)
	}
	return out
}

// TestJSONSchemaVersions checks that docs/json.md states each file's current
// schema_version, in its table of files and in its section's schema_version row.
func TestJSONSchemaVersions(t *testing.T) {
	data, err := os.ReadFile("../../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, c := range []struct {
		name, constant string
		version        int
		section        string
	}{
		{"plan.json", "receipt.PlanSchema", receipt.PlanSchema, "## plan.json"},
		{"raw.jsonl", "receipt.RecordSchema", receipt.RecordSchema, "## raw.jsonl"},
		{"looks.jsonl", "receipt.LookSchema", receipt.LookSchema, "## looks.jsonl"},
		{"analysis.json", "driftcheck.SchemaVersion", driftcheck.SchemaVersion, "## analysis.json"},
		{"profiles.json", "profdiff.SchemaVersion", profdiff.SchemaVersion, "## profiles.json"},
		{"gate --json", "gate.SchemaVersion", gate.SchemaVersion, "## flipbench gate --json"},
		{"compare --json", "compare.SchemaVersion", compare.SchemaVersion, "## flipbench compare --json"},
	} {
		row := regexp.MustCompile(`(?m)^\| .*\| (\d+) \(` + "`" + regexp.QuoteMeta(c.constant) + "`")
		if m := row.FindStringSubmatch(doc); m == nil || m[1] != strconv.Itoa(c.version) {
			t.Errorf("docs/json.md's table of files does not give %s as %d (%s)", c.name, c.version, c.constant)
		}
		i := strings.Index(doc, c.section)
		if i < 0 {
			t.Errorf("docs/json.md has no section %q", c.section)
			continue
		}
		m := regexp.MustCompile("(?m)^\\| `schema_version` \\| int \\| (\\d+) \\|").FindStringSubmatch(doc[i:])
		if m == nil || m[1] != strconv.Itoa(c.version) {
			t.Errorf("docs/json.md's section %q does not give schema_version %d", c.section, c.version)
		}
	}
}
