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

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
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

// ruleColor is the grey of the plot's rules and collection names.
func ruleColor() color.NRGBA { return color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff} }

// Plot writes the SVG plot of one lane for one candidate arm to buf: the per-pass delta
// against base by pass, forward and reverse passes drawn differently; per collection (each
// named above its passes) the lane's effect from its pair means as a dashed line with its
// interval as a band; the effect floor as a grey band around zero; every y tick labelled
// in percent, negative ones included; the legend beside the data, not on it.
func Plot(buf *bytes.Buffer, d *loaded.Receipt, arm, lane string) error {
	pd := plotDataOf(d, arm, lane)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s vs %s, delta per pass", lane, arm, d.Analysis.Base)
	p.Title.TextStyle.Font = plotFont(12)
	p.X.Label.Text = "pass (number within its collection)"
	p.Y.Label.Text = "delta (negative: candidate better)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotFont(10)
		a.Tick.Label.Font = plotFont(9)
	}
	p.X.Min, p.X.Max = pd.lo, pd.hi
	p.Y.Min, p.Y.Max = pd.ymin, pd.ymax
	p.Y.Tick.Marker = percentTicks{}
	var ticks []plot.Tick
	for c := 0; c < pd.colls; c++ {
		for k := 1; k <= pd.shown; k++ {
			ticks = append(ticks, plot.Tick{Value: float64(c*pd.shown + k), Label: fmt.Sprint(k)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	legend := plot.NewLegend()
	legend.TextStyle.Font = plotFont(9)
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(4)
	for _, layer := range []func(*plot.Plot, *plot.Legend) error{pd.floorBand, pd.effects, pd.collectionNames, pd.passes} {
		if err := layer(p, &legend); err != nil {
			return err
		}
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

// plotData is what one lane's plot draws, placed on its axes: passes numbered across
// collections (shown passes each), the x range lo..hi and the y range ymin..ymax.
type plotData struct {
	floor        float64
	colls, shown int
	fwd, rev     plotter.XYs
	summaries    []driftcheck.LaneSummary // the collections' effects with usable pairs
	lo, hi       float64
	ymin, ymax   float64
}

// plotDataOf gathers arm's usable pass deltas and collection effects for lane from d.
func plotDataOf(d *loaded.Receipt, arm, lane string) plotData {
	pd := plotData{floor: d.Analysis.Config.EffectFloorPct}
	lastPass := 0
	var usable []driftcheck.PassDelta
	for _, x := range d.Analysis.Passes {
		if x.Arm != arm || x.Lane != lane {
			continue
		}
		pd.colls = max(pd.colls, x.Collection)
		if x.Usable {
			usable = append(usable, x)
			lastPass = max(lastPass, x.Pass)
		}
	}
	if pd.colls == 0 {
		pd.colls = d.Plan.Protocol.Collections
	}
	// A sequential run may stop well before its last planned pass: show the passes run.
	pd.shown = d.Plan.Protocol.Passes
	if d.Plan.Protocol.Sequential != nil {
		pd.shown = max(lastPass+lastPass%2, 2)
	}
	for _, x := range usable {
		xy := plotter.XY{X: float64((x.Collection-1)*pd.shown + x.Pass), Y: x.DeltaPct}
		if x.Order == driftcheck.OrderReverse {
			pd.rev = append(pd.rev, xy)
		} else {
			pd.fwd = append(pd.fwd, xy)
		}
	}
	pd.lo, pd.hi = 0.5, float64(pd.colls*pd.shown)+0.5
	ymin, ymax := -pd.floor, pd.floor
	grow := func(y float64) { ymin, ymax = min(ymin, y), max(ymax, y) }
	for _, xy := range append(append(plotter.XYs{}, pd.fwd...), pd.rev...) {
		grow(xy.Y)
	}
	for _, s := range d.Analysis.Lanes {
		if s.Arm == arm && s.Lane == lane && s.UsablePairs > 0 {
			pd.summaries = append(pd.summaries, s)
			grow(s.EstimatePct)
			if s.Bounded {
				grow(s.CILowPct)
				grow(s.CIHighPct)
			}
		}
	}
	// Pad the data, and leave a strip at the top for the collections' names.
	pad := (ymax - ymin) * 0.08
	pd.ymin, pd.ymax = ymin-pad, ymax+pad+(ymax-ymin)*0.12
	return pd
}

// floorBand draws the effect floor as a grey band around zero, and the zero line.
func (pd plotData) floorBand(p *plot.Plot, legend *plot.Legend) error {
	band, err := plotter.NewPolygon(plotter.XYs{{X: pd.lo, Y: -pd.floor}, {X: pd.hi, Y: -pd.floor}, {X: pd.hi, Y: pd.floor}, {X: pd.lo, Y: pd.floor}})
	if err != nil {
		return err
	}
	band.Color = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0x40} // translucent: NRGBA
	band.LineStyle.Width = 0
	p.Add(band)
	legend.Add(fmt.Sprintf("effect floor ±%s%%", human.Num(pd.floor)), band)
	zero, err := plotter.NewLine(plotter.XYs{{X: pd.lo, Y: 0}, {X: pd.hi, Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = ruleColor()
	zero.Width = vg.Points(0.5)
	p.Add(zero)
	return nil
}

// effects draws each collection's effect as a dashed line over its passes, with its
// interval as a band where it is bounded.
func (pd plotData) effects(p *plot.Plot, legend *plot.Legend) error {
	var effectLine *plotter.Line
	var intervalBand *plotter.Polygon
	for _, s := range pd.summaries {
		x0 := float64((s.Collection-1)*pd.shown) + 0.5
		x1 := x0 + float64(pd.shown)
		if s.Bounded {
			ib, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: s.CILowPct}, {X: x1, Y: s.CILowPct}, {X: x1, Y: s.CIHighPct}, {X: x0, Y: s.CIHighPct}})
			if err != nil {
				return err
			}
			ib.Color = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x38}
			ib.LineStyle.Width = 0
			p.Add(ib)
			intervalBand = ib
		}
		m, err := plotter.NewLine(plotter.XYs{{X: x0, Y: s.EstimatePct}, {X: x1, Y: s.EstimatePct}})
		if err != nil {
			return err
		}
		m.Color = color.NRGBA{R: 0x1b, G: 0x6e, B: 0x1b, A: 0xff}
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
	return nil
}

// collectionNames names each collection above its passes and separates collections with
// dotted lines.
func (pd plotData) collectionNames(p *plot.Plot, _ *plot.Legend) error {
	var names plotter.XYLabels
	for c := 0; c < pd.colls; c++ {
		names.XYs = append(names.XYs, plotter.XY{X: float64(c*pd.shown) + 0.5 + float64(pd.shown)/2, Y: pd.ymax})
		names.Labels = append(names.Labels, fmt.Sprintf("collection %d", c+1))
		if c == 0 {
			continue
		}
		x := float64(c*pd.shown) + 0.5
		sep, err := plotter.NewLine(plotter.XYs{{X: x, Y: pd.ymin}, {X: x, Y: pd.ymax}})
		if err != nil {
			return err
		}
		sep.Color = ruleColor()
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
		labels.TextStyle[i].Color = ruleColor()
	}
	p.Add(labels)
	return nil
}

// passes draws the forward and reverse passes' deltas as circles and triangles.
func (pd plotData) passes(p *plot.Plot, legend *plot.Legend) error {
	for _, s := range []struct {
		xys   plotter.XYs
		label string
		color color.Color
		shape draw.GlyphDrawer
	}{
		{pd.fwd, "forward pass (base first)", color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}, draw.CircleGlyph{}},
		{pd.rev, "reverse pass (candidates first)", color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}, draw.PyramidGlyph{}},
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
	return nil
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
