package receipt

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	"golang.org/x/perf/benchfmt"
)

// WriteBench writes one <arm>.bench file per arm of the plan into dir: every good sample of
// every run of that arm, one benchmark line per sample, in schedule order. The files share
// their configuration lines, so `benchstat base.bench cand.bench` compares the arms lane by
// lane without further options. It returns the names of the files written.
func WriteBench(dir string, plan *Plan, recs []Record) ([]string, error) {
	order := map[Key]int{}
	for i, r := range plan.Runs {
		order[r.Key()] = i
	}
	sorted := append([]Record(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return order[sorted[i].Key()] < order[sorted[j].Key()] })

	var names []string
	for _, arm := range plan.Arms {
		name := arm.Name + BenchExt
		if err := writeArmBench(filepath.Join(dir, name), plan, arm.Name, sorted); err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// writeArmBench writes one arm's .bench file atomically (WriteFile): a kill while it
// writes leaves the old file or the new one, never a cut one that the manifest would
// then refuse.
func writeArmBench(path string, plan *Plan, arm string, recs []Record) error {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	for _, r := range recs {
		if r.Arm != arm || !r.OK() {
			continue
		}
		extra := sortedKeys(r.Metrics)
		for i, v := range r.Samples {
			res := &benchfmt.Result{
				Config: []benchfmt.Config{
					{Key: "experiment", Value: []byte(strconv.Itoa(plan.Experiment)), File: true},
					{Key: "receipt", Value: []byte(plan.Stamp), File: true},
				},
				Name:   benchfmt.Name(r.Lane),
				Iters:  1,
				Values: []benchfmt.Value{{Value: v, Unit: r.Unit}},
			}
			for _, unit := range extra {
				if vals := r.Metrics[unit]; i < len(vals) {
					res.Values = append(res.Values, benchfmt.Value{Value: vals[i], Unit: unit})
				}
			}
			if err := w.Write(res); err != nil {
				return err
			}
		}
	}
	return WriteFile(path, buf.Bytes())
}
