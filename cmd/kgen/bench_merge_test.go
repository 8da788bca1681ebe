package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Two runs of one suite: the first timed eager and compile, the second
// eager, compile and max-autotune for two matrix products.
const (
	mergeRunA = `{
  "date": "2026-11-26T10:00:00Z", "target": "cuda:sm_90a", "gpu": "NVIDIA H100 80GB HBM3",
  "driver_cuda_version": 13000, "toolchain": "nvcc 13.0.88", "torch": "2.11.0+cu130",
  "baselines": ["eager", "compile"], "copy_gbps": 3006, "protocol": "P", "elapsed_s": 100,
  "matrix_peaks": [{"unit": "bf16", "instr": "wgmma.m64n256k16", "kernel": "kg_peak_wgmma_bf16", "flops": 1e12,
    "time": {"median_us": 1000000, "p20_us": 990000, "p80_us": 1010000}, "tflops": 1}],
  "rows": [
    {"name": "relu", "time": {"median_us": 10}, "copy_fraction": 0.9, "size_copy": {"median_us": 7}, "size_copy_fraction": 0.7,
     "torch": {"timings": {"eager": {"median_us": 20}, "compile": {"median_us": 9}}}, "speedups": {"eager": 2, "compile": 0.9}},
    {"name": "broken", "error": "wrong: 1 element out of tolerance", "time": {"median_us": 0}}
  ]
}`
	mergeRunB = `{
  "date": "2026-11-26T09:00:00Z", "target": "cuda:sm_90a", "gpu": "NVIDIA H100 80GB HBM3",
  "driver_cuda_version": 13000, "toolchain": "nvcc 13.0.88", "torch": "2.11.0+cu130",
  "baselines": ["eager", "compile", "max-autotune"], "copy_gbps": 2990, "protocol": "P", "elapsed_s": 300,
  "matrix_peaks": [{"unit": "bf16", "instr": "wgmma.m64n256k16", "kernel": "kg_peak_wgmma_bf16", "flops": 1e12,
    "time": {"median_us": 1250000, "p20_us": 1250000, "p80_us": 1250000}, "tflops": 0.8}],
  "rows": [
    {"name": "mm", "time": {"median_us": 100}, "copy_fraction": 0.1, "tflops": 0.4, "matrix_unit": "bf16", "peak_fraction": 0.5,
     "torch": {"timings": {"eager": {"median_us": 160}, "compile": {"median_us": 120}, "max-autotune": {"median_us": 90}}},
     "speedups": {"eager": 1.6, "compile": 1.2, "max-autotune": 0.9}},
    {"name": "mm2", "time": {"median_us": 100},
     "torch": {"timings": {"eager": {"median_us": 250}, "compile": {"median_us": 260}, "max-autotune": {"median_us": 210}}},
     "speedups": {"eager": 2.5, "compile": 2.6, "max-autotune": 2.1}}
  ]
}`
)

