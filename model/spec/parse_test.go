package spec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
)

// page is the path every test page is parsed under.
const page = "experiments/275-x.md"

// readTestdata returns a file of testdata.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// edit applies replacements (old, new, old, new, ...) to s; each old must occur once.
func edit(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("edit: %q occurs %d times", pairs[i], n)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// The base page of TestParseErrors is testdata/275-gotest.md, whose lines are:
//
//	 1 ---
//	 2 id: 275
//	 3 title: ...
//	 4 date: 2026-08-19
//	 5 status: planned ...
//	 6 category: moonshot ...
//	 7 directions: [...]
//	 8 archive: archive/exp-275
//	 9 harness: {kind: gotest, package: ./lanes/admission, ref: HEAD}
//	10 arms:
//	11   base:  {ref: HEAD}
//	12   candA: {ref: HEAD, patch: archive/exp-275/candA.patch}
//	13   candB: {ref: HEAD, patch: archive/exp-275/candB.patch}
//	14 protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}
//	15 profiles: {quick: {samples: 15, warmup: 3, passes: 4}}
//	16 drift: {effect-floor-pct: 3, clean-cv-pct: 8, cv-asymmetry: 4}
//	17 lanes:
//	18   - {name: PointUnderLoad, role: primary, expect: faster}
//	19   - {name: Bulk4Mixed, role: guard}
//	20   - {name: Bulk4Cold, role: control}
//	21 incidence:
//	22   suite: {kind: gotest, package: ./lanes/release}
//	23   total: dispatches
//	24   eligible: cheap-parked-behind-costly
//	25   min-share: 0.001
//	26 ---
func TestParseErrors(t *testing.T) {
	base := readTestdata(t, "275-gotest.md")
	const (
		candA = "  candA: {ref: HEAD, patch: archive/exp-275/candA.patch}\n"
		candB = "  candB: {ref: HEAD, patch: archive/exp-275/candB.patch}\n"
		proto = "protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275}"
		hness = "harness: {kind: gotest, package: ./lanes/admission, ref: HEAD}"
		lane1 = "{name: Bulk4Mixed, role: guard}"
		front = "---\nid: 275\n"
	)
	tests := []struct {
		name  string
		page  string   // the whole page; when empty, base with edits
		edits []string // old, new pairs applied to base
		want  string
	}{
		// The page and its YAML.
		{name: "no front matter", page: "# exp 275\n\nprose\n",
			want: page + ":1: missing front matter (the page must start with a --- line)"},
		{name: "front matter not closed", page: "---\nid: 275\ntitle: x\n",
			want: page + ":1: front matter is not closed (no --- line after line 1)"},
		{name: "empty front matter", page: "---\n---\nprose\n",
			want: page + ":2: front matter is empty"},
		{name: "front matter is a list", page: "---\n- id: 275\n---\n",
			want: page + ":2: front matter must be a mapping of fields, got a list"},
		{name: "front matter is a scalar", page: "---\njust words\n---\n",
			want: page + `:2: front matter must be a mapping of fields, got "just words"`},
		{name: "yaml syntax: unclosed flow mapping", edits: []string{"candA.patch}", "candA.patch"},
			want: page + ":12: invalid YAML: did not find expected ',' or '}'"},
		{name: "yaml syntax: tab indentation", edits: []string{"  candB: {", "\tcandB: {"},
			want: page + ":13: invalid YAML: found character that cannot start any token"},
		{name: "yaml syntax: bad indentation (reported where the block starts)", edits: []string{"  total: dispatches", "   total: dispatches"},
			want: page + ":22: invalid YAML: did not find expected key"},
		{name: "yaml syntax: colon in a plain value", edits: []string{"  total: dispatches", "  total: dispatches: all"},
			want: page + ":23: invalid YAML: mapping values are not allowed in this context"},
		{name: "yaml syntax: undefined alias", edits: []string{"  total: dispatches", "  total: *nope"},
			want: page + ":23: invalid YAML: alias *nope refers to no anchor &nope defined before it"},

		// Unknown fields, duplicates, types.
		{name: "unknown top-level field with suggestion", edits: []string{"archive:", "archiv:"},
			want: page + ":8: archiv: unknown field (did you mean archive?)"},
		{name: "unknown top-level field without suggestion", edits: []string{"archive: archive/exp-275", "owner: me"},
			want: page + ":8: owner: unknown field (known: id, title, date, status, status-by, category, " +
				"directions, archive, harness, arms, protocol, profiles, drift, lanes, shape, incidence, receipts, reanalysed)"},
		{name: "unknown nested field", edits: []string{"samples: 41", "samplez: 41"},
			want: page + ":14: protocol.samplez: unknown field (did you mean samples?)"},
		{name: "unknown arm field (transposed letters)", edits: []string{"candB: {ref: HEAD, patch:", "candB: {ref: HEAD, pacth:"},
			want: page + ":13: arms.candB.pacth: unknown field (did you mean patch?)"},
		{name: "unknown lane field", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, weight: 2}"},
			want: page + ":19: lanes[1].weight: unknown field (known: name, role, expect, floor-pct, unit, better, nonzero, at-most, metric, threshold-pct)"},
		{name: "unknown drift field written with underscores", edits: []string{"clean-cv-pct", "clean_cv_pct"},
			want: page + ":16: drift.clean_cv_pct: unknown field (did you mean clean-cv-pct?)"},
		{name: "field given twice", edits: []string{"date: 2026-08-19\n", "date: 2026-08-19\ndate: 2026-08-20\n"},
			want: page + ":5: date: given twice (first at line 4)"},
		{name: "arm given twice", edits: []string{"  candB:", "  candA:"},
			want: page + ":13: arms.candA: given twice (first at line 12)"},
		{name: "samples: many", edits: []string{"samples: 41", "samples: many"},
			want: page + `:14: protocol.samples: must be an integer, got "many"`},
		{name: "quoted integer", edits: []string{"id: 275", `id: "275"`},
			want: page + `:2: id: must be an integer, got "275"`},
		{name: "float for integer", edits: []string{"warmup: 10", "warmup: 2.5"},
			want: page + `:14: protocol.warmup: must be an integer, got "2.5"`},
		{name: "word for number", edits: []string{"min-share: 0.001", "min-share: lots"},
			want: page + `:25: incidence.min-share: must be a number, got "lots"`},
		{name: "list for mapping", edits: []string{hness, "harness: [gotest]"},
			want: page + ":9: harness: must be a mapping, got a list"},
		{name: "arms as a list", edits: []string{"arms:\n  base:  {ref: HEAD}\n" + candA + candB, "arms: [base, candA]\n"},
			want: page + ":10: arms: must be a mapping of arm name to arm, got a list"},
		{name: "mapping for string", edits: []string{"title: which read gets the next free worker", "title: {a: b}"},
			want: page + ":3: title: must be a string, got a mapping"},
		{name: "scalar for list", edits: []string{"directions: [stream-rerun-dispatch, result-transfer-shape]", "directions: stream-rerun-dispatch"},
			want: page + `:7: directions: must be a list, got "stream-rerun-dispatch"`},
		{name: "empty string", edits: []string{"patch: archive/exp-275/candA.patch", `patch: ""`},
			want: page + ":12: arms.candA.patch: must not be empty"},
		{name: "null value", edits: []string{"archive: archive/exp-275", "archive:"},
			want: page + ":8: archive: must not be empty"},
		{name: "bare number for duration", edits: []string{hness, "harness: {kind: gotest, package: ./lanes/admission, timeout: 30}"},
			want: page + `:9: harness.timeout: must be a duration like 30s or 10m, got "30"`},
		{name: "several decode errors, in line order", edits: []string{"samples: 41", "samples: many", "id: 275", "id: x", "suite:", "suit:"},
			want: page + `:2: id: must be an integer, got "x"` + "\n" +
				page + `:14: protocol.samples: must be an integer, got "many"` + "\n" +
				page + ":22: incidence.suit: unknown field (did you mean suite?)"},

		// Top-level fields.
		{name: "id zero", edits: []string{"id: 275", "id: 0"},
			want: page + ":2: id: must be a positive integer"},
		{name: "id missing", edits: []string{"id: 275\n", ""},
			want: page + ":2: id: is required"},
		{name: "title missing", edits: []string{"title: which read gets the next free worker\n", ""},
			want: page + ":2: title: is required"},
		{name: "date not a date", edits: []string{"date: 2026-08-19", "date: 2026-13-01"},
			want: page + `:4: date: must be a date YYYY-MM-DD; got "2026-13-01"`},
		{name: "date in another format", edits: []string{"date: 2026-08-19", "date: 19.08.2026"},
			want: page + `:4: date: must be a date YYYY-MM-DD; got "19.08.2026"`},
		{name: "status typo", edits: []string{"status: planned ", "status: acepted "},
			want: page + `:5: status: must be one of planned, running, accepted, rejected, inconclusive, superseded; got "acepted" (did you mean accepted?)`},
		{name: "status missing", edits: []string{"status: planned ", "# status: planned "},
			want: page + ":2: status: is required; one of planned, running, accepted, rejected, inconclusive, superseded"},
		{name: "status-by not rule", edits: []string{"category:", "status-by: me\ncategory:"},
			want: page + `:6: status-by: must be empty (set by a person) or rule (set by finalize); got "me"`},
		{name: "reanalysed by a method that does not parse", edits: []string{"category:", "reanalysed: {method: \"schema=13\", why: x}\ncategory:"},
			want: page + `:6: reanalysed.method: method "schema=13": want all six parts (schema, spending, moderation, set-aside, collection-noise-p, family)`},
		{name: "reanalysed without a reason", edits: []string{"category:", "reanalysed: {method: \"schema=13 spending=pocock moderation=empirical-bayes set-aside=hampel-5 collection-noise-p=0.01 family=per-lane\", why: \" \"}\ncategory:"},
			want: page + `:6: reanalysed.why: is required: the reason the page was judged by another method than its receipt's`},
		{name: "category outside the vocabulary", edits: []string{"category: moonshot ", "category: speedup "},
			want: page + `:6: category: must be one of moonshot, incremental, cleanup, measurement, regression-hunt, replication; got "speedup"`},
		{name: "empty direction", edits: []string{"[stream-rerun-dispatch,", `[stream-rerun-dispatch, "",`},
			want: page + ":7: directions[1]: must not be empty"},

		// Harness.
		{name: "harness kind unknown", edits: []string{"kind: gotest, package: ./lanes/admission", "kind: shell, package: ./lanes/admission"},
			want: page + `:9: harness.kind: must be one of exec, gotest; got "shell"`},
		{name: "harness missing", edits: []string{hness + "\n", ""},
			want: page + ":2: harness.kind: is required; one of exec, gotest"},
		{name: "gotest without package", edits: []string{hness, "harness: {kind: gotest, ref: HEAD}"},
			want: page + ":9: harness.package: is required for kind gotest"},
		{name: "gotest with a command", edits: []string{hness, `harness: {kind: gotest, package: ./lanes, command: ["{bin}"]}`},
			want: page + ":9: harness.command: only for kind exec"},
		{name: "gotest benchtime", edits: []string{hness, "harness: {kind: gotest, package: ./lanes, benchtime: \"10\"}"},
			want: page + `:9: harness.benchtime: must be a duration like 100ms or a count like 1000x; got "10"`},
		{name: "exec without command", edits: []string{hness, "harness: {kind: exec}"},
			want: page + ":9: harness.command: is required for kind exec"},
		{name: "exec command without {bin}", edits: []string{hness, `harness: {kind: exec, command: [./lane, "{lane}"]}`},
			want: page + ":9: harness.command: must contain {bin}"},
		{name: "exec command with unknown placeholder", edits: []string{hness, `harness: {kind: exec, command: ["{bin}", "-lane={lanes}"]}`},
			want: page + ":9: harness.command[1]: unknown placeholder {lanes} (known: {bin}, {lane}, {bench}, {samples}, {warmup}, {count}, {arm}, {pass}, {collection})"},
		{name: "exec build without {out}", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], build: [go, build, "{src}"]}`},
			want: page + ":9: harness.build: must contain {out}"},
		{name: "exec with benchtime", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], benchtime: 1x}`},
			want: page + ":9: harness.benchtime: only for kind gotest"},
		{name: "metric outside the vocabulary", edits: []string{hness, "harness: {kind: gotest, package: ./lanes/admission, ref: HEAD, metric: cycles}"},
			want: page + `:9: harness.metric: must be one of wall, instructions, cpu, auto; got "cycles"`},
		{name: "lane metric outside the vocabulary", edits: []string{"{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: guard, metric: instruction}"},
			want: page + `:19: lanes[1].metric: must be one of wall, instructions, cpu, auto; got "instruction" (did you mean instructions?)`},
		{name: "instructions with a duration benchtime", edits: []string{hness, "harness: {kind: gotest, package: ./lanes/admission, ref: HEAD, metric: instructions, benchtime: 100ms}"},
			want: page + `:9: harness.benchtime: must be a count like 100x for lanes that count instructions (metric: instructions), got "100ms": a duration lets b.N depend on how fast the lane runs, and under callgrind it runs some 50 times slower`},
		{name: "instructions on a sub-benchmark", edits: []string{"{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed/x, role: guard, metric: instructions}"},
			want: page + `:19: lanes[1].metric: a sub-benchmark lane cannot count instructions (metric: instructions): its function is a closure callgrind cannot name; make it a top-level benchmark`},
		{name: "instructions with another unit", edits: []string{"{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: guard, metric: instructions, unit: ns/op}"},
			want: page + `:19: lanes[1].unit: a lane that counts instructions has unit instructions/op; got "ns/op"`},
		{name: "instructions better higher", edits: []string{"{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: guard, metric: instructions, better: higher}"},
			want: page + `:19: lanes[1].better: a lane that counts instructions is better lower; got "higher"`},
		{name: "exec instructions without op-start", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], metric: instructions, op-end: main.opEnd}`},
			want: page + ":9: harness.op-start: is required for an exec harness with lanes that count instructions (metric: instructions): the function the lane program calls right before each operation, e.g. main.opStart"},
		{name: "exec instructions without op-end", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], metric: instructions, op-start: main.opStart}`},
			want: page + ":9: harness.op-end: is required for an exec harness with lanes that count instructions (metric: instructions): the function the lane program calls right after each operation, e.g. main.opEnd"},
		{name: "op-start without instruction lanes", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], op-start: main.op}`},
			want: page + ":9: harness.op-start: only for lanes that count instructions (metric: instructions)"},
		{name: "op-end with spaces", edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], metric: instructions, op-start: a, op-end: "main.op x"}`},
			want: page + `:9: harness.op-end: must be a function name without spaces (a callgrind pattern like main.opStart), got "main.op x"`},
		{name: "gotest op-start", edits: []string{hness, "harness: {kind: gotest, package: ./lanes/admission, ref: HEAD, metric: instructions, op-start: main.op}"},
			want: page + ":9: harness.op-start: only for kind exec: a gotest lane counts its benchmark function"},
		{name: "incidence suite metric", edits: []string{"suite: {kind: gotest, package: ./lanes/release}", "suite: {kind: gotest, package: ./lanes/release, metric: instructions}"},
			want: page + ":22: incidence.suite.metric: the incidence suite runs each lane once to read its probe counters; it has no metric"},
		{name: "timeout in two places", edits: []string{"ref: HEAD}\narms", "ref: HEAD, timeout: 1m}\narms", "seed: 275}", "seed: 275, timeout: 2m}"},
			want: page + ":9: harness.timeout: conflicts with protocol.timeout (line 14); set the run timeout in one place"},

		// Arms.
		{name: "no base arm", edits: []string{"  base:  {ref: HEAD}", "  main:  {ref: HEAD}"},
			want: page + ":10: arms: needs an arm named base"},
		{name: "no candidate", edits: []string{candA + candB, ""},
			want: page + ":10: arms: needs at least one candidate besides base"},
		{name: "invalid arm name", edits: []string{"  candB:", "  2cand:"},
			want: page + ":13: arms.2cand: invalid arm name (must match ^[A-Za-z][A-Za-z0-9_-]*$)"},
		{name: "arm with bin and ref", edits: []string{candB, "  candB: {ref: HEAD, bin: ./bin/lane}\n"},
			want: page + ":13: arms.candB: set bin (a prebuilt binary) or ref (a git ref), not both"},
		{name: "arm with neither bin nor ref", edits: []string{candB, "  candB: {env: {GOGC: \"50\"}}\n"},
			want: page + ":13: arms.candB: needs bin (a prebuilt binary) or ref (a git ref)"},
		{name: "git-only fields on a prebuilt arm", edits: []string{candB, "  candB:\n    bin: ./bin/lane\n    patch: x.patch\n    tags: [fast]\n    ldflags: -s\n"},
			want: page + ":15: arms.candB.patch: only for git arms (with ref)\n" +
				page + ":16: arms.candB.tags: only for git arms (with ref)\n" +
				page + ":17: arms.candB.ldflags: only for git arms (with ref)"},
		{name: "bad build tag", edits: []string{candB, "  candB: {ref: HEAD, tags: [\"a b\"]}\n"},
			want: page + `:13: arms.candB.tags[0]: invalid build tag "a b" (must match ^[A-Za-z0-9_.]+$)`},
		{name: "bad env name", edits: []string{candB, "  candB: {ref: HEAD, env: {1X: \"1\"}}\n"},
			want: page + ":13: arms.candB.env.1X: invalid environment variable name (must match ^[A-Za-z_][A-Za-z0-9_]*$)"},
		{name: "tags on a git arm of an exec harness whose build has no {tags}",
			edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], build: [go, build, -o, "{out}", .]}`, candB, "  candB: {ref: HEAD, tags: [fast]}\n"},
			want:  page + ":13: arms.candB.tags: harness.build (line 9) has no {tags} placeholder, so this would never reach the build; add it to harness.build or remove arms.candB.tags"},
		{name: "ldflags on a git arm of an exec harness whose build has no {ldflags}",
			edits: []string{hness, `harness: {kind: exec, command: ["{bin}"], build: [go, build, -tags, "{tags}", -o, "{out}", .]}`, candB, "  candB: {ref: HEAD, tags: [fast], ldflags: -s}\n"},
			want:  page + ":13: arms.candB.ldflags: harness.build (line 9) has no {ldflags} placeholder, so this would never reach the build; add it to harness.build or remove arms.candB.ldflags"},
		{name: "empty patch in a block mapping", edits: []string{candA, "  candA:\n    ref: HEAD\n\n    patch: ''\n"},
			want: page + ":15: arms.candA.patch: must not be empty"},

		// Protocol and profiles.
		{name: "samples zero", edits: []string{"samples: 41", "samples: 0"},
			want: page + ":14: protocol.samples: must be at least 1"},
		{name: "warmup negative", edits: []string{"warmup: 10", "warmup: -1"},
			want: page + ":14: protocol.warmup: must not be negative"},
		{name: "passes odd", edits: []string{"passes: 12", "passes: 11"},
			want: page + ":14: protocol.passes: must be even"},
		{name: "passes zero", edits: []string{"passes: 12", "passes: 0"},
			want: page + ":14: protocol.passes: must be at least 2"},
		{name: "collections zero", edits: []string{"collections: 2", "collections: 0"},
			want: page + ":14: protocol.collections: must be at least 1"},
		{name: "protocol timeout zero", edits: []string{"seed: 275}", "seed: 275, timeout: 0s}"},
			want: page + ":14: protocol.timeout: must be positive"},
		{name: "passes beyond the bound", edits: []string{"passes: 12", "passes: 100000000"},
			want: page + ":14: protocol.passes: must be at most 1000"},
		{name: "collections beyond the bound", edits: []string{"collections: 2", "collections: 2147483648"},
			want: page + ":14: protocol.collections: must be at most 100"},
		{name: "samples that would overflow the count", edits: []string{"samples: 41", "samples: 9000000000000000000"},
			want: page + ":14: protocol.samples: must be at most 100000"},
		{name: "warmup that would overflow the count", edits: []string{"warmup: 10", "warmup: 9000000000000000000"},
			want: page + ":14: protocol.warmup: must be at most 100000"},
		{name: "integer beyond int64", edits: []string{"samples: 41", "samples: 99999999999999999999"},
			want: page + `:14: protocol.samples: must be an integer, got "99999999999999999999"`},
		{name: "protocol timeout beyond the bound", edits: []string{"seed: 275}", "seed: 275, timeout: 100h}"},
			want: page + ":14: protocol.timeout: must be at most 24h0m0s"},
		{name: "drift threshold beyond the bound", edits: []string{"effect-floor-pct: 3,", "effect-floor-pct: 1e300,"},
			want: page + ":16: drift.effect-floor-pct: must be at most 1000"},
		{name: "archive out of the ledger", edits: []string{"archive: archive/exp-275", "archive: ../../x"},
			want: page + `:8: archive: must be a folder inside the ledger, relative to its root (like archive/exp-275); got "../../x"`},
		{name: "archive absolute", edits: []string{"archive: archive/exp-275", "archive: /tmp/x"},
			want: page + `:8: archive: must be a folder inside the ledger, relative to its root (like archive/exp-275); got "/tmp/x"`},
		{name: "number for string", edits: []string{"title: which read gets the next free worker", "title: 123"},
			want: page + `:3: title: must be a string, got the number 123 (quote it if the text is meant: "123")`},
		{name: "number for env value", edits: []string{candB, "  candB: {ref: HEAD, env: {A: 1.10}}\n"},
			want: page + `:13: arms.candB.env.A: must be a string, got the number 1.10 (quote it if the text is meant: "1.10")`},
		{name: "boolean in a list of strings", edits: []string{"directions: [stream-rerun-dispatch, result-transfer-shape]", "directions: [yes, true]"},
			want: page + `:7: directions[1]: must be a string, got the boolean true (quote it if the text is meant: "true")`},
		{name: "protocol on its own lines", edits: []string{proto, "protocol:\n  samples: 41\n  passes: 3"},
			want: page + ":16: protocol.passes: must be even"},
		{name: "profile passes odd", edits: []string{"passes: 4}}", "passes: 3}}"},
			want: page + ":15: profiles.quick.passes: must be even"},
		{name: "profile unknown field", edits: []string{"quick: {samples: 15", "quick: {sample: 15"},
			want: page + ":15: profiles.quick.sample: unknown field (did you mean samples?)"},
		{name: "profile bad name", edits: []string{"{quick: {", "{quick run: {"},
			want: page + ":15: profiles.quick run: invalid profile name (must match ^[A-Za-z][A-Za-z0-9_-]*$)"},
		{name: "profile sets nothing", edits: []string{"{quick: {samples: 15, warmup: 3, passes: 4}}", "{quick: {}}"},
			want: page + ":15: profiles.quick: sets nothing (give samples, warmup, passes, collections, seed, timeout or sequential)"},

		// Drift.
		{name: "drift floor zero", edits: []string{"effect-floor-pct: 3", "effect-floor-pct: 0"},
			want: page + ":16: drift.effect-floor-pct: must be positive"},
		{name: "drift asymmetry negative", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: -4"},
			want: page + ":16: drift.cv-asymmetry: must be positive"},
		{name: "sequential with passes", edits: []string{proto, "protocol: {samples: 41, warmup: 10, passes: 12, collections: 2, seed: 275, sequential: {max-pairs: 8}}"},
			want: page + ":14: protocol.passes: a sequential protocol sets its passes from max-pairs (2 x max-pairs); remove passes"},
		{name: "sequential min above max", edits: []string{proto, "protocol: {samples: 41, warmup: 10, collections: 2, seed: 275, sequential: {min-pairs: 9, max-pairs: 8}}"},
			want: page + ":14: protocol.sequential.min-pairs: 9 is above max-pairs 8"},
		{name: "sequential budget zero", edits: []string{proto, "protocol: {samples: 41, warmup: 10, collections: 2, seed: 275, sequential: {budget: 0s}}"},
			want: page + ":14: protocol.sequential.budget: must be positive"},
		{name: "sequential unknown field", edits: []string{proto, "protocol: {samples: 41, warmup: 10, collections: 2, seed: 275, sequential: {max-pair: 8}}"},
			want: page + ":14: protocol.sequential.max-pair: unknown field (did you mean max-pairs?)"},
		{name: "incidence arm unknown", edits: []string{"  min-share: 0.001\n", "  min-share: 0.001\n  arms: [candA, candC]\n"},
			want: page + ":26: incidence.arms[1]: unknown candidate arm \"candC\" (did you mean candA?)"},
		{name: "drift asymmetry below one", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: 0.5"},
			want: page + ":16: drift.cv-asymmetry: must be a ratio >= 1, got 0.5"},
		{name: "drift alpha of one", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: 4, alpha: 1"},
			want: page + ":16: drift.alpha: must be a probability between 0 and 1, got 1"},
		{name: "drift power zero", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: 4, power: 0"},
			want: page + ":16: drift.power: must be a probability between 0 and 1, got 0"},
		{name: "drift spending unknown", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: 4, spending: bonferroni"},
			want: page + ":16: drift.spending: unknown spending function \"bonferroni\" (want one of [obrien-fleming pocock power hsd])"},
		{name: "drift calibration-df negative", edits: []string{"cv-asymmetry: 4", "cv-asymmetry: 4, calibration-df: -2"},
			want: page + ":16: drift.calibration-df: must be between 0 and 100 degrees of freedom, got -2"},
		{name: "per-arm expect names an unknown arm", edits: []string{"expect: faster}", "expect: {candA: neutral, candC: faster}}"},
			want: page + ":18: lanes[0].expect.candC: unknown candidate arm \"candC\" (did you mean candA?)\n" +
				page + ":18: lanes[0].expect: names no expectation for candidate arm candB; a per-arm expectation lists every candidate"},
		{name: "per-arm expect with a bad direction", edits: []string{"expect: faster}", "expect: {candA: neutral, candB: quicker}}"},
			want: page + ":18: lanes[0].expect.candB: must be one of faster, slower, neutral; got \"quicker\""},
		{name: "per-arm expect on a guard", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, expect: {candA: faster, candB: faster}}"},
			want: page + ":19: lanes[1].expect: only for primary and secondary lanes"},
		{name: "lane floor zero", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, floor-pct: 0}"},
			want: page + ":19: lanes[1].floor-pct: must be a positive percentage up to 1000, got 0"},

		// Lanes.
		{name: "no lanes", edits: []string{"lanes:\n", "lanes: []\n", "  - {name: PointUnderLoad, role: primary, expect: faster}\n  - " + lane1 + "\n  - {name: Bulk4Cold, role: control}\n", ""},
			want: page + ":17: lanes: needs at least one lane"},
		{name: "lane without name", edits: []string{lane1, "{role: guard}"},
			want: page + ":19: lanes[1].name: is required"},
		{name: "invalid lane name", edits: []string{lane1, "{name: Bulk 4, role: guard}"},
			want: page + `:19: lanes[1].name: invalid lane name "Bulk 4" (must match ^[A-Za-z0-9][A-Za-z0-9_./=:+-]*$)`},
		{name: "duplicate lane", edits: []string{lane1, "{name: PointUnderLoad, role: guard}"},
			want: page + ":19: lanes[1].name: duplicate lane PointUnderLoad (first at line 18)"},
		{name: "lane role typo", edits: []string{lane1, "{name: Bulk4Mixed, role: gaurd}"},
			want: page + `:19: lanes[1].role: must be one of primary, secondary, guard, control; got "gaurd" (did you mean guard?)`},
		{name: "lane role missing", edits: []string{lane1, "{name: Bulk4Mixed}"},
			want: page + ":19: lanes[1].role: is required; one of primary, secondary, guard, control"},
		{name: "no primary lane", edits: []string{"role: primary, expect: faster", "role: secondary, expect: faster"},
			want: page + ":17: lanes: needs at least one primary lane"},
		{name: "expect on a guard lane", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, expect: neutral}"},
			want: page + ":19: lanes[1].expect: only for primary and secondary lanes"},
		{name: "expect outside the vocabulary", edits: []string{"expect: faster", "expect: quicker"},
			want: page + `:18: lanes[0].expect: must be one of faster, slower, neutral; got "quicker"`},
		{name: "better outside the vocabulary", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, better: up}"},
			want: page + `:19: lanes[1].better: must be one of lower, higher; got "up"`},
		{name: "lane in a block mapping", edits: []string{"  - " + lane1, "  - name: Bulk4Mixed\n    role: guard\n    better: highr"},
			want: page + `:21: lanes[1].better: must be one of lower, higher; got "highr" (did you mean higher?)`},
		{name: "nonzero with a blank in a unit", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, nonzero: [reserved/op, stale ms]}"},
			want: page + `:19: lanes[1].nonzero[1]: invalid metric unit "stale ms" (must match ^[^\s]+$, as a benchmark line prints it: stale-ms/op)`},
		{name: "nonzero twice", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, nonzero: [reserved/op, reserved/op]}"},
			want: page + `:19: lanes[1].nonzero[1]: reserved/op listed twice`},
		{name: "nonzero written empty", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, nonzero: []}"},
			want: page + `:19: lanes[1].nonzero: is empty; remove the line or list a metric`},
		{name: "nonzero not a list", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, nonzero: reserved/op}"},
			want: page + `:19: lanes[1].nonzero: must be a list, got "reserved/op"`},
		{name: "nonzero of numbers", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, nonzero: [0]}"},
			want: page + `:19: lanes[1].nonzero[0]: must be a string, got the number 0 (quote it if the text is meant: "0")`},
		{name: "at-most on a primary lane", edits: []string{"{name: PointUnderLoad, role: primary, expect: faster}", "{name: PointUnderLoad, role: primary, expect: faster, at-most: {cold/op: 1}}"},
			want: page + ":18: lanes[0].at-most: only for guard lanes, got a primary lane"},
		{name: "at-most below zero", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, at-most: {cold-calls/op: -1}}"},
			want: page + ":19: lanes[1].at-most.cold-calls/op: must be a bound of at least 0, got -1"},
		{name: "at-most with a blank in a unit", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, at-most: {cold calls: 1}}"},
			want: page + `:19: lanes[1].at-most: invalid metric unit "cold calls" (must match ^[^\s]+$, as a benchmark line prints it: cold-calls/op)`},
		{name: "at-most written empty", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, at-most: {}}"},
			want: page + ":19: lanes[1].at-most: is empty; remove the line or bound a metric"},
		{name: "at-most not a number", edits: []string{lane1, "{name: Bulk4Mixed, role: guard, at-most: {cold-calls/op: few}}"},
			want: page + `:19: lanes[1].at-most.cold-calls/op: must be a number, got "few"`},
		{name: "reference base", edits: []string{"base:  {ref: HEAD}", "base:  {ref: HEAD, reference: true}"},
			want: page + ":11: arms.base.reference: the base arm is what every candidate is compared against; only a candidate can be a reference arm"},
		{name: "only reference candidates", edits: []string{"patch: archive/exp-275/candA.patch}", "patch: archive/exp-275/candA.patch, reference: true}",
			"patch: archive/exp-275/candB.patch}", "patch: archive/exp-275/candB.patch, reference: true}"},
			want: page + ":10: arms: needs at least one candidate that is not a reference arm: the rule would decide nothing"},
		{name: "reference not a boolean", edits: []string{"patch: archive/exp-275/candA.patch}", "patch: archive/exp-275/candA.patch, reference: fifo}"},
			want: page + `:12: arms.candA.reference: must be true or false, got "fifo"`},

		// Shape.
		{name: "shape with one lane", edits: []string{"incidence:\n", "shape: {decay: [PointUnderLoad]}\nincidence:\n"},
			want: page + ":21: shape.decay: needs at least 2 lanes"},
		{name: "shape without decay", edits: []string{"incidence:\n", "shape: {}\nincidence:\n"},
			want: page + ":21: shape.decay: needs at least 2 lanes"},
		{name: "shape names an unknown lane", edits: []string{"incidence:\n", "shape: {decay: [PointUnderLoad, Bulk4Mixd]}\nincidence:\n"},
			want: page + `:21: shape.decay[1]: unknown lane "Bulk4Mixd" (did you mean Bulk4Mixed?)`},
		{name: "shape lists a lane twice", edits: []string{"incidence:\n", "shape:\n  decay:\n    - Bulk4Mixed\n    - Bulk4Cold\n    - Bulk4Mixed\nincidence:\n"},
			want: page + ":25: shape.decay[2]: lane Bulk4Mixed listed twice"},

		// Incidence.
		{name: "incidence without total", edits: []string{"  total: dispatches\n", ""},
			want: page + ":21: incidence.total: is required (the counter of all events)"},
		{name: "incidence without eligible", edits: []string{"  eligible: cheap-parked-behind-costly\n", ""},
			want: page + ":21: incidence.eligible: is required (the counter of events the change helps)"},
		{name: "incidence min-share above 1", edits: []string{"min-share: 0.001", "min-share: 1.5"},
			want: page + ":25: incidence.min-share: must be between 0 and 1"},
		{name: "incidence share without of", edits: []string{"min-share: 0.001\n", "min-share: 0.001\n  shares: [{part: cheap}]\n"},
			want: page + ":26: incidence.shares[0].of: is required (the counter it is a share of)"},
		{name: "incidence share of itself", edits: []string{"min-share: 0.001\n", "min-share: 0.001\n  shares: [{part: cheap, of: cheap}]\n"},
			want: page + ":26: incidence.shares[0]: part and of are both cheap: a share of a counter over itself is always 1"},
		{name: "incidence share repeats the gate", edits: []string{"min-share: 0.001\n", "min-share: 0.001\n  shares:\n    - {part: cheap, of: dispatches}\n    - {part: cheap-parked-behind-costly, of: dispatches}\n"},
			want: page + ":28: incidence.shares[1]: cheap-parked-behind-costly/dispatches is shown already (the gate's eligible/total is always shown)"},
		{name: "incidence share with an unknown field", edits: []string{"min-share: 0.001\n", "min-share: 0.001\n  shares: [{part: cheap, over: dispatches}]\n"},
			want: page + ":26: incidence.shares[0].over: unknown field (known: part, of)"},
		{name: "incidence suite without kind", edits: []string{"suite: {kind: gotest, package", "suite: {package"},
			want: page + ":22: incidence.suite.kind: is required; one of exec, gotest"},
		{name: "incidence suite gotest without package", edits: []string{"suite: {kind: gotest, package: ./lanes/release}", "suite: {kind: gotest}"},
			want: page + ":22: incidence.suite.package: is required for kind gotest"},

		// Receipts.
		{name: "receipt with a short hash", edits: []string{"min-share: 0.001\n", "min-share: 0.001\nreceipts:\n  - {path: results/a.md, sha256: abc123}\n"},
			want: page + ":27: receipts[0].sha256: must be 64 lower-case hex digits (a SHA-256)"},
		{name: "receipt without path", edits: []string{"min-share: 0.001\n", "min-share: 0.001\nreceipts:\n  - sha256: " + strings.Repeat("ab", 32) + "\n"},
			want: page + ":27: receipts[0].path: is required"},

		// Several rule problems at once, in line order.
		{name: "several rule problems", edits: []string{"expect: faster", "expect: quicker", "id: 275", "id: -1", "passes: 12", "passes: 7"},
			want: page + ":2: id: must be a positive integer\n" +
				page + ":14: protocol.passes: must be even\n" +
				page + `:18: lanes[0].expect: must be one of faster, slower, neutral; got "quicker"`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if seen[tt.name] {
				t.Fatalf("duplicate case name")
			}
			seen[tt.name] = true
			src := tt.page
			if src == "" {
				src = edit(t, base, tt.edits...)
			}
			e, err := Parse(page, []byte(src))
			if err == nil {
				t.Fatalf("Parse succeeded, want error:\n%s", tt.want)
			}
			if e != nil {
				t.Errorf("Parse returned an experiment with its error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got: %s\nwant: %s", got, tt.want)
			}
			for _, pe := range Errors(err) {
				if pe.File != page || pe.Line < 1 {
					t.Errorf("error %q has file %q, line %d", pe, pe.File, pe.Line)
				}
			}
		})
	}
}

func TestParseGotestSpec(t *testing.T) {
	e, err := Parse(page, []byte(readTestdata(t, "275-gotest.md")))
	if err != nil {
		t.Fatal(err)
	}
	want := &Experiment{
		Path:       page,
		ID:         275,
		Title:      "which read gets the next free worker",
		Date:       "2026-08-19",
		Status:     StatusPlanned,
		Category:   CategoryMoonshot,
		Directions: []string{"stream-rerun-dispatch", "result-transfer-shape"},
		Archive:    "archive/exp-275",
		Harness:    Harness{Kind: lanekind.Gotest, Package: "./lanes/admission", Ref: "HEAD"},
		Arms: []Arm{
			{Name: "base", Line: 11, Ref: "HEAD"},
			{Name: "candA", Line: 12, Ref: "HEAD", Patch: "archive/exp-275/candA.patch"},
			{Name: "candB", Line: 13, Ref: "HEAD", Patch: "archive/exp-275/candB.patch"},
		},
		Protocol: Protocol{Samples: 41, Warmup: 10, Passes: 12, Collections: 2, Seed: 275},
		Profiles: map[string]Protocol{"quick": {Samples: 15, Warmup: 3, Passes: 4}},
		Drift:    driftcheck.Config{EffectFloorPct: 3, CleanCVPct: 8, CVAsymmetry: 4},
		Lanes: []Lane{
			{Name: "PointUnderLoad", Line: 18, Role: RolePrimary, Expect: ExpectFaster},
			{Name: "Bulk4Mixed", Line: 19, Role: RoleGuard},
			{Name: "Bulk4Cold", Line: 20, Role: RoleControl},
		},
		Incidence: &Incidence{
			Suite:    Harness{Kind: lanekind.Gotest, Package: "./lanes/release"},
			Total:    "dispatches",
			Eligible: "cheap-parked-behind-costly",
			MinShare: 0.001,
		},
	}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreFields(Experiment{}, "Lines")); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	for field, line := range map[string]int{
		"":                      2,
		"id":                    2,
		"arms.candB.patch":      13,
		"protocol.seed":         14,
		"profiles.quick.passes": 15,
		"lanes[2].role":         20,
		"incidence.suite.kind":  22,
		"incidence.min-share":   25,
	} {
		if got := e.Lines[field]; got != line {
			t.Errorf("Lines[%q] = %d, want %d", field, got, line)
		}
	}
	if got, want := e.Base().Name, "base"; got != want {
		t.Errorf("Base().Name = %q, want %q", got, want)
	}
	var names []string
	for _, a := range e.Candidates() {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"candA", "candB"}, names); diff != "" {
		t.Errorf("Candidates() (-want +got):\n%s", diff)
	}
	if l, ok := e.Lane("Bulk4Cold"); !ok || l.Role != RoleControl || l.Line != 20 {
		t.Errorf("Lane(Bulk4Cold) = %+v, %v", l, ok)
	}
	if _, ok := e.Lane("Missing"); ok {
		t.Errorf("Lane(Missing) found a lane")
	}
}

func TestParseExecSpec(t *testing.T) {
	e, err := ParseFile("testdata/12-exec.md")
	if err != nil {
		t.Fatal(err)
	}
	want := &Experiment{
		Path:     "testdata/12-exec.md",
		ID:       12,
		Title:    "a switch in the lane program",
		Date:     "2026-09-01",
		Status:   StatusPlanned,
		Category: CategoryMeasurement,
		Harness: Harness{Kind: lanekind.Exec, Command: []string{
			"{bin}", "-lane", "{lane}", "-samples", "{samples}", "-warmup", "{warmup}"}},
		Arms: []Arm{
			{Name: "base", Line: 9, Bin: "./bin/lane"},
			{Name: "cand", Line: 10, Bin: "./bin/lane", Env: map[string]string{"SOME_SWITCH": "1"}},
		},
		Lanes: []Lane{
			{Name: "alpha", Line: 11, Role: RolePrimary},
			{Name: "beta", Line: 11, Role: RoleGuard},
		},
	}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreFields(Experiment{}, "Lines")); diff != "" {
		t.Errorf("ParseFile mismatch (-want +got):\n%s", diff)
	}
}

// TestParseNonZeroAndReference reads a lane's nonzero list and a reference arm, and
// Resolve keeps the list.
func TestParseNonZeroAndReference(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "275-gotest.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "{name: Bulk4Mixed, role: guard}", "{name: Bulk4Mixed, role: guard, nonzero: [reserved/op, ns/op]}", 1)
	text = strings.Replace(text, "patch: archive/exp-275/candB.patch}", "patch: archive/exp-275/candB.patch, reference: true}", 1)
	e, err := Parse(page, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := e.Lane("Bulk4Mixed"); !slices.Equal(l.NonZero, []string{"reserved/op", "ns/op"}) {
		t.Errorf("nonzero %q", l.NonZero)
	}
	var refs []string
	for _, a := range e.Arms {
		if a.Reference {
			refs = append(refs, a.Name)
		}
	}
	if !slices.Equal(refs, []string{"candB"}) {
		t.Errorf("reference arms %q, want candB", refs)
	}
	r, err := e.Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Lanes[1].NonZero, []string{"reserved/op", "ns/op"}) {
		t.Errorf("resolved nonzero %q", r.Lanes[1].NonZero)
	}
}

func TestParseKeepsArmOrder(t *testing.T) {
	src := edit(t, readTestdata(t, "12-exec.md"),
		"arms:\n  base: {bin: ./bin/lane}\n  cand: {bin: ./bin/lane, env: {SOME_SWITCH: \"1\"}}\n",
		"arms:\n  zeta: {bin: z}\n  base: {bin: b}\n  alpha: {bin: a}\n  mid: {bin: m}\n")
	e, err := Parse(page, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range e.Arms {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"zeta", "base", "alpha", "mid"}, names); diff != "" {
		t.Errorf("arm order (-want +got):\n%s", diff)
	}
	names = nil
	for _, a := range e.Candidates() {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"zeta", "alpha", "mid"}, names); diff != "" {
		t.Errorf("candidate order (-want +got):\n%s", diff)
	}
}

func TestParseAnchorsAndBlockStyle(t *testing.T) {
	src := `---
