package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kgrt "kgen.dev/kgen/runtime"
)

// TestRunsOn checks which targets' kernels run on which GPU: the same
// major compute capability and at least the target's minor one; sm_90a
// code only on 9.0; AMD targets on no NVIDIA GPU.
func TestRunsOn(t *testing.T) {
	h100 := kgrt.Device{CCMajor: 9, CCMinor: 0}
	a100 := kgrt.Device{CCMajor: 8, CCMinor: 0}
	rtx3090 := kgrt.Device{CCMajor: 8, CCMinor: 6}
	cases := []struct {
		target string
		dev    kgrt.Device
		runs   bool
	}{
		{"cuda:sm_90", h100, true}, {"cuda:sm_90a", h100, true}, {"cuda:sm_80", h100, false},
		{"cuda:sm_80", a100, true}, {"cuda:sm_80", rtx3090, true}, {"cuda:sm_90", a100, false},
		{"triton:sm_90", h100, true}, {"triton:sm_80", a100, true}, {"hip:nvidia", h100, true},
		{"hip:gfx90a", h100, false}, {"hip:gfx1030", a100, false},
	}
	for _, c := range cases {
		tgt, err := kgrt.ParseTarget(c.target)
		if err != nil {
			t.Fatal(err)
		}
		if why := runsOn(tgt, c.dev); (why == "") != c.runs {
			t.Errorf("%s on sm_%d%d: %q, want runs=%v", c.target, c.dev.CCMajor, c.dev.CCMinor, why, c.runs)
		}
	}
}

func TestParseTargets(t *testing.T) {
	all, err := parseTargets("all")
	if err != nil || len(all) != len(kgrt.Targets()) {
		t.Errorf("all: %v, %v", all, err)
	}
	two, err := parseTargets("cuda:sm_90, triton:sm_90")
	if err != nil || len(two) != 2 || two[1].String() != "triton:sm_90" {
		t.Errorf("list: %v, %v", two, err)
	}
	if _, err := parseTargets("cuda:sm_90,cuda:sm_75"); err == nil || !strings.Contains(err.Error(), "sm_75") {
		t.Errorf("bad target in a list: %v", err)
	}
}

// Two portability runs of one GPU, split by files: the first ran a.kg on
// two targets, timing its instance (a contraction, bound by its bf16
// peak), and was stopped before b.kg and c.kg; the second ran b.kg,
// whose instance differs between the targets.
const (
	matrixRunA = `{
  "date": "2026-11-26T06:00:00Z", "gpu": "NVIDIA H100 80GB HBM3", "copy_gbps": 3000,
  "matrix_peaks": [{"unit": "bf16", "instr": "wgmma.m64n256k16", "kernel": "kg_peak_wgmma_bf16", "flops": 1e12,
    "time": {"median_us": 1000000, "p20_us": 1000000, "p80_us": 1000000}, "tflops": 1}],
  "targets": [{"target": "cuda:sm_90", "toolchain": "nvcc 13.0.88"}, {"target": "triton:sm_90", "toolchain": "triton 3.6.0"},
    {"target": "hip:gfx90a", "toolchain": "hipcc 5.2", "runs_here": "compile only: no GPU of this target here"}],
  "files": [{"file": "a.kg", "cells": {"cuda:sm_90": {"compiles": true, "plans": 2, "passed": 2},
    "triton:sm_90": {"compiles": true, "plans": 2, "passed": 2}, "hip:gfx90a": {"compiles": true}}}],
  "instances": [{"name": "mm", "file": "a.kg", "cells": {
    "cuda:sm_90": {"agrees": "reference", "time": {"median_us": 100}, "copy_fraction": 0.2, "tflops": 0.5, "matrix_unit": "bf16", "peak_fraction": 0.5, "roofline_fraction": 0.5},
    "triton:sm_90": {"agrees": "ok", "time": {"median_us": 50}, "copy_fraction": 0.4, "roofline_fraction": 0.4}}}],
  "not_run": ["b.kg", "c.kg"]
}`
	matrixRunB = `{
  "date": "2026-11-26T05:00:00Z", "gpu": "NVIDIA H100 80GB HBM3", "copy_gbps": 2990,
  "targets": [{"target": "cuda:sm_90", "toolchain": "nvcc 13.0.88"}, {"target": "triton:sm_90", "toolchain": "triton 3.6.0"},
    {"target": "hip:gfx90a", "skipped": "hipcc not found"}, {"target": "hip:gfx908", "skipped": "hipcc not found"}],
  "files": [{"file": "b.kg", "cells": {"cuda:sm_90": {"compiles": true, "plans": 1, "passed": 1},
    "triton:sm_90": {"compiles": true, "plans": 1, "passed": 1}}}],
  "instances": [{"name": "relu", "file": "b.kg", "cells": {
    "cuda:sm_90": {"agrees": "reference"}, "triton:sm_90": {"agrees": "2 of 8 elements differ"}}}]
}`
)