// TestMergeReports merges two runs and checks fast_p, counted again over
// the rows of both by hand, and what the merged report says of its runs.
func TestMergeReports(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", mergeRunA)
	b := writeFile(t, dir, "b.json", mergeRunB)
	out := filepath.Join(dir, "m.json")
	md := filepath.Join(dir, "m.md")
	code, stdout, stderr := kgen(t, "bench", "--merge", "--json", out, "--md", md, a, b)
	// broken failed its check: the merged report, like a run, exits 1.
	if code != exitUser {
		t.Fatalf("exit %d, want 1 (a wrong instance); stderr:\n%s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m benchReport
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range m.Rows {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ","); got != "relu,broken,mm,mm2" {
		t.Errorf("rows %s, want relu,broken,mm,mm2 (the parts' rows in order)", got)
	}
	if m.Date != "2026-11-26T09:00:00Z" || m.CopyGBps != 2990 || m.ElapsedSec != 400 || len(m.Parts) != 2 {
		t.Errorf("date %s, copy %g, elapsed %g, %d parts; want the earliest date, the lowest copy bandwidth 2990, 400 s, 2 parts",
			m.Date, m.CopyGBps, m.ElapsedSec, len(m.Parts))
	}
	if len(m.Peaks) != 1 || m.Peaks[0].TFLOPs != 0.8 {
		t.Errorf("peaks %+v, want one, the lower run's 0.8 TFLOP/s", m.Peaks)
	}
	if got := strings.Join(m.Baselines, ","); got != "eager,compile,max-autotune" {
		t.Errorf("baselines %s, want eager,compile,max-autotune", got)
	}
	// Over 4 rows: eager speedups 2, -, 1.6, 2.5 (broken is not correct);
	// compile 0.9, -, 1.2, 2.6; max-autotune only mm and mm2: 0.9, 2.1.
	want := map[string][2]int{
		"eager 0": {3, 4}, "eager 1": {3, 4}, "eager 1.5": {3, 4}, "eager 2": {1, 4},
		"compile 0": {3, 4}, "compile 1": {2, 4}, "compile 1.5": {1, 4}, "compile 2": {1, 4},
		"max-autotune 0": {2, 2}, "max-autotune 1": {1, 2}, "max-autotune 1.5": {1, 2}, "max-autotune 2": {1, 2},
	}
	if len(m.FastP) != len(want) {
		t.Errorf("%d fast_p figures, want %d", len(m.FastP), len(want))
	}
	for _, f := range m.FastP {
		key := f.Baseline + " " + strconv.FormatFloat(f.P, 'g', -1, 64)
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected fast_p %s", key)
			continue
		}
		if f.Count != w[0] || f.Total != w[1] {
			t.Errorf("fast_%s = %d of %d, want %d of %d", key, f.Count, f.Total, w[0], w[1])
		}
	}
	mdText, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2 runs of kgen bench merged", "run 1: 2026-11-26T10:00:00Z", "copy 3006 GB/s; peaks bf16 1 TFLOP/s (1-1, wgmma.m64n256k16); eager, compile; 100 s; relu, broken",
		"| mm |  |  | 100.00 (0.00-0.00) | 0 | 10% |  | 0.4 | 50% bf16 |", "| relu |  |  | 10.00 (0.00-0.00) | 0 | 90% | 70% |  |  |",
		"run 2: 2026-11-26T09:00:00Z", "eager, compile, max-autotune; 300 s; mm, mm2", "| vs max-autotune | 1.00 (2/2) | 0.50 (1/2)"} {
		if !strings.Contains(string(mdText), s) {
			t.Errorf("the markdown lacks %q:\n%s", s, mdText)
		}
	}
	if !strings.Contains(stdout, "run 2: 2026-11-26T09:00:00Z") {
		t.Errorf("the table does not list the runs:\n%s", stdout)
	}

	// A merged report merges again as the runs it was made of.
	c := writeFile(t, dir, "c.json", strings.Replace(strings.Replace(mergeRunA, `"relu"`, `"gelu"`, 1), `"broken"`, `"tanh"`, 1))
	out2 := filepath.Join(dir, "m2.json")
	if code, _, stderr := kgen(t, "bench", "--merge", "--json", out2, out, c); code != exitUser {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	data, _ = os.ReadFile(out2)
	var m2 benchReport
	if err := json.Unmarshal(data, &m2); err != nil {
		t.Fatal(err)
	}
	if len(m2.Parts) != 3 || len(m2.Rows) != 6 {
		t.Errorf("%d parts and %d rows, want 3 and 6", len(m2.Parts), len(m2.Rows))
	}
}

// TestMergeRefuses checks that reports of other targets or GPUs, and an
// instance in two parts, are refused with the file named.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", mergeRunA)
	cases := []struct{ name, part, want string }{
		{"same instance", mergeRunA, "dup.json: error: instance relu is also in " + a},
		{"other target", strings.Replace(mergeRunB, "cuda:sm_90a", "triton:sm_90", 1), "dup.json: error: target triton:sm_90, but " + a + "'s is cuda:sm_90a"},
		{"other GPU", strings.Replace(mergeRunB, "H100 80GB HBM3", "H200", 1), "dup.json: error: measured on NVIDIA H200, but " + a + " on NVIDIA H100 80GB HBM3"},
		{"not a report", `{"date": "x"}`, `dup.json: error: not a kgen bench report: it has no "rows"`},
	}
	for _, c := range cases {
		p := writeFile(t, dir, "dup.json", c.part)
		out := filepath.Join(dir, "out.json")
		code, _, stderr := kgen(t, "bench", "--merge", "--json", out, a, p)
		if code != exitUser || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, code, stderr, c.want)
		}
		if fileExists(out) {
			t.Errorf("%s: wrote %s", c.name, out)
		}
	}
	if code, _, stderr := kgen(t, "bench", "--merge", "--target", "cuda:sm_90", a); code != exitUsage || !strings.Contains(stderr, "--target does not go with --merge") {
		t.Errorf("--target with --merge: exit %d, stderr %q", code, stderr)
	}
}
