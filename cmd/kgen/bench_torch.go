package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// torchCheck is what the PyTorch check of one instance compares: kgen's
// outputs on the inputs written for PyTorch, and where PyTorch's go.
type torchCheck struct {
	kgen []*tensor.Tensor
	tols []kgrt.Tolerance
}

// torchRtolFactor widens the interpreter's tolerances for the PyTorch
// check: both sides round (the interpreter does not), in different orders.
const torchRtolFactor = 2

// baselineTask is p's PyTorch task (path is p's spec file). It also runs p once on fresh inputs,
// which it writes for the PyTorch program to run on (the check).
func (b *bencher) baselineTask(ctx context.Context, p *lower.Plan, path, module string, x *kgrt.Executor, row *benchRow) kgrt.BaselineTask {
	t := baselineTask(p)
	t.Module = module
	if ref := strings.TrimSuffix(path, filepath.Ext(path)) + ".torch.py"; fileExists(ref) {
		if abs, err := filepath.Abs(ref); err == nil {
			t.Reference = abs
		}
	}
	inputs, err := interp.RandomInputs(p.Source, p.Env, tensor.Normal, 2)
	if err != nil {
		row.TorchCheck = "not checked: " + err.Error()
		return t
	}
	outs, err := x.Execute(ctx, p, p.Env, inputs)
	if err != nil {
		row.TorchCheck = "not checked: kgen's kernels failed: " + err.Error()
		b.g.runner.RestartAfter(err)
		return t
	}
	c := &torchCheck{kgen: outs, tols: kgrt.Tolerances(p.Source, p.Env)}
	for i, in := range inputs {
		path := filepath.Join(b.checks, fmt.Sprintf("%s.in%d.bin", p.Name, i))
		if err := os.WriteFile(path, in.Data, 0o644); err != nil {
			row.TorchCheck = "not checked: " + err.Error()
			return t
		}
		t.CheckInputs = append(t.CheckInputs, path)
	}
	for i := range outs {
		path := filepath.Join(b.checks, fmt.Sprintf("%s.out%d.bin", p.Name, i))
		t.CheckOutputs = append(t.CheckOutputs, path)
	}
	row.check = c
	return t
}

// addBaseline records PyTorch's timings and checks kgen's outputs against
// the emitted program's, which it wrote to outputs.
func (r *benchRow) addBaseline(br kgrt.BaselineResult, outputs []string) {
	r.Torch = &br
	for m, t := range br.Timings {
		if t != nil && r.Time.MedianUS > 0 {
			if r.Speedups == nil {
				r.Speedups = map[string]float64{}
			}
			r.Speedups[m] = t.MedianUS / r.Time.MedianUS
		}
	}
	c := r.check
	r.check = nil
	switch {
	case c == nil:
		return
	case br.CheckError != "":
		r.TorchCheck = "not checked: the PyTorch program failed: " + br.CheckError
		return
	}
	worst := 0.0
	for i, want := range c.kgen {
		if i >= len(outputs) {
			r.TorchCheck = "not checked: PyTorch's task has no output " + strconv.Itoa(i)
			return
		}
		data, err := os.ReadFile(outputs[i])
		if err != nil {
			r.TorchCheck = "not checked: " + err.Error()
			return
		}
		got := &tensor.Tensor{DType: want.DType, Shape: want.Shape, Data: data}
		tol := c.tols[i]
		tol.Rtol *= torchRtolFactor
		// kgen's output is checked with PyTorch's as the reference.
		maxErr, bad, err := kgrt.Compare(want, got, tol)
		if err != nil {
			r.TorchCheck = "not checked: " + err.Error()
			return
		}
		if bad != nil {
			r.TorchCheck = fmt.Sprintf("disagrees with PyTorch on output %d: %v", i, bad)
			return
		}
		worst = max(worst, maxErr)
	}
	r.TorchCheck = "ok"
	r.TorchMaxError = worst
}

// correct reports whether r was checked and right: against kgen's own
// reference, and against PyTorch when that check ran.
func (r benchRow) correct() bool {
	return r.Error == "" && !strings.HasPrefix(r.TorchCheck, "disagrees")
}

