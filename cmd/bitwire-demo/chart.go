package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// The -chart file: a hand-written SVG line chart of the kbit/s per client
// of the three encodings, second by second. The y axis is logarithmic: the
// encodings differ by an order of magnitude and more, and on a log scale
// the gap between two lines is their ratio.

const (
	chartW, chartH              = 900, 500
	plotL, plotR, plotT, plotB  = 80, 700, 60, 430 // plot area
	legendX                     = 720
	colNaive, colFull, colDelta = "#d62728", "#ff7f0e", "#1f77b4"
	fontAttrs                   = `font-family="sans-serif" font-size="12" fill="#222"`
)

func writeChart(w io.Writer, s *Summary) error {
	var b bytes.Buffer
	esc := func(v string) string {
		var e strings.Builder
		xml.EscapeText(&e, []byte(v))
		return e.String()
	}
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	c := s.Config
	title := fmt.Sprintf("bitwire-demo: kbit/s per client; %d clients, %d crates, %d Hz", c.Clients, c.Crates, c.Rate)
	if c.Loss > 0 {
		title += fmt.Sprintf(", loss %g%%", 100*c.Loss)
	}
	if c.Latency != "" && c.Latency != "0s" {
		title += ", latency " + c.Latency
		if c.Jitter != "" && c.Jitter != "0s" {
			title += " ±" + c.Jitter
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="30" font-family="sans-serif" font-size="16" font-weight="bold" fill="#222">%s</text>`+"\n", plotL, esc(title))

	// Scales: x from 0 to the last second, y logarithmic over whole decades.
	secs := max(len(s.Series), 1)
	lo, hi := math.Inf(1), 0.0
	for _, p := range s.Series {
		for _, v := range []float64{p.Naive, p.Full, p.Delta} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	dLo, dHi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dHi == dLo {
		dHi++
	}
	x := func(sec float64) float64 { return plotL + (plotR-plotL)*sec/float64(secs) }
	y := func(v float64) float64 {
		v = math.Max(v, math.Pow(10, dLo))
		return plotB - (plotB-plotT)*(math.Log10(v)-dLo)/(dHi-dLo)
	}

	// Grid and y labels: 1, 2, 5 of every decade.
	for d := dLo; d <= dHi; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > dHi+1e-9 {
				break
			}
			yy := y(v)
			stroke, width := "#e4e4e4", 1
			if m == 1 {
				stroke = "#c8c8c8"
			}
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="%d"/>`+"\n", plotL, yy, plotR, yy, stroke, width)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" %s>%s</text>`+"\n", plotL-8, yy+4, fontAttrs, esc(kbpsLabel(v)))
		}
	}
	// X ticks: about ten.
	step := max(1, niceStep(float64(secs)/10))
	for t := 0; t <= secs; t += step {
		xx := x(float64(t))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222"/>`+"\n", xx, plotB, xx, plotB+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" %s>%d</text>`+"\n", xx, plotB+20, fontAttrs, t)
	}
	// Axes and their titles.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#222"/>`+"\n", plotL, plotT, plotL, plotB)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#222"/>`+"\n", plotL, plotB, plotR, plotB)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" %s>time (simulated seconds)</text>`+"\n", (plotL+plotR)/2, plotB+45, fontAttrs)
	fmt.Fprintf(&b, `<text transform="translate(22 %d) rotate(-90)" text-anchor="middle" %s>kbit/s per client (log scale)</text>`+"\n", (plotT+plotB)/2, fontAttrs)

	// The lines: one point per second, at its middle.
	series := []struct {
		name, color string
		at          func(SecondSummary) float64
		mean        float64
	}{
		{"naive binary", colNaive, func(p SecondSummary) float64 { return p.Naive }, s.Encodings[0].KbpsPerClient},
		{"bitwire full", colFull, func(p SecondSummary) float64 { return p.Full }, s.Encodings[1].KbpsPerClient},
		{"bitwire delta", colDelta, func(p SecondSummary) float64 { return p.Delta }, s.Encodings[2].KbpsPerClient},
	}
	for _, sr := range series {
		var pts []string
		for i, p := range s.Series {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(sr.at(p))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" points="%s"/>`+"\n", sr.color, strings.Join(pts, " "))
		for i, p := range s.Series {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", x(float64(i)+0.5), y(sr.at(p)), sr.color)
		}
	}

	// Legend, with each encoding's mean over the run.
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-family="sans-serif" font-size="12" font-weight="bold" fill="#222">mean over the run</text>`+"\n", legendX, plotT+4)
	for i, sr := range series {
		yy := plotT + 30 + i*40
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", legendX, yy, legendX+24, yy, sr.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%s</text>`+"\n", legendX+32, yy+4, fontAttrs, esc(sr.name))
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%.1f kbit/s</text>`+"\n", legendX+32, yy+20, fontAttrs, sr.mean)
	}
	if s.DeltaVsNaive > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>delta: %.1f× below naive</text>`+"\n", legendX, plotT+150, fontAttrs, s.DeltaVsNaive)
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%.1f× below full</text>`+"\n", legendX+40, plotT+166, fontAttrs, s.DeltaVsFull)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s>desyncs: %d</text>`+"\n", legendX, plotT+196, fontAttrs, s.Desyncs)
	fmt.Fprintf(&b, "</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// kbpsLabel formats a grid value: 50, 200, 1k, 2k, 10k.
func kbpsLabel(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%gk", v/1000)
	}
	return fmt.Sprintf("%g", v)
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) int {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return int(m * p)
		}
	}
	return int(10 * p)
}
