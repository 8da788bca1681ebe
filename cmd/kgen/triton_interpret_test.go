package main

import (
	"os"
	"strings"
	"testing"
)

// TestTritonInterpreted runs the Triton kernels of a few examples (a row
// reduction with fused lets, a column reduction, matrix products with
// tl.dot, convolutions, gathers with ??) in Triton's interpreter on the
// CPU through kgen test, which compares every output with kgen's own
// interpreter at small shapes, bf16 products and libdevice calls included
// (the runner mends the interpreter's gaps there: interpret_gaps). It needs the python of KGEN_TORCH_PYTHON
// (torch, triton and a NumPy older than 2.3; CI's .ci/install-torch), and
// skips without it unless KGEN_REQUIRE_TOOLCHAINS=1.
func TestTritonInterpreted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Triton's interpreter")
	}
	python := os.Getenv("KGEN_TORCH_PYTHON")
	if python == "" {
		missingTool(t, "KGEN_TORCH_PYTHON is not set")
	}
	files := []string{"softmax.kg", "reductions.kg", "matmul.kg", "matmul_lowp.kg", "conv2d.kg", "activations.kg", "pad_concat.kg"}
	args := []string{"test", "--target", "triton:sm_90", "--triton-interpret", "--python", python, "--seeds", "1", "--max-work", "3e4"}
	for _, f := range files {
		args = append(args, "../../examples/"+f)
	}
	code, out, errText := kgen(t, args...)
	summary := out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n")+1:]
	if code != 0 || !strings.Contains(summary, " 0 failed") {
		t.Fatalf("exit %d: %s\n%s\n%s", code, summary, out, errText)
	}
	if strings.Contains(summary, ": 0 passed") {
		t.Fatalf("nothing was checked: %s", summary)
	}
	t.Log(summary)
}
