package report

import (
	"io"
	"slices"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
)

// RSSStyle chooses the columns of RSSTable.
type RSSStyle int

const (
	// RSSMedianMax gives each arm two columns, "<arm> median" and "<arm> max": the median
	// and the largest peak RSS over its runs of the lane. The receipt page uses it.
	RSSMedianMax RSSStyle = iota
	// RSSMedianDelta gives each arm one column, headed by its name, with the median, and
	// adds a last column "Δ": the last arm's median against the first's, in percent. An
	// experiment page's results block uses it for base and one candidate.
	RSSMedianDelta
)

// RSSTable writes the peak RSS table of a receipt: one row per lane of the plan, in plan
// order, with columns for the given arms in the given style. Only successful runs count:
// a crashed or timed-out process's peak says little about the arm. A lane or arm without
// a successful run that reported its peak RSS shows "-".
func RSSTable(w io.Writer, d *loaded.Receipt, arms []string, style RSSStyle) error {
	type key struct{ lane, arm string }
	rss := map[key][]float64{}
	for _, r := range d.Records {
		if r.OK() && r.MaxRSSBytes > 0 {
			k := key{r.Lane, r.Arm}
			rss[k] = append(rss[k], float64(r.MaxRSSBytes))
		}
	}
	header := []string{"lane"}
	for _, a := range arms {
		if style == RSSMedianMax {
			header = append(header, a+" median", a+" max")
		} else {
			header = append(header, a)
		}
	}
	if style == RSSMedianDelta {
		header = append(header, "Δ")
	}
	var rows [][]string
	for _, l := range d.Plan.Lanes {
		row := []string{l.Name}
		var meds []float64 // per arm; 0 when it has no runs
		for _, a := range arms {
			xs := rss[key{l.Name, a}]
			med := driftcheck.Median(xs)
			meds = append(meds, med)
			switch {
			case len(xs) == 0 && style == RSSMedianMax:
				row = append(row, "-", "-")
			case len(xs) == 0:
				row = append(row, "-")
			case style == RSSMedianMax:
				row = append(row, human.Bytes(med), human.Bytes(slices.Max(xs)))
			default:
				row = append(row, human.Bytes(med))
			}
		}
		if style == RSSMedianDelta {
			delta := "-"
			if n := len(meds); n >= 2 && meds[0] > 0 && meds[n-1] > 0 {
				delta = human.Amount((meds[n-1] - meds[0]) / meds[0] * 100)
			}
			row = append(row, delta)
		}
		rows = append(rows, row)
	}
	return mdtable.Write(w, header, rows)
}