// fastP is KernelBench's fast_p for one baseline: the fraction of all
// instances that are correct and more than P times faster. For
// max-autotune, which only matrix products are timed with, "all" is the
// matrix products (rows marked Contraction; in reports written before rows
// recorded it, the instances it timed).
type fastP struct {
	// Target is set in reports of several targets: fast_p is then
	// counted for each target over its own rows.
	Target   string  `json:"target,omitempty"`
	Baseline string  `json:"baseline"`
	P        float64 `json:"p"`
	Count    int     `json:"count"`
	Total    int     `json:"total"`
	Fraction float64 `json:"fraction"`
}

var fastPThresholds = []float64{0, 1, 1.5, 2}

func fastPs(rows []benchRow, modes []string) []fastP {
	var targets []string // in the rows' order; "" in a report of one
	for _, r := range rows {
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
	}
	var out []fastP
	for _, tgt := range targets {
		for _, m := range modes {
			for _, p := range fastPThresholds {
				out = append(out, fastPOf(rows, tgt, m, p))
			}
		}
	}
	return out
}

// fastPOf is fast_p over the rows of target tgt against baseline m.
func fastPOf(rows []benchRow, tgt, m string, p float64) fastP {
	f := fastP{Target: tgt, Baseline: m, P: p}
	for _, r := range rows {
		if r.Target != tgt || (m == "max-autotune" && !r.Contraction && (r.Torch == nil || r.Torch.Timings[m] == nil)) {
			continue
		}
		f.Total++
		// fast_0 is the fraction correct: a correct kernel that PyTorch
		// could not time still counts.
		if r.correct() && (p == 0 || r.Speedups[m] > p) {
			f.Count++
		}
	}
	if f.Total > 0 {
		f.Fraction = float64(f.Count) / float64(f.Total)
	}
	return f
}

// label names f's baseline, and its target in a report of several.
func (f fastP) label() string {
	if f.Target != "" {
		return "vs " + f.Baseline + " on " + f.Target
	}
	return "vs " + f.Baseline
}

// fastPLines groups rep's fast_p by target and baseline, in the report's
// order: one line of the table each, every threshold's figure in it.
func (rep *benchReport) fastPLines() [][]fastP {
	var lines [][]fastP
	for _, f := range rep.FastP {
		if n := len(lines); n > 0 && lines[n-1][0].label() == f.label() {
			lines[n-1] = append(lines[n-1], f)
		} else {
			lines = append(lines, []fastP{f})
		}
	}
	return lines
}

