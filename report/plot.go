package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/receipt/loaded"
	"github.com/flipbench/flipbench/spec"
)

// PlotName returns the file name of the plot of one lane for one candidate arm inside a
// receipt data folder: "plot-<arm>-<lane>.svg", with characters that do not belong in a
// file name (a sub-benchmark's "/" or "=") replaced by "_".
func PlotName(arm, lane string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	return "plot-" + clean(arm) + "-" + clean(lane) + ".svg"
}

// PlotLanes returns the lanes that get a plot: the primary and guard lanes of the plan,
// in plan order.
func PlotLanes(p *receipt.Plan) []receipt.Lane {
	var out []receipt.Lane
	for _, l := range p.Lanes {
		if l.Role == spec.RolePrimary || l.Role == spec.RoleGuard {
			out = append(out, l)
		}
	}
	return out
}

// plotFont is the font of every text in a plot.
func plotFont(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// Plot size: the data area on the left, the legend in a column of its own on the right,
// so it never covers a point.
const (
	plotWidth   = 7.5 * vg.Inch
	plotHeight  = 3.6 * vg.Inch
	legendWidth = 2.2 * vg.Inch
)

// Plot writes the SVG plot of one lane for one candidate arm to buf: the per-pass delta
// against base by pass, forward and reverse passes drawn differently; per collection (each
// named above its passes) the lane's effect from its pair means as a dashed line with its
// interval as a band; the effect floor as a grey band around zero; every y tick labelled
// in percent, negative ones included; the legend beside the data, not on it.
func Plot(buf *bytes.Buffer, d *loaded.Receipt, arm, lane string) error {
	var (
		forwardColor  = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
		reverseColor  = color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
		bandColor     = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0x40} // translucent: NRGBA
		intervalColor = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x38}
		effectColor   = color.NRGBA{R: 0x1b, G: 0x6e, B: 0x1b, A: 0xff}
		ruleColor     = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	)
	passes := d.Plan.Protocol.Passes
	floor := d.Analysis.Config.EffectFloorPct
	maxColl, lastPass := 0, 0
	var usable []driftcheck.PassDelta
	for _, pd := range d.Analysis.Passes {
		if pd.Arm != arm || pd.Lane != lane {
			continue
		}
		maxColl = max(maxColl, pd.Collection)
		if pd.Usable {
			usable = append(usable, pd)
			lastPass = max(lastPass, pd.Pass)
		}
	}
	if maxColl == 0 {
		maxColl = d.Plan.Protocol.Collections
	}
	// A sequential run may stop well before its last planned pass: show the passes run.
	shown := passes
	if d.Plan.Protocol.Sequential != nil {
		shown = max(lastPass+lastPass%2, 2)
	}
	var fwd, rev plotter.XYs
	for _, pd := range usable {
		xy := plotter.XY{X: float64((pd.Collection-1)*shown + pd.Pass), Y: pd.DeltaPct}
		if pd.Order == driftcheck.OrderReverse {
			rev = append(rev, xy)
		} else {
			fwd = append(fwd, xy)
		}
	}
	n := float64(maxColl * shown)
	lo, hi := 0.5, n+0.5
	ymin, ymax := -floor, floor
	grow := func(y float64) { ymin, ymax = min(ymin, y), max(ymax, y) }
	for _, xy := range append(append(plotter.XYs{}, fwd...), rev...) {
		grow(xy.Y)
	}
	var colls []driftcheck.LaneSummary
	for _, s := range d.Analysis.Lanes {
		if s.Arm == arm && s.Lane == lane && s.UsablePairs > 0 {
			colls = append(colls, s)
			grow(s.EstimatePct)
			if s.Bounded {
				grow(s.CILowPct)
				grow(s.CIHighPct)
			}
		}
	}
	// Pad the data, and leave a strip at the top for the collections' names.
	pad := (ymax - ymin) * 0.08
	ymin, ymax = ymin-pad, ymax+pad+(ymax-ymin)*0.12

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s vs %s, delta per pass", lane, arm, d.Analysis.Base)
	p.Title.TextStyle.Font = plotFont(12)
	p.X.Label.Text = "pass (number within its collection)"
	p.Y.Label.Text = "delta (negative: candidate better)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotFont(10)
		a.Tick.Label.Font = plotFont(9)
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = ymin, ymax
	p.Y.Tick.Marker = percentTicks{}

	var ticks []plot.Tick
	for c := 0; c < maxColl; c++ {
		for k := 1; k <= shown; k++ {
			ticks = append(ticks, plot.Tick{Value: float64(c*shown + k), Label: fmt.Sprint(k)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	legend := plot.NewLegend()
	legend.TextStyle.Font = plotFont(9)
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(4)

	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: -floor}, {X: hi, Y: -floor}, {X: hi, Y: floor}, {X: lo, Y: floor}})
	if err != nil {
		return err
	}
	band.Color = bandColor
	band.LineStyle.Width = 0
	p.Add(band)
	legend.Add(fmt.Sprintf("effect floor ±%s%%", human.Num(floor)), band)

	zero, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = ruleColor
	zero.Width = vg.Points(0.5)
	p.Add(zero)

	var effectLine *plotter.Line
	var intervalBand *plotter.Polygon
	for _, s := range colls {
		x0 := float64((s.Collection-1)*shown) + 0.5
		x1 := x0 + float64(shown)
		if s.Bounded {
			ib, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: s.CILowPct}, {X: x1, Y: s.CILowPct}, {X: x1, Y: s.CIHighPct}, {X: x0, Y: s.CIHighPct}})
			if err != nil {
				return err
			}
			ib.Color = intervalColor
			ib.LineStyle.Width = 0
			p.Add(ib)
			intervalBand = ib
		}
		m, err := plotter.NewLine(plotter.XYs{{X: x0, Y: s.EstimatePct}, {X: x1, Y: s.EstimatePct}})
		if err != nil {
			return err
		}
		m.Color = effectColor
		m.Width = vg.Points(1)
		m.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(m)
		effectLine = m
	}
	if effectLine != nil {
		legend.Add("effect (mean of pair means)", effectLine)
	}
	if intervalBand != nil {
		legend.Add("its interval at the collection's replication level", intervalBand)
	}
	var names plotter.XYLabels
	for c := 0; c < maxColl; c++ {
		names.XYs = append(names.XYs, plotter.XY{X: float64(c*shown) + 0.5 + float64(shown)/2, Y: ymax})
		names.Labels = append(names.Labels, fmt.Sprintf("collection %d", c+1))
		if c == 0 {
			continue
		}
		x := float64(c*shown) + 0.5
		sep, err := plotter.NewLine(plotter.XYs{{X: x, Y: ymin}, {X: x, Y: ymax}})
		if err != nil {
			return err
		}
		sep.Color = ruleColor
		sep.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(sep)
	}
	labels, err := plotter.NewLabels(names)
	if err != nil {
		return err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font = plotFont(9)
		labels.TextStyle[i].XAlign = draw.XCenter
		labels.TextStyle[i].YAlign = draw.YTop
		labels.TextStyle[i].Color = ruleColor
	}
	p.Add(labels)
	for _, s := range []struct {
		xys   plotter.XYs
		label string
		color color.Color
		shape draw.GlyphDrawer
	}{
		{fwd, "forward pass (base first)", forwardColor, draw.CircleGlyph{}},
		{rev, "reverse pass (candidates first)", reverseColor, draw.PyramidGlyph{}},
	} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = s.color
		sc.GlyphStyle.Shape = s.shape
		sc.GlyphStyle.Radius = vg.Points(3.5)
		p.Add(sc)
		legend.Add(s.label, sc)
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, "svg")
	if err != nil {
		return err
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, -vg.Points(4)))
	legend.Draw(draw.Crop(dc, plotWidth-legendWidth+vg.Points(12), 0, 0, -vg.Points(28)))
	_, err = c.WriteTo(buf)
	return err
}

// percentTicks are the y axis ticks of a plot: gonum's default positions, each major tick
// labelled as a signed percentage (negative ones too, never in e-notation).
type percentTicks struct{}

// Ticks implements plot.Ticker.
func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		v := ticks[i].Value
		switch {
		case math.Abs(v) < 1e-9:
			ticks[i].Label = "0%"
		case v > 0:
			ticks[i].Label = "+" + human.Num(v) + "%"
		default:
			ticks[i].Label = human.Num(v) + "%"
		}
	}
	return ticks
}