// TestMergeMatrices joins the two runs and checks the union, the
// earliest date and lowest copy bandwidth, the roofline cells, and that
// the differing instance makes the exit status 1; then that a file on a
// target in two runs, another GPU and another toolchain are refused.
func TestMergeMatrices(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", matrixRunA)
	b := writeFile(t, dir, "b.json", matrixRunB)
	md, js := filepath.Join(dir, "m.md"), filepath.Join(dir, "m.json")
	code, stdout, stderr := kgen(t, "test", "--merge-matrix", "--matrix-md", md, "--matrix-json", js, a, b)
	if code != exitUser {
		t.Fatalf("exit %d, want 1 (relu differs); stderr:\n%s", code, stderr)
	}
	m, err := readMatrix(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Targets) != 4 || len(m.Files) != 2 || len(m.Instances) != 2 || len(m.Parts) != 2 {
		t.Errorf("%d targets, %d files, %d instances, %d parts; want 4, 2, 2, 2", len(m.Targets), len(m.Files), len(m.Instances), len(m.Parts))
	}
	if len(m.NotRun) != 0 || !slices.Equal(m.Parts[0].NotRun, []string{"b.kg", "c.kg"}) {
		t.Errorf("not run: %q, and %q in the first run; want none, and b.kg, c.kg", m.NotRun, m.Parts[0].NotRun)
	}
	if m.Date != "2026-11-26T05:00:00Z" || m.CopyGBps != 2990 || len(m.Peaks) != 1 {
		t.Errorf("date %s, copy %g, %d peaks; want the earliest date, 2990, 1", m.Date, m.CopyGBps, len(m.Peaks))
	}
	text, _ := os.ReadFile(md)
	for _, s := range []string{
		"| mm | = 100.0 us, 50% of roofline (bf16 peak), 0 TFLOP/s | = 50.0 us, 40% of roofline (copy) |",
		"| relu | = | DIFFERS: 2 of 8 elements differ |",
		"- 2026-11-26T06:00:00Z, NVIDIA H100 80GB HBM3: copy 3000 GB/s; peaks bf16 1 TFLOP/s (1-1, wgmma.m64n256k16); a.kg; stopped before b.kg, c.kg\n",
		"| b.kg | compiles; 1/1 correct | compiles; 1/1 correct | - |",
		"| hip:gfx90a | hipcc 5.2 | compile only: no GPU of this target here |",
		"| hip:gfx908 | - | hipcc not found |",
	} {
		if !strings.Contains(string(text), s) {
			t.Errorf("the markdown lacks %q:\n%s", s, text)
		}
	}
	if !strings.Contains(stdout, "b.kg") {
		t.Errorf("the matrix is not printed:\n%s", stdout)
	}

	for _, c := range []struct{ name, run, want string }{
		{"same file", matrixRunA, "a.kg on cuda:sm_90 is also in " + a}, // the first target in order
		{"other GPU", strings.Replace(matrixRunB, "H100 80GB HBM3", "H200", 1), "measured on NVIDIA H200"},
		{"other toolchain", strings.Replace(matrixRunB, "triton 3.6.0", "triton 3.5.0", 1), "triton:sm_90 was built with triton 3.5.0, but with triton 3.6.0 before"},
		{"not a matrix", `{"date": "x"}`, `not a portability matrix: it has no "targets"`},
	} {
		p := writeFile(t, dir, "dup.json", c.run)
		out := filepath.Join(dir, "out.json")
		code, _, stderr := kgen(t, "test", "--merge-matrix", "--matrix-json", out, a, p)
		if code != exitUser || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, code, stderr, c.want)
		}
		if fileExists(out) {
			t.Errorf("%s: wrote %s", c.name, out)
		}
	}
}

// matrixRerunA reruns a.kg on triton:sm_90 an hour after matrixRunA (after
// a fix, say): one plan of two had failed there.
const matrixRerunA = `{
  "date": "2026-11-26T07:00:00Z", "gpu": "NVIDIA H100 80GB HBM3", "copy_gbps": 3010,
  "targets": [{"target": "triton:sm_90", "toolchain": "triton 3.6.0"}],
  "files": [{"file": "a.kg", "cells": {"triton:sm_90": {"compiles": true, "plans": 2, "passed": 2}}}],
  "instances": [{"name": "mm", "file": "a.kg", "cells": {
    "triton:sm_90": {"agrees": "reference", "time": {"median_us": 40}, "copy_fraction": 0.5, "roofline_fraction": 0.5}}}]
}`

