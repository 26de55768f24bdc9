package report

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
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

// Plot writes the SVG plot of one lane for one candidate arm to buf; see WritePlots.
func Plot(buf *bytes.Buffer, d *Data, arm, lane string) error {
	var (
		forwardColor = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
		reverseColor = color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
		bandColor    = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0x40} // translucent: NRGBA
		ruleColor    = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	)
	passes := d.Plan.Protocol.Passes
	floor := d.Analysis.Config.EffectFloorPct
	var fwd, rev plotter.XYs
	maxColl := 0
	for _, pd := range d.Analysis.Passes {
		if pd.Arm != arm || pd.Lane != lane {
			continue
		}
		maxColl = max(maxColl, pd.Collection)
		if !pd.Usable {
			continue
		}
		xy := plotter.XY{X: float64((pd.Collection-1)*passes + pd.Pass), Y: pd.DeltaPct}
		if pd.Order == driftcheck.OrderReverse {
			rev = append(rev, xy)
		} else {
			fwd = append(fwd, xy)
		}
	}
	if maxColl == 0 {
		maxColl = d.Plan.Protocol.Collections
	}
	n := float64(maxColl * passes)
	lo, hi := 0.5, n+0.5
	ymin, ymax := -floor, floor
	for _, xy := range append(append(plotter.XYs{}, fwd...), rev...) {
		ymin, ymax = min(ymin, xy.Y), max(ymax, xy.Y)
	}
	// Pad the data, and keep the top third clear for the legend.
	pad := (ymax - ymin) * 0.08
	ymin, ymax = ymin-pad, ymax+pad+(ymax-ymin)*0.5

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s vs %s, delta per pass", lane, arm, d.Analysis.Base)
	p.Title.TextStyle.Font = plotFont(12)
	p.X.Label.Text = "pass (number within its collection)"
	p.Y.Label.Text = "delta % (negative: candidate better)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotFont(10)
		a.Tick.Label.Font = plotFont(9)
	}
	p.Legend.TextStyle.Font = plotFont(9)
	p.Legend.Top = true
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = ymin, ymax

	var ticks []plot.Tick
	for c := 0; c < maxColl; c++ {
		for k := 1; k <= passes; k++ {
			ticks = append(ticks, plot.Tick{Value: float64(c*passes + k), Label: fmt.Sprint(k)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)

	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: -floor}, {X: hi, Y: -floor}, {X: hi, Y: floor}, {X: lo, Y: floor}})
	if err != nil {
		return err
	}
	band.Color = bandColor
	band.LineStyle.Width = 0
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("effect floor ±%g%%", floor), band)

	zero, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = ruleColor
	zero.Width = vg.Points(0.5)
	p.Add(zero)

	var medianLine *plotter.Line
	for _, s := range d.Analysis.Lanes {
		if s.Arm != arm || s.Lane != lane || s.Passes == 0 {
			continue
		}
		x0 := float64((s.Collection-1)*passes) + 0.5
		m, err := plotter.NewLine(plotter.XYs{{X: x0, Y: s.MedianDeltaPct}, {X: x0 + float64(passes), Y: s.MedianDeltaPct}})
		if err != nil {
			return err
		}
		m.Color = ruleColor
		m.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(m)
		medianLine = m
	}
	if medianLine != nil {
		p.Legend.Add("collection median", medianLine)
	}
	for c := 1; c < maxColl; c++ {
		x := float64(c*passes) + 0.5
		sep, err := plotter.NewLine(plotter.XYs{{X: x, Y: ymin}, {X: x, Y: ymax}})
		if err != nil {
			return err
		}
		sep.Color = ruleColor
		sep.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(sep)
	}
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
		p.Legend.Add(s.label, sc)
	}
	w, err := p.WriterTo(6*vg.Inch, 3.5*vg.Inch, "svg")
	if err != nil {
		return err
	}
	_, err = w.WriteTo(buf)
	return err
}
