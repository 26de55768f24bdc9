package receipt

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/internal/atomicfile"
	"golang.org/x/perf/benchfmt"
)

// WriteBench writes one <arm>.bench file per arm of the plan: every good sample of
// every run of that arm, one benchmark line per sample, in schedule order, as go test
// -bench would have printed it: the configuration lines the lane printed (goos, goarch,
// pkg, cpu), each sample's real iteration count, and every metric of the line (B/op and
// allocs/op when the lane reports them). The files share their configuration lines, so
// `benchstat base.bench cand.bench` compares the arms lane by lane without further
// options: a key whose value differs between the processes of one lane in one arm (a
// pid) is left out (varyingConfig). It returns the names of the files written.
func (f Folder) WriteBench(plan *Plan, recs []Record) ([]string, error) {
	order := map[Key]int{}
	for i, r := range plan.Runs {
		order[r.Key()] = i
	}
	sorted := append([]Record(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return order[sorted[i].Key()] < order[sorted[j].Key()] })

	varying := varyingConfig(sorted)
	var names []string
	for _, arm := range plan.Arms {
		name := arm.Name + BenchExt
		if err := writeArmBench(f.Path(name), plan, arm.Name, sorted, varying); err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// writeArmBench writes one arm's .bench file atomically (atomicfile.Write): a kill while it
// writes leaves the old file or the new one, never a cut one that the manifest would
// then refuse.
func writeArmBench(path string, plan *Plan, arm string, recs []Record, varying map[string]bool) error {
	var buf bytes.Buffer
	w := &benchWriter{w: &buf, config: map[string]string{}}
	for _, r := range recs {
		if r.Arm != arm || !r.OK() {
			continue
		}
		extra := sortedKeys(r.Metrics)
		w.setConfig(benchConfig(r.Config, plan, varying))
		for i, v := range r.Samples {
			iters := 1
			if i < len(r.Iters) && r.Iters[i] > 0 {
				iters = r.Iters[i]
			}
			line := []string{"Benchmark" + r.Lane, strconv.Itoa(iters), benchValue(v, r.Unit)}
			for _, unit := range extra {
				if vals := r.Metrics[unit]; i < len(vals) {
					line = append(line, benchValue(vals[i], unit))
				}
			}
			w.line(strings.Join(line, "\t"))
		}
	}
	return atomicfile.Write(path, buf.Bytes())
}

// benchValue writes one value of a benchmark line with its unit, as exactly as the record
// holds it and never in e-notation: "1200000 ns/op", "0.25 ns/op", "48 B/op".
func benchValue(v float64, unit string) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + unit
}

// benchWriter writes the Go benchmark format: configuration lines ("key: value") when they
// change, then result lines, like go test and benchfmt.Writer, but with values written by
// benchValue (benchfmt.Writer writes 1e+06).
type benchWriter struct {
	w      *bytes.Buffer
	config map[string]string
	order  []string
	wrote  bool // a result line was written since the last configuration block
}

// setConfig writes the configuration lines that differ from the current ones: changed
// and new keys with their values, removed keys as "key:".
func (b *benchWriter) setConfig(cfg []benchfmt.Config) {
	var lines []string
	keep := map[string]bool{}
	for _, c := range cfg {
		keep[c.Key] = true
		if have, ok := b.config[c.Key]; !ok || have != string(c.Value) {
			lines = append(lines, c.Key+": "+string(c.Value))
			if !ok {
				b.order = append(b.order, c.Key)
			}
			b.config[c.Key] = string(c.Value)
		}
	}
	for _, k := range slices.Clone(b.order) {
		if !keep[k] {
			lines = append(lines, k+":")
			delete(b.config, k)
			b.order = slices.DeleteFunc(b.order, func(o string) bool { return o == k })
		}
	}
	if len(lines) == 0 {
		return
	}
	if b.wrote {
		b.line("")
	}
	for _, l := range lines {
		b.line(l)
	}
	b.wrote = false
}

// line writes one line; a result line sets wrote.
func (b *benchWriter) line(s string) {
	b.w.WriteString(s + "\n")
	if strings.HasPrefix(s, "Benchmark") {
		b.wrote = true
	}
}

// varyingConfig returns the configuration keys whose value differs between the
// processes of one lane in one arm (a pid, a seed a lane prints): benchstat groups
// results by their configuration, so such a key would split one lane's samples into a
// table per process. The .bench files leave them out; raw.jsonl keeps them.
func varyingConfig(recs []Record) map[string]bool {
	type group struct{ arm, lane string }
	values := map[group]map[string]string{}
	seen := map[group]bool{}
	keys := map[string]bool{}
	for _, r := range recs {
		if r.OK() {
			for k := range r.Config {
				keys[k] = true
			}
		}
	}
	varying := map[string]bool{}
	for _, r := range recs {
		if !r.OK() {
			continue
		}
		g := group{r.Arm, r.Lane}
		if !seen[g] {
			seen[g] = true
			values[g] = map[string]string{}
			for k := range keys {
				if v, ok := r.Config[k]; ok {
					values[g][k] = v
				} else {
					values[g][k] = "\x00absent"
				}
			}
			continue
		}
		for k := range keys {
			v, ok := r.Config[k]
			if !ok {
				v = "\x00absent"
			}
			if values[g][k] != v {
				varying[k] = true
			}
		}
	}
	return varying
}

// goConfig is the order in which go test prints its configuration lines.
var goConfig = []string{"goos", "goarch", "pkg", "cpu"}

// benchConfig returns the configuration lines of one record's results: the ones the lane
// printed (go test's first, in its order, then the others sorted) but for the varying
// ones, then the experiment and the receipt.
func benchConfig(lane map[string]string, plan *Plan, varying map[string]bool) []benchfmt.Config {
	var out []benchfmt.Config
	for _, k := range goConfig {
		if v, ok := lane[k]; ok && !varying[k] {
			out = append(out, benchfmt.Config{Key: k, Value: []byte(v), File: true})
		}
	}
	for _, k := range sortedKeys(lane) {
		if !slices.Contains(goConfig, k) && k != "experiment" && k != "receipt" && !varying[k] {
			out = append(out, benchfmt.Config{Key: k, Value: []byte(lane[k]), File: true})
		}
	}
	return append(out,
		benchfmt.Config{Key: "experiment", Value: []byte(strconv.Itoa(plan.Experiment)), File: true},
		benchfmt.Config{Key: "receipt", Value: []byte(plan.Stamp), File: true})
}
