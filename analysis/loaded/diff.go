package loaded

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
)

// AnalysisDiff compares a stored drift analysis with one computed afresh from the same
// data, in their JSON form, and describes the first difference as a field path with both
// values ("pooled[3].estimate_pct: -42 stored, -3.07 recomputed"), or returns "" when they
// agree. The reasons of both are tidied first (see tidyReasons).
func AnalysisDiff(stored, fresh driftcheck.Report) string {
	tidyReasons(&stored)
	tidyReasons(&fresh)
	// Which flipbench computed an analysis is not part of it; an analysis stored before
	// methods were recorded has none to compare.
	switch {
	case stored.Method == nil:
		fresh.Method = nil
	case fresh.Method != nil:
		s, f := *stored.Method, *fresh.Method
		s.Version, f.Version = "", ""
		stored.Method, fresh.Method = &s, &f
	}
	var a, b any
	for _, x := range []struct {
		r   driftcheck.Report
		out *any
	}{{stored, &a}, {fresh, &b}} {
		data, err := json.Marshal(x.r)
		if err == nil {
			err = json.Unmarshal(data, x.out)
		}
		if err != nil {
			return "cannot compare: " + err.Error()
		}
	}
	return jsonDiff("", a, b)
}

// jsonDiff returns the first difference between two decoded JSON values, or "".
func jsonDiff(path string, a, b any) string {
	at := func() string {
		if path == "" {
			return "the document"
		}
		return path
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			xv, xok := x[k]
			yv, yok := y[k]
			switch {
			case !xok:
				return fmt.Sprintf("%s: missing from the stored analysis, %s recomputed", p, jsonText(yv))
			case !yok:
				return fmt.Sprintf("%s: %s stored, absent when recomputed", p, jsonText(xv))
			}
			if d := jsonDiff(p, xv, yv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: %d entries stored, %d recomputed", at(), len(x), len(y))
		}
		return ""
	default:
		if a == b {
			return ""
		}
	}
	x, xok := a.(float64)
	y, yok := b.(float64)
	if xok && yok && fmt.Sprintf("%.6g", x) != fmt.Sprintf("%.6g", y) {
		return fmt.Sprintf("%s: %.6g stored, %.6g recomputed", at(), x, y)
	}
	return fmt.Sprintf("%s: %s stored, %s recomputed", at(), jsonText(a), jsonText(b))
}

// jsonText writes a decoded JSON value in one short line.
func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// tidyReasons rewrites the signed zeros ("-0.0%") that older drift checks wrote into the
// reasons of a stored analysis, so a page shows them as the current one would.
func tidyReasons(r *driftcheck.Report) {
	for i := range r.Pairs {
		r.Pairs[i].Reason = human.Tidy(r.Pairs[i].Reason)
	}
	for _, ls := range [][]driftcheck.LaneSummary{r.Lanes, r.Pooled} {
		for i := range ls {
			ls[i].Reason = human.Tidy(ls[i].Reason)
		}
	}
	for i := range r.Warnings {
		r.Warnings[i] = human.Tidy(r.Warnings[i])
	}
}