id: 7
title: anchors
date: 2026-01-02
status: accepted
status-by: rule
category: cleanup
harness:
  kind: gotest
  package: ./lanes/x
  benchtime: 100ms
  timeout: 90s
arms:
  base: &git
    ref: main
    tags: [sqlite_omit_load_extension]
  cand:
    <<: *git
lanes:
  - name: Get/size=10
    role: primary
    expect: neutral
    unit: B/op
    better: lower
receipts:
  - path: results/2026-01-02T00-00-00Z-exp007-ab.md
    sha256: ` + strings.Repeat("0f", 32) + `
---
`
	_, err := Parse(page, []byte(src))
	// Merge keys are not supported: they read as an unknown field.
	if want := page + ":18: arms.cand.<<: unknown field (known: bin, ref, patch, tags, ldflags, env, args, reference)"; err == nil || err.Error() != want {
		t.Fatalf("error:\n got: %v\nwant: %s", err, want)
	}
	src = strings.Replace(src, "    <<: *git\n", "    ref: main\n", 1)
	src = strings.Replace(src, "  cand:\n", "  cand: *git\n  other:\n", 1)
	e, err := Parse(page, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if e.Harness.Timeout != Duration(90*time.Second) || e.Harness.Benchtime != "100ms" {
		t.Errorf("harness = %+v", e.Harness)
	}
	want := []Arm{
		{Name: "base", Line: 14, Ref: "main", Tags: []string{"sqlite_omit_load_extension"}},
		{Name: "cand", Line: 17, Ref: "main", Tags: []string{"sqlite_omit_load_extension"}},
		{Name: "other", Line: 18, Ref: "main"},
	}
	if diff := cmp.Diff(want, e.Arms); diff != "" {
		t.Errorf("arms (-want +got):\n%s", diff)
	}
	if e.Lanes[0].Line != 21 || e.Lanes[0].Unit != "B/op" || e.StatusBy != StatusByRule {
		t.Errorf("lane = %+v, status-by %q", e.Lanes[0], e.StatusBy)
	}
	if len(e.Receipts) != 1 || e.Lines["receipts[0].sha256"] != 28 {
		t.Errorf("receipts = %+v, line %d", e.Receipts, e.Lines["receipts[0].sha256"])
	}
}

func TestSplitPage(t *testing.T) {
	tests := []struct {
		name, page, front, body string
		wantErr                 string
	}{
		{name: "plain", page: "---\nid: 1\n---\n# body\n", front: "id: 1\n", body: "# body\n"},
		{name: "crlf and trailing blanks", page: "---\r\nid: 1\r\n---  \r\nbody", front: "id: 1\r\n", body: "body"},
		{name: "byte order mark", page: "\ufeff---\nid: 1\n---\n", front: "id: 1\n", body: ""},
		{name: "no body, no final newline", page: "---\nid: 1\n---", front: "id: 1\n", body: ""},
		{name: "body keeps later rules", page: "---\na: 1\n---\ntext\n---\nmore\n", front: "a: 1\n", body: "text\n---\nmore\n"},
		{name: "indented dashes are not a delimiter", page: "---\na: |\n  ---\n---\n", front: "a: |\n  ---\n", body: ""},
		{name: "missing", page: "id: 1\n", wantErr: "missing front matter (the page must start with a --- line)"},
		{name: "only an opening line", page: "---", wantErr: "front matter is not closed (no --- line after line 1)"},
		{name: "unclosed", page: "---\nid: 1\n", wantErr: "front matter is not closed (no --- line after line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front, line, body, err := SplitPage([]byte(tt.page))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(front) != tt.front || string(body) != tt.body || line != 2 {
				t.Errorf("got front %q line %d body %q, want %q 2 %q", front, line, body, tt.front, tt.body)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	var v struct {
		T Duration `yaml:"t"`
	}
	if err := yaml.Unmarshal([]byte("t: 1m30s"), &v); err != nil || v.T != Duration(90*time.Second) {
		t.Errorf("got %v, %v", v.T, err)
	}
	err := yaml.Unmarshal([]byte("t: 30"), &v)
	if want := `line 1: must be a duration like 30s or 10m, got "30"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %s", err, want)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "t: 1m30s\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{File: "a.md", Line: 3, Field: "id", Msg: "is required"}, "a.md:3: id: is required"},
		{Error{File: "a.md", Field: "id", Msg: "is required"}, "a.md: id: is required"},
		{Error{Field: "--passes 3", Msg: "must be even"}, "--passes 3: must be even"},
		{Error{File: "a.md", Line: 1, Msg: "front matter is empty"}, "a.md:1: front matter is empty"},
		{Error{Line: 4, Field: "id", Msg: "m"}, "line 4: id: m"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"samples", "warmup", "passes", "collections", "seed", "timeout", "id"}
	for in, want := range map[string]string{
		"samplez":    "samples",
		"Samples":    "samples",
		"colections": "collections",
		"wramup":     "warmup",
		"x":          "",
		"ids":        "id",
		"speed":      "seed",
		"banana":     "",
	} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// {count} (warmup + samples, which harness.Expand fills in) is a command placeholder, and
