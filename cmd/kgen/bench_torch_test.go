package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/ir"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// TestFastP checks fast_p against hand-counted fractions: KernelBench's
// definition counts correct instances faster than p times the baseline,
// over all instances, wrong ones included.
func TestFastP(t *testing.T) {
	rows := []benchRow{
		{Name: "a", Speedups: map[string]float64{"eager": 2.5, "compile": 0.9}},
		{Name: "b", Speedups: map[string]float64{"eager": 1.2, "compile": 1.6}},
		{Name: "c", Speedups: map[string]float64{"eager": 0.5, "compile": 0.4}},
		{Name: "d", Error: "wrong: 3 elements out of tolerance", Speedups: map[string]float64{"eager": 9}},
		{Name: "e", Speedups: map[string]float64{"eager": 3}, TorchCheck: "disagrees with PyTorch on output 0"},
	}
	want := map[string][]int{"eager": {3, 2, 1, 1}, "compile": {3, 1, 1, 0}}
	got := fastPs(rows, []string{"eager", "compile"})
	if len(got) != 8 {
		t.Fatalf("%d fast_p figures, want 8", len(got))
	}
	for _, f := range got {
		i := 0
		for fastPThresholds[i] != f.P {
			i++
		}
		if f.Total != 5 || f.Count != want[f.Baseline][i] || f.Fraction != float64(f.Count)/5 {
			t.Errorf("fast_%g vs %s = %d/%d (%g), want %d/5", f.P, f.Baseline, f.Count, f.Total, f.Fraction, want[f.Baseline][i])
		}
	}
}

// TestFastPMaxAutotune: max-autotune times matrix products only, and its
// fast_p counts over the instances it timed.
func TestFastPMaxAutotune(t *testing.T) {
	timed := &kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 10}, "max-autotune": {MedianUS: 10}}}
	untimed := &kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 10}}}
	rows := []benchRow{
		{Name: "gemm", Torch: timed, Speedups: map[string]float64{"eager": 1.1, "max-autotune": 0.7}},
		{Name: "relu", Torch: untimed, Speedups: map[string]float64{"eager": 2}},
	}
	for _, f := range fastPs(rows, []string{"max-autotune"}) {
		want := map[float64]int{0: 1, 1: 0, 1.5: 0, 2: 0}[f.P]
		if f.Total != 1 || f.Count != want {
			t.Errorf("fast_%g vs max-autotune = %d/%d, want %d/1", f.P, f.Count, f.Total, want)
		}
	}
}

// TestTorchCheck compares kgen's outputs with PyTorch's files as bench
// does: within tolerance is "ok", beyond it a disagreement that makes the
// instance wrong.
func TestTorchCheck(t *testing.T) {
	dir := t.TempDir()
	kgenOut := tensor.New(ir.F32, []int64{4})
	for i, v := range []float64{1, 2, 3, 4} {
		kgenOut.SetFloat(int64(i), v)
	}
	torchOut := func(last float64) string {
		tt := tensor.New(ir.F32, []int64{4})
		for i, v := range []float64{1, 2, 3, last} {
			tt.SetFloat(int64(i), v)
		}
		f := filepath.Join(dir, "out.bin")
		if err := os.WriteFile(f, tt.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		last float64
		want string
	}{{4.000001, "ok"}, {4.5, "disagrees"}} {
		row := benchRow{Time: kgrt.Timing{MedianUS: 10}}
		row.check = &torchCheck{kgen: []*tensor.Tensor{kgenOut}, tols: []kgrt.Tolerance{kgrt.ToleranceFor(ir.F32, 1)}}
		row.addBaseline(kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 25}}}, []string{torchOut(tc.last)})
		if !strings.HasPrefix(row.TorchCheck, tc.want) {
			t.Errorf("PyTorch's last element %g: check %q, want %s", tc.last, row.TorchCheck, tc.want)
		}
		if row.correct() != (tc.want == "ok") {
			t.Errorf("PyTorch's last element %g: correct() = %v", tc.last, row.correct())
		}
		if row.Speedups["eager"] != 2.5 {
			t.Errorf("speedup %g, want 2.5", row.Speedups["eager"])
		}
	}
}

// TestReportRendering renders a two-instance report: the markdown's fast_p
// row and the HTML's bars and roofline points must carry the figures.
func TestReportRendering(t *testing.T) {
	rep := &benchReport{Target: "cuda:sm_90", GPU: "GPU", runFacts: runFacts{CopyGBps: 3000, Baselines: []string{"eager", "compile"}},
		Rows: []benchRow{
			{Name: "gemm", Templates: "matmul-mma", Time: kgrt.Timing{MedianUS: 100}, Bytes: 3 << 20, Flops: 2e9, Ops: 2e9,
				Torch:    &kgrt.BaselineResult{Program: "reference", Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 150}, "compile": {MedianUS: 80}}},
				Speedups: map[string]float64{"eager": 1.5, "compile": 0.8}, TorchCheck: "ok"},
			{Name: "relu", Templates: "elementwise", Time: kgrt.Timing{MedianUS: 10}, Bytes: 2 << 20, Ops: 1 << 18,
				Torch:    &kgrt.BaselineResult{Program: "kgen's torch program", Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 30}}},
				Speedups: map[string]float64{"eager": 3}, TorchCheck: "ok"},
		}}
	rep.FastP = fastPs(rep.Rows, rep.Baselines)
	var md, page strings.Builder
	rep.markdown(&md)
	rep.html(&page)
	for _, want := range []string{"| vs eager | 1.00 (2/2) | 1.00 (2/2) | 0.50 (1/2) | 0.50 (1/2) |", "| vs compile | 1.00 (2/2) | 0.00 (0/2) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"gemm vs eager: 1.50x", "gemm vs compile: 0.80x", "relu vs eager: 3.00x", "<title>gemm: ", "copy bandwidth 3000 GB/s"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
