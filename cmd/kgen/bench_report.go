package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	kgrt "kgen.dev/kgen/runtime"
)

// The report's text: its head, the table's columns and cells, and the
// terminal and markdown forms (bench_torch.go draws the HTML).

func (r benchRow) summary() string {
	if r.Error != "" {
		return r.Error
	}
	s := fmt.Sprintf("%.2f us (p20 %.2f, p80 %.2f%s), %.0f GB/s", r.Time.MedianUS, r.Time.P20US, r.Time.P80US, graphNote(r.Time.Batch, ", "), r.GBps)
	if r.TFLOPs > 0 {
		s += fmt.Sprintf(", %.1f TFLOP/s", r.TFLOPs)
	}
	switch {
	case r.SizeCopy != nil:
		s += fmt.Sprintf("; a copy of its size %.2f us (%.0f%%)", r.SizeCopy.MedianUS, 100*r.SizeCopyFrac)
	case r.SizeCopyError != "":
		s += "; a copy of its size failed: " + r.SizeCopyError
	}
	return s
}

func (rep *benchReport) header() string {
	if len(rep.Parts) > 0 {
		return fmt.Sprintf("%s, %d runs of kgen bench merged (kgen bench --merge), the first at %s; each row as its run measured it", rep.GPU, len(rep.Parts), rep.Date)
	}
	s := fmt.Sprintf("%s, %s, CUDA driver %d.%d, %s", rep.Date, rep.GPU, rep.Driver/1000, rep.Driver%1000/10, rep.Toolchain)
	if rep.Torch != "" {
		s += ", PyTorch " + rep.Torch
	}
	return s + fmt.Sprintf("; device-to-device copy %.0f GB/s (read + write)", rep.CopyGBps) + peaksText(rep.Peaks, rep.PeakNote)
}

// graphNote marks a time measured as CUDA graphs of batch runs (the
// protocol's batching of runs under 20 us), after sep; "" for single
// launches. Each run of such a graph follows its own L2 flush, whose time
// is measured apart and taken off, so the time compares with a single
// launch's, less the host's launch latency. (Until the tenth session
// one flush came before the batch, and a run whose data fits in the L2
// read it from there after the first: ResNet's global average pool, 25
// MiB, 12.5 us as graphs of 3, 20.6 us single,
// testsuite/results/2026-11-26-h100-s10-rows/.)
func graphNote(batch int, sep string) string {
	if batch <= 0 {
		return ""
	}
	return fmt.Sprintf("%sgraph x%d", sep, batch)
}

// peaksText lists the matrix units' peaks, each unit's best
// instruction, for a report's head.
func peaksText(peaks []kgrt.Peak, note string) string {
	if len(peaks) == 0 {
		if note != "" {
			return "; matrix peaks not measured: " + note
		}
		return ""
	}
	var units []string
	for _, p := range peaks {
		if kgrt.PeakOf(peaks, p.Unit) == p.TFLOPs {
			units = append(units, p.String())
		}
	}
	return "; peaks " + strings.Join(units, ", ")
}

// columns are the table's headings: kgen's figures, then each baseline's
// time and kgen's speedup over it.
func (rep *benchReport) columns() []string {
	c := []string{"instance", "shape", "template", "kgen us (p20-p80)", "GB/s", "of copy", "of same-size copy", "TFLOP/s", "of peak"}
	if rep.multiTarget() {
		c = append([]string{"target"}, c...)
	}
	for _, m := range rep.Baselines {
		c = append(c, m+" us (p20-p80)", "vs "+m)
	}
	if len(rep.Baselines) > 0 {
		c = append(c, "PyTorch program", "check vs PyTorch")
	}
	return c
}

// label names r in plots and comparisons: its instance, and its target in
// a report of several.
func (r benchRow) label() string {
	if r.Target != "" {
		return r.Name + " on " + r.Target
	}
	return r.Name
}

