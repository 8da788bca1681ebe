package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	kgrt "kgen.dev/kgen/runtime"
)

// TestSpecFiles checks that a directory stands for the .kg files under it,
// in lexical order, and that files pass through.
func TestSpecFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"b.kg", "a.kg", "sub/c.kg", "notes.txt", "sub/d.torch.py"} {
		writeFile(t, dir, f, "")
	}
	got, err := specFiles([]string{dir, "x.kg"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.kg"), filepath.Join(dir, "b.kg"), filepath.Join(dir, "sub/c.kg"), "x.kg"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("specFiles = %v, want %v", got, want)
	}
	empty := t.TempDir()
	if _, err := specFiles([]string{empty}); err == nil || !strings.Contains(err.Error(), "no .kg files") {
		t.Errorf("an empty directory: error %v, want one saying it has no .kg files", err)
	}
}

// TestFastPPerTarget counts fast_p for each target of a report of two
// over its own rows (worked by hand), and renders the target column.
func TestFastPPerTarget(t *testing.T) {
	row := func(name, target string, speedup float64, err string) benchRow {
		return benchRow{Name: name, Target: target, Error: err, Time: kgrt.Timing{MedianUS: 10},
			Torch:    &kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 10 * speedup}}},
			Speedups: map[string]float64{"eager": speedup}, TorchCheck: "ok"}
	}
	rep := &benchReport{Target: "cuda:sm_90a,triton:sm_90", runFacts: runFacts{Baselines: []string{"eager"}}, Rows: []benchRow{
		row("relu", "cuda:sm_90a", 1.2, ""), row("gemm", "cuda:sm_90a", 0.8, ""), row("softmax", "cuda:sm_90a", 2.5, ""),
		row("relu", "triton:sm_90", 0.9, ""), row("gemm", "triton:sm_90", 1.6, "wrong: 1 element"), row("softmax", "triton:sm_90", 1.7, ""),
	}}
	rep.FastP = fastPs(rep.Rows, rep.Baselines)
	// cuda: speedups 1.2, 0.8, 2.5: fast_1 2/3, fast_1.5 1/3, fast_2 1/3.
	// triton: 0.9, (wrong), 1.7: fast_0 2/3, fast_1 1/3, fast_1.5 1/3, fast_2 0/3.
	var md strings.Builder
	rep.markdown(&md)
	for _, want := range []string{
		"| vs eager on cuda:sm_90a | 1.00 (3/3) | 0.67 (2/3) | 0.33 (1/3) | 0.33 (1/3) |",
		"| vs eager on triton:sm_90 | 0.67 (2/3) | 0.33 (1/3) | 0.33 (1/3) | 0.00 (0/3) |",
		"| target | instance | shape | template |",
		"| triton:sm_90 | softmax |  |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	// The comparison keys rows by instance and target.
	kr := keyRows(rep.Rows)
	if len(kr.keys) != 6 || kr.rows["gemm on triton:sm_90"].Error == "" {
		t.Errorf("keys %v: want the six rows keyed by instance and target", kr.keys)
	}
}

// TestBenchTargetTwice: a target named twice is a usage error, before
// anything is built.
func TestBenchTargetTwice(t *testing.T) {
	code, _, stderr := kgen(t, "bench", "--target", "cuda:sm_90,triton:sm_90,cuda:sm_90", "x.kg")
	if code != exitUsage || !strings.Contains(stderr, "--target: cuda:sm_90 is named twice") {
		t.Errorf("exit %d, stderr %q; want 2 and the target named", code, stderr)
	}
}

// TestBenchGraphMarked: a time measured as CUDA graphs says so, with its
// launches a graph, in the table (kgen's and a baseline's) and in the
// summary line; a single launch's time carries no mark.
func TestBenchGraphMarked(t *testing.T) {
	rep := &benchReport{Target: "cuda:sm_90", runFacts: runFacts{Baselines: []string{"eager"}}, Rows: []benchRow{
		{Name: "pool", Time: kgrt.Timing{MedianUS: 12.47, P20US: 12.35, P80US: 12.62, Batch: 1604},
			Torch: &kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 9.5, P20US: 9.4, P80US: 9.6, Batch: 2105}}}},
		{Name: "sum", Time: kgrt.Timing{MedianUS: 20.74, P20US: 20.16, P80US: 21.06},
			Torch: &kgrt.BaselineResult{Timings: map[string]*kgrt.BaselineTiming{"eager": {MedianUS: 39.33, P20US: 38.43, P80US: 43.62}}}},
	}}
	var text strings.Builder
	rep.print(&text)
	for _, want := range []string{"12.47 (12.35-12.62) graph x1604", "9.50 (9.40-9.60) graph x2105", "20.74 (20.16-21.06)  ", "39.33 (38.43-43.62)  "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}
	if s := rep.Rows[0].summary(); s != "12.47 us (p20 12.35, p80 12.62, graph x1604), 0 GB/s" {
		t.Errorf("summary %q", s)
	}
	if s := rep.Rows[1].summary(); strings.Contains(s, "graph") {
		t.Errorf("summary %q marks a single launch", s)
	}
}
