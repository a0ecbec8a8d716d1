package main

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The plot: one log-log panel per scale operation, p50 latency against the
// number of files, one line per backend, and a legend below.
const (
	panelW, panelH = 440, 340
	padLeft        = 64 // room for the y tick labels
	padRight       = 16
	padTop         = 34 // room for the title
	padBottom      = 46 // room for the x tick labels and the axis name
	legendH        = 44
	charW          = 7 // basicfont.Face7x13
)

// lineColors gives each backend of allTargets its color, in order.
var lineColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var (
	black = color.RGBA{0, 0, 0, 0xff}
	grey  = color.RGBA{0x88, 0x88, 0x88, 0xff}
	grid  = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
)

func colorOf(backend string) color.RGBA {
	if i := slices.Index(allTargets, backend); i >= 0 && i < len(lineColors) {
		return lineColors[i]
	}
	return black
}

// plot draws the scale results as a PNG.
func (r *report) plot() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, len(scaleOps)*panelW, panelH+legendH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	var backends []string
	for _, s := range r.scale {
		if !slices.Contains(backends, s.backend) {
			backends = append(backends, s.backend)
		}
	}
	for k, op := range scaleOps {
		r.panel(img, k*panelW, op, backends)
	}
	// The legend: a short line and the name of each backend.
	x, y := padLeft, panelH+legendH/2
	for _, b := range backends {
		c := colorOf(b)
		thickLine(img, x, y, x+24, y, c)
		text(img, x+30, y+4, b, black)
		x += 30 + charW*len(b) + 26
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// panel draws one operation's chart with its left edge at x0.
func (r *report) panel(img *image.RGBA, x0 int, op string, backends []string) {
	left, right := x0+padLeft, x0+panelW-padRight
	top, bottom := padTop, panelH-padBottom
	title := "p50 of " + op
	text(img, x0+(panelW-charW*len(title))/2, 20, title, black)

	// Ranges, in log10: the sizes measured, and whole decades of seconds
	// around the latencies.
	var sizes []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range r.scale {
		if s.op != op || s.err != nil || s.handler.p50 <= 0 {
			continue
		}
		if !slices.Contains(sizes, s.files) {
			sizes = append(sizes, s.files)
		}
		v := math.Log10(s.handler.p50.Seconds())
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(sizes) == 0 {
		text(img, x0+padLeft, panelH/2, "no data", grey)
		return
	}
	slices.Sort(sizes)
	x1, x2 := math.Log10(float64(sizes[0])), math.Log10(float64(sizes[len(sizes)-1]))
	if x2-x1 < 0.1 {
		x1, x2 = x1-0.5, x2+0.5
	}
	y1, y2 := math.Floor(lo), math.Ceil(hi)
	if y2-y1 < 1 {
		y2 = y1 + 1
	}
	px := func(files int) int {
		return left + int(math.Round((math.Log10(float64(files))-x1)/(x2-x1)*float64(right-left)))
	}
	py := func(d time.Duration) int {
		return bottom - int(math.Round((math.Log10(d.Seconds())-y1)/(y2-y1)*float64(bottom-top)))
	}

	// Grid and ticks: each size measured on x, each decade on y.
	for _, n := range sizes {
		x := px(n)
		line(img, x, top, x, bottom, grid)
		label := withCommas(n)
		text(img, x-charW*len(label)/2, bottom+16, label, black)
	}
	for e := y1; e <= y2; e++ {
		d := time.Duration(math.Pow(10, e) * float64(time.Second))
		y := py(d)
		line(img, left, y, right, y, grid)
		label := decade(e)
		text(img, left-6-charW*len(label), y+4, label, black)
	}
	line(img, left, top, left, bottom, black)
	line(img, left, bottom, right, bottom, black)
	axis := "files in the store"
	text(img, left+(right-left-charW*len(axis))/2, bottom+36, axis, grey)

	for _, b := range backends {
		c := colorOf(b)
		px0, py0, have := 0, 0, false
		for _, n := range sizes {
			s := r.scaleAt(b, op, n)
			if s == nil || s.err != nil || s.handler.p50 <= 0 {
				have = false
				continue
			}
			x, y := px(n), py(s.handler.p50)
			if have {
				thickLine(img, px0, py0, x, y, c)
			}
			square(img, x, y, c)
			px0, py0, have = x, y, true
		}
	}
}

// decade labels the latency 10^e seconds in ASCII (the font has no µ).
func decade(e float64) string {
	units := []string{"ns", "us", "ms", "s"}
	k := int(e) + 9 // the exponent in nanoseconds
	if k < 0 || k/3 >= len(units) {
		return "1e" + strconv.Itoa(int(e)) + " s"
	}
	return "1" + strings.Repeat("0", k%3) + " " + units[k/3]
}

// withCommas formats n with thousands separators.
func withCommas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// line draws a one-pixel line from (x0, y0) to (x1, y1) (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

// thickLine draws a line three pixels wide.
func thickLine(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	for d := -1; d <= 1; d++ {
		if abs(x1-x0) >= abs(y1-y0) {
			line(img, x0, y0+d, x1, y1+d, c)
		} else {
			line(img, x0+d, y0, x1+d, y1, c)
		}
	}
}

// square marks a data point.
func square(img *image.RGBA, x, y int, c color.RGBA) {
	draw.Draw(img, image.Rect(x-3, y-3, x+4, y+4), image.NewUniform(c), image.Point{}, draw.Src)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
