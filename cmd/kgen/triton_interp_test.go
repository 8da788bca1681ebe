package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// interpMaxWork bounds the shapes the Triton interpreter runs: it executes
// each program with numpy, thousands of times slower than a GPU.
const interpMaxWork = 2e4

// TestTritonInterpreterExamples runs every example's Triton kernels on the
// CPU through Triton's interpreter, by the Triton runner's protocol
// (--interpret: numpy buffers between red zones that catch out-of-bounds
// stores), and compares each output with kgen's reference interpreter
// under the tolerances kgen test uses: every kernel at its small test
// shapes, and each instance small enough. Plans with bf16 tensors or
// libdevice functions are skipped (interpreterLacks).
//
// It runs only with KGEN_TRITON_INTERPRET_TEST=1: it takes minutes (a
// fresh interpreter process a plan), and it does not pass yet. Run in one
// process, plans that are right alone come out wrong after others (state
// the interpreter keeps between launches: the failures move from run to
// run); with a fresh process a plan, 299 of 301 checks pass (triton 3.6.0,
// numpy 2.3.5; numpy 2.4 breaks the interpreter's loops over scalar
// arguments) and threshold_any_0_M at 33 x 33 and causal_attention at
// sizes of 1 fail, neither reproduced by a script running the kernel
// alone.
func TestTritonInterpreterExamples(t *testing.T) {
	if os.Getenv("KGEN_TRITON_INTERPRET_TEST") != "1" {
		t.Skip("set KGEN_TRITON_INTERPRET_TEST=1 (minutes; known failures, see the comment)")
	}
	python := needTriton(t)
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but %s cannot import numpy", python)
		}
		t.Skipf("%s cannot import numpy", python)
	}
	examples, _ := filepath.Glob("../../examples/*.kg")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	tgt, err := kgrt.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	be, err := openBackend(tgt, toolPaths{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	files := loadFiles(examples, &diags)
	if diags.HasErrors() {
		t.Fatal("examples do not check")
	}
	b := &builder{target: tgt, be: be, out: t.TempDir()}
	units, err := b.emit(files)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := kgrt.StartTritonInterpreter(ctx, python, t.TempDir(), 90)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dists := []tensor.Dist{tensor.Normal, tensor.Uniform, tensor.Ints}
	checks := 0
	for _, u := range units {
		for _, p := range u.plans {
			// A fresh interpreter a plan: run after others in one
			// process, kernels that are right alone give wrong results
			// (see the comment on the test).
			if err := r.Restart(); err != nil {
				t.Fatal(err)
			}
			x := &kgrt.Executor{Runner: r, Binary: u.source}
			if why := interpreterLacks(p.Kernel); why != "" {
				t.Logf("%s: skipped: the interpreter lacks %s", p.Name, why)
				continue
			}
			var shapes []kgrt.Shape
			if p.Env != nil {
				if ir.Work(p.Source, p.Env) <= interpMaxWork {
					shapes = []kgrt.Shape{{Name: "instance", Env: p.Env}}
				}
			} else {
				shapes = kgrt.TestShapes(p.Source, u.file.prog.Instances, interpMaxWork)
			}
			for i, sh := range shapes {
				res := x.Check(ctx, p, sh.Env, dists[i%len(dists)], uint64(i+1))
				checks++
				if res.Err != nil {
					t.Errorf("%s (%s) at %s (%s): %v", p.Name, u.file.path, sh.Name, res.Shape, res.Err)
					if !r.Alive() {
						if err := r.Restart(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	}
	if checks < len(units) {
		t.Errorf("only %d checks", checks)
	}
	t.Logf("%d checks", checks)
}

// interpreterLacks says what of k Triton's interpreter cannot run
// faithfully without torch: bf16 tensors (numpy has no bfloat16; the
// interpreter reads them as garbage) and libdevice functions (tanh, pow:
// not interpreted), or "".
func interpreterLacks(k *ir.Kernel) string {
	for _, t := range k.Tensors() {
		if t.DType == ir.BF16 {
			return "bf16 tensors"
		}
	}
	for _, s := range k.Stmts {
		lacks := ""
		ir.Walk(s.Value, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && (c.Fn == ir.Tanh || c.Fn == ir.Pow) {
				lacks = "libdevice's " + c.Fn.String()
			}
			return lacks == ""
		})
		if lacks != "" {
			return lacks
		}
	}
	return ""
}