// TestMergeRerun: a file rerun on a target by a later run takes that
// run's cells, whichever order the runs are given in, and the earlier
// run's part says so; a rerun merged into an already merged matrix is
// refused (its cells' runs are not known apart).
func TestMergeRerun(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", matrixRunA)
	a2 := writeFile(t, dir, "a2.json", matrixRerunA)
	for _, order := range [][]string{{a, a2}, {a2, a}} {
		js := filepath.Join(dir, "m.json")
		md := filepath.Join(dir, "m.md")
		code, _, stderr := kgen(t, append([]string{"test", "--merge-matrix", "--matrix-md", md, "--matrix-json", js}, order...)...)
		if code != exitOK {
			t.Fatalf("%q: exit %d\n%s", order, code, stderr)
		}
		m, err := readMatrix(js)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Instances) != 1 || m.Instances[0].Cells["triton:sm_90"].Time.MedianUS != 40 || m.Instances[0].Cells["cuda:sm_90"].Time.MedianUS != 100 {
			t.Errorf("%q: instances %+v; want triton's time from the rerun (40 us), cuda's from the first run (100 us)", order, m.Instances)
		}
		for _, p := range m.Parts {
			want := []string(nil)
			if p.Date == "2026-11-26T06:00:00Z" {
				want = []string{"a.kg"}
			}
			if !slices.Equal(p.Replaced, want) {
				t.Errorf("%q: part of %s replaced %q, want %q", order, p.Date, p.Replaced, want)
			}
		}
		if text, _ := os.ReadFile(md); !strings.Contains(string(text), "a.kg; stopped before b.kg, c.kg; rerun later: a.kg\n") {
			t.Errorf("%q: markdown:\n%s", order, text)
		}
	}
	merged := filepath.Join(dir, "m.json")
	code, _, stderr := kgen(t, "test", "--merge-matrix", "--matrix-json", filepath.Join(dir, "m2.json"), merged, a2)
	if code != exitUser || !strings.Contains(stderr, "a.kg on triton:sm_90 is also in "+merged) {
		t.Errorf("a rerun into a merged matrix: exit %d, stderr %q", code, stderr)
	}
}

// TestPortabilityCompileOnly runs the portability run of two files for two
// CUDA targets on a machine without their GPU (or with it: then the
// targets that run here are tested too): every file compiles on every
// target, in the order given, the run was not stopped, and the matrix is
// written both ways.
func TestPortabilityCompileOnly(t *testing.T) {
	needNVCC(t)
	dir := t.TempDir()
	a := writeFile(t, dir, "scale.kg", "kernel scale<N>(X: f32[N]) -> (Y: f32[N]) {\n  Y[i] = 2.0 * X[i]\n}\n")
	b := writeFile(t, dir, "rowsum.kg", "kernel rowsum<M, N>(X: f32[M, N]) -> (Y: f32[M]) {\n  Y[i] = sum[j](X[i, j])\n}\n")
	md, js := filepath.Join(dir, "m.md"), filepath.Join(dir, "m.json")
	code, _, stderr := kgen(t, "test", "--target", "cuda:sm_80,cuda:sm_90", "--matrix-md", md, "--matrix-json", js, a, b)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	m, err := readMatrix(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Files[0].File != a || m.Files[1].File != b || len(m.NotRun) != 0 {
		t.Fatalf("files %+v, not run %q; want %s and %s, none left", m.Files, m.NotRun, a, b)
	}
	for _, f := range m.Files {
		for _, tgt := range []string{"cuda:sm_80", "cuda:sm_90"} {
			if c, ok := f.Cells[tgt]; !ok || !c.Compiles {
				t.Errorf("%s on %s: %+v, want compiles", f.File, tgt, c)
			}
		}
	}
	for _, s := range []string{"cuda:sm_80: built in ", "cuda:sm_90: built in ", "all targets built in "} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	if text, err := os.ReadFile(md); err != nil || !strings.Contains(string(text), "| "+b+" | compiles") || strings.Contains(string(text), "Not run") {
		t.Errorf("markdown (%v):\n%s", err, text)
	}

	// --kernel naming a kernel of the second file alone: the first is
	// not built and leaves the matrix.
	code, _, stderr = kgen(t, "test", "--target", "cuda:sm_80,cuda:sm_90", "--kernel", "rowsum", "--matrix-json", js, a, b)
	if code != exitOK {
		t.Fatalf("--kernel rowsum: exit %d\n%s", code, stderr)
	}
	if m, err = readMatrix(js); err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 || m.Files[0].File != b || !m.Files[0].Cells["cuda:sm_90"].Compiles {
		t.Errorf("--kernel rowsum: files %+v; want %s alone, compiling", m.Files, b)
	}
}

// TestPortabilityKernel: a portability run takes --kernel as a single
// target's run does (the builder's filter, TestBuildOnly); a name that no
// file declares is a usage error before anything builds, and --config
// still takes one target.
func TestPortabilityKernel(t *testing.T) {
	files := []string{"../../examples/softmax.kg", "../../examples/elementwise.kg"}
	code, _, errText := kgen(t, append([]string{"test", "--target", "hip:gfx90a,hip:gfx1030", "--kernel", "softmax_vocab,chain,no_such"}, files...)...)
	if code != exitUsage || !strings.Contains(errText, `--kernel: no instance or kernel "no_such" in the files given`) {
		t.Errorf("an unknown name: exit %d, stderr %q; want a usage error naming it", code, errText)
	}
	code, _, errText = kgen(t, append([]string{"test", "--target", "all", "--config", "BLOCK=64"}, files...)...)
	if code != exitUsage || !strings.Contains(errText, "--config and -o take one target") {
		t.Errorf("--config with several targets: exit %d, stderr %q; want a usage error", code, errText)
	}
}
