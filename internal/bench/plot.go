package bench

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette colours the compared references alike in every plot.
var palette = map[string]color.Color{
	"nvcc":   color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"cublas": color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"copy":   color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"native": color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"go":     color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

func colour(name string, i int) color.Color {
	if c, ok := palette[name]; ok {
		return c
	}
	return plotutil.DarkColors[i%len(plotutil.DarkColors)]
}

// Plot draws the report's plots into dir: gpu-kernels.png (each GPU
// kernel's throughput ratio against nvcc, cuBLAS and the copy bandwidth,
// targets marked), launch.png (launch, graph and session overhead against
// native C, from ingested results) and cpu.png (the CPU executor against
// Go loops by worker count). A plot with nothing to show is not drawn.
func Plot(rep *Report, dir string) error {
	var gpuRes, launchRes, cpuRes []Result
	for _, r := range rep.Results {
		switch {
		case r.Group == "cpu":
			cpuRes = append(cpuRes, r)
		case strings.HasPrefix(r.Group, "gpu") && len(r.Ratios) > 0:
			gpuRes = append(gpuRes, r)
		case len(r.Ratios) > 0:
			launchRes = append(launchRes, r)
		}
	}
	if len(gpuRes) > 0 {
		if err := ratioBars(gpuRes, "GPU kernels: throughput of ours ÷ reference (dashed segments: targets)", filepath.Join(dir, "gpu-kernels.png")); err != nil {
			return err
		}
	}
	if len(launchRes) > 0 {
		if err := ratioBars(launchRes, "Launch and dispatch: native time ÷ ours (1 = parity)", filepath.Join(dir, "launch.png")); err != nil {
			return err
		}
	}
	if len(cpuRes) > 0 {
		return cpuLines(cpuRes, filepath.Join(dir, "cpu.png"))
	}
	return nil
}

// ratioBars draws one group of bars per result, one bar per reference,
// with each target as a marker above its bar.
func ratioBars(rs []Result, title, path string) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "ratio (above 1: ours faster)"
	var refs []string
	for _, r := range rs {
		for _, q := range r.Ratios {
			if !slices.Contains(refs, q.Versus) {
				refs = append(refs, q.Versus)
			}
		}
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		// Benchmark paths wrap at their slashes and before "Versus".
		names[i] = strings.ReplaceAll(strings.ReplaceAll(r.Name, "/", "\n"), "Versus", "\nvs ")
		if r.Shape != "" {
			names[i] += "\n" + r.Shape
		}
	}
	width := vg.Length(max(6, 1.2*float64(len(rs)))) * vg.Inch
	// Bars share 80% of the room a group has (the plot area is about an
	// inch narrower than the image).
	w := (width - vg.Inch) / vg.Length(len(rs)) * 0.8 / vg.Length(len(refs))
	var marks []plot.Plotter
	top := 1.25
	for j, ref := range refs {
		vals := make(plotter.Values, len(rs))
		for i, r := range rs {
			for _, q := range r.Ratios {
				if q.Versus != ref {
					continue
				}
				vals[i] = q.Median
				top = max(top, 1.1*q.Median)
				if q.Target > 0 {
					// The target: a dashed bar-coloured segment across the group.
					t, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.45, Y: q.Target}, {X: float64(i) + 0.45, Y: q.Target}})
					if err != nil {
						return err
					}
					t.Color, t.Width = colour(ref, j), vg.Points(2)
					t.Dashes = []vg.Length{vg.Points(6), vg.Points(2)}
					marks = append(marks, t)
				}
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		b.Offset = vg.Length(float64(j)-float64(len(refs)-1)/2) * w
		b.Color = colour(ref, j)
		b.LineStyle.Width = 0
		p.Add(b)
		p.Legend.Add("vs "+ref, b)
	}
	p.Add(marks...)
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(rs)) - 0.5, Y: 1}})
	if err != nil {
		return err
	}
	one.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
	p.Add(one)
	p.NominalX(names...)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min = 0
	p.Y.Max = top
	p.Add(plotter.NewGrid())
	return p.Save(width, 5*vg.Inch, path)
}

// cpuLines draws, per CPU kernel, the executor's throughput relative to
// the Go loop at each worker count.
func cpuLines(rs []Result, path string) error {
	p := plot.New()
	p.Title.Text = "CPU executor: Go loop time ÷ executor time, by worker count"
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "ratio (1 = as fast as the Go loop)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	series := map[string]plotter.XYs{}
	var order []string
	for _, r := range rs {
		name, workers, ok := strings.Cut(r.Name, "/")
		p, err := strconv.Atoi(workers)
		if !ok || err != nil || len(r.Ratios) == 0 {
			return fmt.Errorf("cpu result %q is not kernel/workers", r.Name)
		}
		if _, seen := series[name]; !seen {
			order = append(order, name)
		}
		series[name] = append(series[name], plotter.XY{X: float64(p), Y: r.Ratios[0].Median})
	}
	for i, name := range order {
		l, pts, err := plotter.NewLinePoints(series[name])
		if err != nil {
			return err
		}
		l.Color = colour(name, i+1)
		pts.Color = l.Color
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
	}
	p.Y.Min = 0
	p.Y.Max = 1.3
	p.Add(plotter.NewGrid())
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
