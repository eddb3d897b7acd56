// Package chart draws the benchmarks' grouped bar charts as SVG, from their
// summary lines (package summary), with the standard library alone: the
// charts of docs/benchmarks.md are written by the same code that any run
// can use, and the same lines always give the same bytes.
package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Chart is one grouped bar chart: a group per size (W, N), a bar per
// series (a way) within it.
type Chart struct {
	Title  string
	YLabel string
	Series []string
	Groups []Group
}

// Group is the bars of one size, in the order of Chart.Series; a series
// without a measurement at this size has no bar.
type Group struct {
	Label  string
	Values map[string]float64
}

// The geometry, in SVG user units.
const (
	width, height            = 760, 380
	left, right, top, bottom = 64, 16, 56, 56
	barGap                   = 4
)

// Colors of the series, in order (distinguishable for the common colour
// vision deficiencies).
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9"}

// SVG renders the chart. Every bar is a <rect> with a <title> naming its
// group, series and value, so that the numbers can be read off the file.
func (c Chart) SVG() []byte {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	p(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	p(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(c.Title))

	// Legend, on one line under the title.
	x := left
	for i, s := range c.Series {
		p(`<rect x="%d" y="32" width="12" height="12" fill="%s"/>`+"\n", x, palette[i%len(palette)])
		p(`<text x="%d" y="42">%s</text>`+"\n", x+16, html.EscapeString(s))
		x += 16 + 7*len(s) + 24
	}

	max, step := axis(c.maxValue())
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	y := func(v float64) float64 { return float64(top) + plotH*(1-v/max) }
	for v := 0.0; v <= max+step/2; v += step {
		p(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#dddddd"/>`+"\n", left, num(y(v)), width-right, num(y(v)))
		p(`<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", left-6, num(y(v)+4), num(v))
	}
	p(`<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", num(float64(top)+plotH/2), html.EscapeString(c.YLabel))

	groupW := plotW / float64(max1(len(c.Groups)))
	barW := (groupW*0.8 - barGap*float64(len(c.Series)-1)) / float64(max1(len(c.Series)))
	for g, group := range c.Groups {
		x0 := float64(left) + groupW*float64(g) + groupW*0.1
		for i, s := range c.Series {
			v, ok := group.Values[s]
			if !ok {
				continue
			}
			bx := x0 + float64(i)*(barW+barGap)
			p(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
				num(bx), num(y(v)), num(barW), num(y(0)-y(v)), palette[i%len(palette)],
				html.EscapeString(group.Label), html.EscapeString(s), num(v))
			p(`<text x="%s" y="%s" text-anchor="middle" font-size="10">%s</text>`+"\n", num(bx+barW/2), num(y(v)-3), num(v))
		}
		p(`<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num(x0+groupW*0.4), height-bottom+18, html.EscapeString(group.Label))
	}
	p(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333333"/>`+"\n", left, num(y(0)), width-right, num(y(0)))
	p("</svg>\n")
	return []byte(b.String())
}

func (c Chart) maxValue() float64 {
	m := 0.0
	for _, g := range c.Groups {
		for _, v := range g.Values {
			m = math.Max(m, v)
		}
	}
	return m
}

// axis is the top of the y axis and the step of its grid: a step of 1, 2
// or 5 times a power of ten, about five lines.
func axis(max float64) (top, step float64) {
	if max <= 0 {
		return 1, 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return math.Ceil(max/step) * step, step
}

// num formats a coordinate or a value: at most two decimals, no trailing
// zeros, so that the output is the same on every platform.
func num(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func max1(n int) int { return max(n, 1) }