func (rep *benchReport) fastPTable(w io.Writer) {
	if len(rep.FastP) == 0 {
		return
	}
	fmt.Fprintf(w, "| fast_p | %s |\n| --- |%s\n", strings.Join(pHeads(), " | "), strings.Repeat(" --- |", len(fastPThresholds)))
	for _, line := range rep.fastPLines() {
		var cells []string
		for _, f := range line {
			cells = append(cells, fmt.Sprintf("%.2f (%d/%d)", f.Fraction, f.Count, f.Total))
		}
		fmt.Fprintf(w, "| %s | %s |\n", line[0].label(), strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func pHeads() []string {
	var h []string
	for _, p := range fastPThresholds {
		h = append(h, fmt.Sprintf("p = %g", p))
	}
	return h
}

// html writes a self-contained report: the header, fast_p, the table, and
// two plots drawn as inline SVG: kgen's speedup over each baseline per
// instance (log scale), and a roofline (achieved operations per second
// against arithmetic intensity, under the measured copy bandwidth).
func (rep *benchReport) html(w io.Writer) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kgen bench: %s</title>\n", html.EscapeString(rep.Target))
	fmt.Fprint(w, "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child{text-align:left}</style></head><body>\n")
	fmt.Fprintf(w, "<h1>kgen bench, %s</h1>\n<p>%s</p>\n", html.EscapeString(rep.Target), html.EscapeString(rep.header()))
	if lines := rep.partLines(); len(lines) > 0 {
		fmt.Fprint(w, "<ul>\n")
		for _, l := range lines {
			fmt.Fprintf(w, "<li>%s</li>\n", html.EscapeString(l))
		}
		fmt.Fprint(w, "</ul>\n")
	}
	fmt.Fprintf(w, "<p>Protocol: %s.</p>\n", html.EscapeString(rep.Protocol))
	if len(rep.FastP) > 0 {
		fmt.Fprint(w, "<h2>fast_p</h2><table><tr><th></th>")
		for _, h := range pHeads() {
			fmt.Fprintf(w, "<th>%s</th>", h)
		}
		fmt.Fprint(w, "</tr>\n")
		for _, line := range rep.fastPLines() {
			fmt.Fprintf(w, "<tr><td>%s</td>", html.EscapeString(line[0].label()))
			for _, f := range line {
				fmt.Fprintf(w, "<td>%.2f (%d/%d)</td>", f.Fraction, f.Count, f.Total)
			}
			fmt.Fprint(w, "</tr>\n")
		}
		fmt.Fprint(w, "</table>\n")
		fmt.Fprint(w, "<h2>Speedup over PyTorch</h2>\n")
		rep.speedupSVG(w)
	}
	fmt.Fprint(w, "<h2>Roofline</h2>\n")
	rep.rooflineSVG(w)
	fmt.Fprint(w, "<h2>Instances</h2><table><tr>")
	cols := rep.columns()
	for _, c := range cols {
		fmt.Fprintf(w, "<th>%s</th>", html.EscapeString(c))
	}
	fmt.Fprint(w, "</tr>\n")
	for _, r := range rep.Rows {
		fmt.Fprint(w, "<tr>")
		for _, c := range rep.cells(r) {
			fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(c))
		}
		fmt.Fprint(w, "</tr>\n")
	}
	fmt.Fprint(w, "</table>\n</body></html>\n")
}

var modeColors = map[string]string{"eager": "#4878d0", "compile": "#ee854a", "max-autotune": "#6acc64"}

// speedupSVG draws one bar per instance and baseline on a log2 axis
// centred on 1x.
func (rep *benchReport) speedupSVG(w io.Writer) {
	var rows []benchRow
	for _, r := range rep.Rows {
		if len(r.Speedups) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	const left, barH, width = 220, 7, 520
	lo, hi := -3.0, 3.0 // log2 of 1/8x .. 8x
	for _, r := range rows {
		for _, s := range r.Speedups {
			if s > 0 {
				lo, hi = min(lo, math.Floor(math.Log2(s))), max(hi, math.Ceil(math.Log2(s)))
			}
		}
	}
	x := func(s float64) float64 { return left + (math.Log2(s)-lo)/(hi-lo)*width }
	rowH := barH*len(rep.Baselines) + 4
	height := rowH*len(rows) + 40
	fmt.Fprintf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"10\">\n", left+width+20, height)
	for e := lo; e <= hi; e++ {
		fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gx</text>\n",
			x(math.Exp2(e)), x(math.Exp2(e)), height-25, map[bool]string{true: "#000", false: "#ddd"}[e == 0], x(math.Exp2(e)), height-12, math.Exp2(e))
	}
	for i, r := range rows {
		y := i * rowH
		fmt.Fprintf(w, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left-4, y+rowH/2+3, html.EscapeString(r.label()))
		for j, m := range rep.Baselines {
			s := r.Speedups[m]
			if s <= 0 {
				continue
			}
			x0, x1 := x(1), x(s)
			fmt.Fprintf(w, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s vs %s: %.2fx</title></rect>\n",
				min(x0, x1), y+j*barH+2, math.Abs(x1-x0), barH-1, modeColors[m], html.EscapeString(r.Name), m, s)
		}
	}
	for j, m := range rep.Baselines {
		fmt.Fprintf(w, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"8\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">vs %s</text>\n", left+j*90, height-8, modeColors[m], left+j*90+14, height-1, m)
	}
	fmt.Fprint(w, "</svg>\n")
}

// rooflineSVG plots each instance at its arithmetic intensity (operations
// per byte moved) and achieved operations per second, log-log, with the
// memory roof of the copy bandwidth measured in this run and the compute
// roofs of the matrix units' peaks that its products need. Operations are
// 2 per multiply-add for matrix products, and the interpreter's count of
// scalar operations (ir.Work) for the rest.
func (rep *benchReport) rooflineSVG(w io.Writer) {
	type point struct {
		name     string
		ai, perf float64 // ops/byte, ops/s
	}
	var pts []point
	for _, r := range rep.Rows {
		if r.Error != "" || r.Time.MedianUS <= 0 || r.Bytes == 0 || r.Ops <= 0 {
			continue
		}
		pts = append(pts, point{r.label(), r.Ops / float64(r.Bytes), r.Ops / (r.Time.MedianUS * 1e-6)})
	}
	if len(pts) == 0 || rep.CopyGBps <= 0 {
		return
	}
	const left, bottom, width, height = 60, 30, 560, 320
	aiLo, aiHi, pLo, pHi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		aiLo, aiHi = min(aiLo, p.ai), max(aiHi, p.ai)
		pLo, pHi = min(pLo, p.perf), max(pHi, p.perf)
	}
	aiLo, aiHi = math.Floor(math.Log10(aiLo)), math.Ceil(math.Log10(aiHi))
	if aiHi == aiLo {
		aiHi++
	}
	// The compute roofs: the peak of each unit a row's products need.
	type roof struct {
		unit string
		rate float64 // ops/s
	}
	var roofs []roof
	for _, r := range rep.Rows {
		if peak := kgrt.PeakOf(rep.Peaks, r.Unit); peak > 0 && r.Error == "" && !slices.ContainsFunc(roofs, func(o roof) bool { return o.unit == r.Unit }) {
			roofs = append(roofs, roof{r.Unit, peak * 1e12})
			pHi = max(pHi, peak*1e12)
		}
	}
	pLo, pHi = math.Floor(math.Log10(pLo)), math.Ceil(math.Log10(pHi))+1
	x := func(ai float64) float64 { return left + (math.Log10(ai)-aiLo)/(aiHi-aiLo)*width }
	y := func(p float64) float64 { return height - (math.Log10(p)-pLo)/(pHi-pLo)*height }
	fmt.Fprintf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"10\">\n", left+width+20, height+bottom+10)
	for e := aiLo; e <= aiHi; e++ {
		fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%g</text>\n", x(math.Pow(10, e)), x(math.Pow(10, e)), height, x(math.Pow(10, e)), height+14, e)
	}
	for e := pLo; e <= pHi; e++ {
		fmt.Fprintf(w, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%g</text>\n", left, y(math.Pow(10, e)), left+width, y(math.Pow(10, e)), left-4, y(math.Pow(10, e))+3, e)
	}
	// The memory roof: copy bandwidth times intensity.
	a0, a1 := math.Pow(10, aiLo), math.Pow(10, aiHi)
	fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c44\" stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"12\" fill=\"#c44\">copy bandwidth %.0f GB/s</text>\n",
		x(a0), clampY(y(rep.CopyGBps*1e9*a0), height), x(a1), clampY(y(rep.CopyGBps*1e9*a1), height), left+8, rep.CopyGBps)
	for i, rf := range roofs {
		fmt.Fprintf(w, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#484\" stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#484\">%s peak %.0f TFLOP/s</text>\n",
			left, y(rf.rate), left+width, y(rf.rate), left+width, y(rf.rate)-3-10*float64(i%2), rf.unit, rf.rate/1e12)
	}
	for _, p := range pts {
		fmt.Fprintf(w, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#4878d0\"><title>%s: %.3g ops/byte, %.3g ops/s</title></circle>\n", x(p.ai), y(p.perf), html.EscapeString(p.name), p.ai, p.perf)
	}
	fmt.Fprintf(w, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">operations per byte</text>\n", left+width/2, height+bottom)
	fmt.Fprint(w, "</svg>\n")
	fmt.Fprint(w, "<p>Vertical axis: operations per second. Operations are 2 per multiply-add for matrix products and the interpreter's count of scalar operations otherwise; bytes are each input read and each output written once.</p>\n")
}

func clampY(v float64, h int) float64 { return max(0, min(v, float64(h))) }

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