// tags and ldflags on git arms are fine when the build template passes them on.
func TestParseExecPlaceholders(t *testing.T) {
	src := edit(t, readTestdata(t, "12-exec.md"),
		`"-warmup", "{warmup}"]}`, `"-count", "{count}"], build: [go, build, -tags, "{tags}", "-ldflags={ldflags}", -o, "{out}", .]}`,
		"  base: {bin: ./bin/lane}\n  cand: {bin: ./bin/lane, env: {SOME_SWITCH: \"1\"}}\n",
		"  base: {ref: HEAD}\n  cand: {ref: HEAD, tags: [fast], ldflags: -s}\n")
	if _, err := Parse(page, []byte(src)); err != nil {
		t.Fatal(err)
	}
}

// TestParseIncidenceShares: the extra shares of an incidence report are read in order.
func TestParseIncidenceShares(t *testing.T) {
	page := strings.Replace(readTestdata(t, "275-gotest.md"), "min-share: 0.001\n",
		"min-share: 0.001\n  shares:\n    - {part: cheap, of: dispatches}\n    - {part: cheap-waited, of: cheap}\n", 1)
	e, err := Parse("275.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []Share{{Part: "cheap", Of: "dispatches"}, {Part: "cheap-waited", Of: "cheap"}}
	if diff := cmp.Diff(want, e.Incidence.Shares); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	if got := e.Lines["incidence.shares[1].part"]; got != 28 {
		t.Errorf("Lines[incidence.shares[1].part] = %d, want 28", got)
	}
}
