// Package testsuite holds kgen's benchmark suite (kernelbench/) and the
// scripts that run it and the examples on a GPU. Its test checks that the
// suite is what it claims to be.
package testsuite

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// TestKernelBenchSuite checks the suite's shape and that no task is
// trivial: at least 30 single-operator and 10 fused kernels; every kernel
// with at least three instances, one of them with no declared dim a
// multiple of 64; and on every instance the interpreter can afford, every
// output finite, spread out (not one value repeated) and different for
// different inputs, so that a kernel that ignores its inputs or returns a
// constant cannot pass as correct.
func TestKernelBenchSuite(t *testing.T) {
	counts := map[string]int{}
	for _, file := range []string{"level1.kg", "level2.kg"} {
		path := filepath.Join("kernelbench", file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := frontend.CheckSource(path, string(src))
		for _, d := range diags.Diags {
			t.Errorf("%s: %s", path, d.Msg)
		}
		if diags.HasErrors() {
			t.FailNow()
		}
		counts[file] = len(prog.Kernels)
		for _, k := range prog.Kernels {
			var insts []*ir.Instance
			odd := false
			for _, in := range prog.Instances {
				if in.Kernel != k {
					continue
				}
				insts = append(insts, in)
				allOdd := true
				for _, d := range k.Dims {
					if v := in.Env.Dims[d]; d.Def == nil && v%64 == 0 {
						allOdd = false
					}
				}
				odd = odd || allOdd
			}
			if len(insts) < 3 || !odd {
				t.Errorf("%s: kernel %s has %d instances (want 3 or more), one with no dim a multiple of 64: %v", path, k.Name, len(insts), odd)
			}
			checked := 0
			for _, in := range insts {
				if ir.Work(k, in.Env) > 2e7 {
					continue
				}
				checked++
				checkNotTrivial(t, k, in)
			}
			if checked == 0 {
				t.Errorf("%s: kernel %s has no instance small enough to check", path, k.Name)
			}
		}
	}
	if counts["level1.kg"] < 30 || counts["level2.kg"] < 10 {
		t.Errorf("the suite has %d single-operator and %d fused kernels; want at least 30 and 10", counts["level1.kg"], counts["level2.kg"])
	}
}

func checkNotTrivial(t *testing.T, k *ir.Kernel, in *ir.Instance) {
	t.Helper()
	var runs [][]*tensor.Tensor
	for seed := uint64(1); seed <= 2; seed++ {
		inputs, err := interp.RandomInputs(k, in.Env, tensor.Normal, seed)
		if err != nil {
			t.Fatal(err)
		}
		outs, err := interp.Run(k, in.Env, inputs, interp.Options{})
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		runs = append(runs, outs)
	}
	for i, out := range runs[0] {
		name := k.Outputs[i].Name
		lo, hi, differ := math.Inf(1), math.Inf(-1), false
		for j := int64(0); j < out.Len(); j++ {
			v := out.Float(j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: output %s[%d] = %g for normal inputs", in.Name, name, j, v)
				return
			}
			lo, hi = min(lo, v), max(hi, v)
			differ = differ || v != runs[1][i].Float(j)
		}
		if out.Len() > 1 && !(hi > lo) {
			t.Errorf("%s: output %s is the constant %g", in.Name, name, lo)
		}
		if !differ {
			t.Errorf("%s: output %s does not depend on the inputs", in.Name, name)
		}
	}
}
