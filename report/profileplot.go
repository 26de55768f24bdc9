package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/internal/human"
)

// profilePlotBars is how many functions a profile plot shows.
const profilePlotBars = 10

// ProfilePlot writes the SVG bar chart of one lane's profile difference to buf: the
// functions with the largest flat differences per operation (candidate minus base), one
// horizontal bar each, largest at the top, slower (more) in orange and faster (less) in
// blue, with a whisker of two standard errors of sampling on a CPU difference, the value
// labelled at each bar's end, and every x tick in the difference's unit.
func ProfilePlot(buf *bytes.Buffer, lane, arm, base string, d profdiff.Diff) error {
	var (
		moreColor = color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
		lessColor = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
		ruleColor = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	)
	es := d.Top[:min(profilePlotBars, len(d.Top))]
	n := len(es)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s vs %s, %s per operation by function (flat)", lane, arm, base, whatOf(d.Kind))
	p.Title.TextStyle.Font = plotFont(12)
	p.X.Label.Text = fmt.Sprintf("difference per operation (%s; positive: the candidate spends more)", d.Unit)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotFont(10)
		a.Tick.Label.Font = plotFont(9)
	}
	lo, hi := 0.0, 0.0
	for _, e := range es {
		w := 2 * e.FlatNoise
		lo, hi = math.Min(lo, e.Flat.Delta-w), math.Max(hi, e.Flat.Delta+w)
	}
	if lo == hi {
		hi = 1
	}
	pad := (hi - lo) * 0.25
	p.X.Min, p.X.Max = lo-pad*boolf(lo < 0), hi+pad*boolf(hi > 0)
	p.X.Tick.Marker = unitTicks{unit: d.Unit}
	p.Y.Min, p.Y.Max = -0.5, float64(max(n, 1))-0.5
	var ticks []plot.Tick
	var labels plotter.XYLabels
	for i, e := range es {
		y := float64(n - 1 - i) // the largest at the top
		ticks = append(ticks, plot.Tick{Value: y, Label: profdiff.Short(e.Function)})
		c := moreColor
		if e.Flat.Delta < 0 {
			c = lessColor
		}
		bar, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: y - 0.35}, {X: e.Flat.Delta, Y: y - 0.35}, {X: e.Flat.Delta, Y: y + 0.35}, {X: 0, Y: y + 0.35}})
		if err != nil {
			return err
		}
		bar.Color = c
		bar.LineStyle.Width = 0
		p.Add(bar)
		if e.FlatNoise > 0 {
			wl, err := plotter.NewLine(plotter.XYs{{X: e.Flat.Delta - 2*e.FlatNoise, Y: y}, {X: e.Flat.Delta + 2*e.FlatNoise, Y: y}})
			if err != nil {
				return err
			}
			wl.Color = ruleColor
			wl.Width = vg.Points(1)
			p.Add(wl)
		}
		x := e.Flat.Delta
		if x >= 0 {
			x += 2*e.FlatNoise + (hi-lo)*0.01
		} else {
			x -= 2*e.FlatNoise + (hi-lo)*0.01
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
		s := human.Value(e.Flat.Delta, d.Unit)
		if e.Flat.Delta > 0 {
			s = "+" + s
		}
		labels.Labels = append(labels.Labels, s)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: p.Y.Min}, {X: 0, Y: p.Y.Max}})
	if err != nil {
		return err
	}
	zero.Color = ruleColor
	zero.Width = vg.Points(0.5)
	p.Add(zero)
	if n > 0 {
		lb, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font = plotFont(8)
			lb.TextStyle[i].YAlign = draw.YCenter
			lb.TextStyle[i].XAlign = draw.XLeft
			if es[i].Flat.Delta < 0 {
				lb.TextStyle[i].XAlign = draw.XRight
			}
		}
		p.Add(lb)
	}
	height := vg.Length(1.2)*vg.Inch + vg.Length(max(n, 1))*0.32*vg.Inch
	c, err := draw.NewFormattedCanvas(plotWidth, height, "svg")
	if err != nil {
		return err
	}
	// A margin on every side: gonum measures the labels a little short.
	p.Draw(draw.Crop(draw.New(c), vg.Points(12), -vg.Points(8), vg.Points(4), -vg.Points(10)))
	_, err = c.WriteTo(buf)
	return err
}

// whatOf names a profile kind for a plot's title.
func whatOf(kind string) string {
	if kind == profdiff.Alloc {
		return "bytes allocated"
	}
	return "CPU time"
}

// boolf is 1 for true, 0 for false.
func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unitTicks are the x ticks of a profile plot: gonum's default positions, each major
// tick labelled in the unit, signed.
type unitTicks struct{ unit string }

// Ticks implements plot.Ticker.
func (u unitTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		v := ticks[i].Value
		switch {
		case math.Abs(v) < 1e-12*math.Max(math.Abs(lo), math.Abs(hi)):
			ticks[i].Label = "0"
		case v > 0:
			ticks[i].Label = "+" + human.Value(v, u.unit)
		default:
			ticks[i].Label = human.Value(v, u.unit)
		}
	}
	return ticks
}

// ProfileEntries is how many functions of each profile difference a page shows, by flat
// and by cumulative difference.
const ProfileEntries = 8

// ProfileSection writes the profile differences of d (profdiff.Markdown) with the bar
// charts Finish wrote beside them; heading starts each lane's heading line, and link
// turns a path relative to the data folder into the page's link to it.
func ProfileSection(w io.Writer, d *loaded.Receipt, heading string, link func(rel string) string) error {
	return profdiff.Markdown(w, d.Profiles, heading, ProfileEntries, func(rel string) string {
		if strings.HasSuffix(rel, ".svg") && !d.Plots[rel] {
			return ""
		}
		return link(rel)
	})
}

// ProfilePlots returns the bar charts of d's profile differences: file name (in the data
// folder) to SVG.
func ProfilePlots(d *loaded.Receipt) (map[string][]byte, error) {
	out := map[string][]byte{}
	if d.Profiles == nil {
		return out, nil
	}
	for _, l := range d.Profiles.Lanes {
		for _, diff := range l.Diffs {
			var buf bytes.Buffer
			if err := ProfilePlot(&buf, l.Lane, l.Arm, d.Profiles.Base, diff); err != nil {
				return nil, fmt.Errorf("plotting the %s profile difference of lane %s: %w", diff.Kind, l.Lane, err)
			}
			out[profdiff.PlotName(l.Arm, l.Lane, diff.Kind)] = buf.Bytes()
		}
	}
	return out, nil
}