// multiTarget reports whether rep's rows are of several targets.
func (rep *benchReport) multiTarget() bool {
	return slices.ContainsFunc(rep.Rows, func(r benchRow) bool { return r.Target != "" })
}

func (rep *benchReport) cells(r benchRow) []string {
	c := []string{r.Name, r.Sizes, r.Templates}
	if rep.multiTarget() {
		c = append([]string{r.Target}, c...)
	}
	if r.Error != "" {
		c = append(c, r.Error)
		for len(c) < len(rep.columns()) {
			c = append(c, "")
		}
		return c
	}
	tf, peak := "", ""
	if r.TFLOPs > 0 {
		tf = fmt.Sprintf("%.1f", r.TFLOPs)
	}
	if r.PeakFrac > 0 {
		peak = fmt.Sprintf("%.0f%% %s", 100*r.PeakFrac, r.Unit)
	}
	sized := ""
	if r.SizeCopyFrac > 0 {
		sized = fmt.Sprintf("%.0f%%", 100*r.SizeCopyFrac)
	}
	c = append(c, fmt.Sprintf("%.2f (%.2f-%.2f)%s", r.Time.MedianUS, r.Time.P20US, r.Time.P80US, graphNote(r.Time.Batch, " ")),
		fmt.Sprintf("%.0f", r.GBps), fmt.Sprintf("%.0f%%", 100*r.CopyFrac), sized, tf, peak)
	for _, m := range rep.Baselines {
		var t *kgrt.BaselineTiming
		if r.Torch != nil {
			t = r.Torch.Timings[m]
		}
		speed := r.Speedups[m]
		if t == nil {
			c = append(c, "-", "")
			continue
		}
		c = append(c, fmt.Sprintf("%.2f (%.2f-%.2f)%s", t.MedianUS, t.P20US, t.P80US, graphNote(t.Batch, " ")), fmt.Sprintf("%.2fx", speed))
	}
	if len(rep.Baselines) > 0 {
		prog := ""
		if r.Torch != nil {
			prog = r.Torch.Program
			if r.Torch.Skip != "" {
				prog = r.Torch.Skip
			}
		}
		c = append(c, prog, r.TorchCheck)
	}
	return c
}

func (rep *benchReport) print(w io.Writer) {
	fmt.Fprintln(w, rep.header())
	for _, l := range rep.partLines() {
		fmt.Fprintln(w, "  "+l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(rep.columns(), "\t"))
	for _, r := range rep.Rows {
		fmt.Fprintln(tw, strings.Join(rep.cells(r), "\t"))
	}
	tw.Flush()
	for _, f := range rep.FastP {
		if f.P == 1 {
			fmt.Fprintf(w, "fast_1 %s: %.2f (%d of %d correct and faster)\n", f.label(), f.Fraction, f.Count, f.Total)
		}
	}
}

func (rep *benchReport) markdown(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", rep.header())
	for _, l := range rep.partLines() {
		fmt.Fprintf(w, "- %s\n", l)
	}
	if len(rep.Parts) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Target %s. Protocol: %s. Bandwidth counts each input read and each output written once; \"of copy\" is that bandwidth over the copy bandwidth measured in the same run (a copy of 1 GiB); \"of same-size copy\", for an instance that is no matrix product, is the time of a device-to-device copy that moves as many bytes (copying a multiple of 64 KiB, rounded up), timed under the same protocol in the same run, over the instance's: a launch that moves a few tens of MB reaches less of the large copy's bandwidth, and so does the copy. TFLOP/s counts 2 operations a multiply-add of a matrix product; \"of peak\" is that rate over the peak of the unit its products need (bf16, f16, tf32 tensor cores, or f32 multiply-adds), measured in the same run by kgen's probe kernels.\n\n", rep.Target, rep.Protocol)
	rep.fastPTable(w)
	cols := rep.columns()
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)))
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(rep.cells(r), " | "))
	}
}
