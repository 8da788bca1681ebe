package interp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// TestExamples evaluates every kernel of examples/ at small sizes, with
// every declared dim 7 and params at their defaults, and every instance
// with small tensors: a smoke test that the interpreter handles whatever
// the checker accepts. Kernels that need a value for a param without
// default are skipped.
func TestExamples(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.kg")
	if len(files) == 0 {
		t.Skip("no examples")
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := frontend.CheckSource(file, string(text))
		if diags.HasErrors() {
			t.Logf("%s does not check; skipped", file)
			continue
		}
		for _, inst := range prog.Instances {
			t.Run(filepath.Base(file)+"/instance "+inst.Name, func(t *testing.T) {
				// Only instances whose tensors are small (the others take
				// too long for a unit test).
				var elems int64
				for _, tn := range inst.Kernel.Tensors() {
					shape, err := inst.Env.Shape(tn)
					if err != nil {
						t.Fatal(err)
					}
					n, _ := numElements(shape)
					elems += n
				}
				if elems > 1<<16 {
					t.Skipf("%d elements", elems)
				}
				in, err := RandomInputs(inst.Kernel, inst.Env, tensor.Uniform, 2)
				if err != nil {
					t.Fatal(err)
				}
				// Instances are checked in bounds: no run-time error is allowed.
				if _, err := Run(inst.Kernel, inst.Env, in, Options{}); err != nil {
					t.Fatal(err)
				}
			})
		}
		for _, k := range prog.Kernels {
			t.Run(filepath.Base(file)+"/"+k.Name, func(t *testing.T) {
				dims := map[string]int64{}
				for _, d := range k.DeclaredDims() {
					dims[d.Name] = 7
				}
				env, err := ir.Bind(k, dims, nil)
				if err != nil {
					t.Skipf("cannot bind: %v", err)
				}
				in, err := RandomInputs(k, env, tensor.Normal, 1)
				if err != nil {
					t.Fatal(err)
				}
				outs, err := Run(k, env, in, Options{})
				var re *RunError
				if errors.As(err, &re) {
					t.Logf("run-time error (may be legitimate at these sizes): %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(outs) != len(k.Outputs) {
					t.Fatalf("%d outputs, want %d", len(outs), len(k.Outputs))
				}
			})
		}
	}
}
