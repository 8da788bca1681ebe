package torch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/backends/torch"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// TestProgramsMatchInterpreter runs the PyTorch program of every kernel of
// the examples, of the benchmark suite and of the bandwidth specs, at the
// small shapes kgen test uses, through the same oracle path kgen bench
// uses (baseline.py's check, on the CPU when there is no GPU), and
// compares every output with the reference interpreter's. The suite's
// hand-written reference programs (STEM.torch.py, the baselines kgen
// bench times) are checked the same way, so that no baseline is fast for
// computing something else, or for returning an input as its output. It
// needs a python3 that imports torch (named by KGEN_TORCH_PYTHON, or on
// PATH; CI installs one with .ci/install-torch); without one it skips,
// unless KGEN_REQUIRE_TOOLCHAINS=1.
func TestProgramsMatchInterpreter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PyTorch")
	}
	ctx := context.Background()
	python := os.Getenv("KGEN_TORCH_PYTHON")
	if python == "" {
		p, err := runtime.FindPython(ctx, "torch")
		if err != nil || p.Modules[0].Version == "" {
			if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
				t.Fatal("no python3 with torch (set KGEN_TORCH_PYTHON), and KGEN_REQUIRE_TOOLCHAINS=1")
			}
			t.Skip("no python3 with torch (set KGEN_TORCH_PYTHON)")
		}
		python = p.Path
	}
	paths, _ := filepath.Glob("../../examples/*.kg")
	suite, _ := filepath.Glob("../../testsuite/kernelbench/*.kg")
	sizes, _ := filepath.Glob("../../testsuite/bandwidth/*.kg")
	paths = append(append(paths, suite...), sizes...)
	dir := t.TempDir()
	type pending struct {
		name string
		k    *ir.Kernel
		env  *ir.Env
		want []*tensor.Tensor
		outs []string
	}
	var tasks []runtime.BaselineTask
	var checks []pending
	for fi, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := frontend.CheckSource(path, string(src))
		if diags.HasErrors() {
			t.Fatalf("%s: %s", path, diags.Diags[0].Msg)
		}
		reference, _ := filepath.Abs(strings.TrimSuffix(path, ".kg") + ".torch.py")
		if _, err := os.Stat(reference); err != nil {
			reference = ""
		}
		module := filepath.Join(dir, fmt.Sprintf("m%d.py", fi))
		if err := os.WriteFile(module, []byte(torch.Emit(prog.Kernels)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, k := range prog.Kernels {
			kw := torch.Keywords(k)
			for si, sh := range runtime.TestShapes(k, prog.Instances, 2e6) {
				name := fmt.Sprintf("%s:%s@%s", filepath.Base(path), k.Name, sh.Name)
				inputs, err := interp.RandomInputs(k, sh.Env, tensor.Normal, uint64(si+1))
				if err != nil {
					t.Fatal(err)
				}
				want, err := interp.Run(k, sh.Env, inputs, interp.Options{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				task := runtime.BaselineTask{Name: name, Kernel: k.Name, Module: module, Fn: k.Name,
					Sizes: map[string]int64{}, Params: map[string]any{}, Keywords: kw}
				for d, v := range sh.Env.Dims {
					if d.Def == nil {
						task.Sizes[kw[d.Name]] = v
					}
				}
				for prm, c := range sh.Env.Params {
					task.Params[prm.Name] = runtime.ParamValue(c)
				}
				for i, in := range inputs {
					f := filepath.Join(dir, fmt.Sprintf("t%d.in%d", len(tasks), i))
					if err := os.WriteFile(f, in.Data, 0o644); err != nil {
						t.Fatal(err)
					}
					shape, _ := sh.Env.Shape(k.Inputs[i])
					task.Inputs = append(task.Inputs, runtime.BaselineInput{Name: k.Inputs[i].Name, DType: k.Inputs[i].DType.String(), Shape: shape})
					task.CheckInputs = append(task.CheckInputs, f)
				}
				add := func(task runtime.BaselineTask, name string) {
					c := pending{name: name, k: k, env: sh.Env, want: want}
					task.CheckOutputs = nil
					for i := range want {
						f := filepath.Join(dir, fmt.Sprintf("t%d.out%d", len(tasks), i))
						task.CheckOutputs = append(task.CheckOutputs, f)
						c.outs = append(c.outs, f)
					}
					tasks = append(tasks, task)
					checks = append(checks, c)
				}
				add(task, name)
				empty := false
				for _, w := range want {
					empty = empty || w.Len() == 0
				}
				// PyTorch's own ops refuse some empty results (pooling
				// to a size of 0), which kgen's programs compute.
				if reference != "" && !empty {
					task.Reference, task.CheckReference = reference, true
					add(task, name+" (reference program)")
				}
			}
		}
	}
	results, err := runtime.RunBaselines(ctx, python, tasks, nil, runtime.TimeSpec{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range checks {
		if e := results[i].CheckError; e != "" {
			t.Errorf("%s: the PyTorch program failed: %s", c.name, e)
			continue
		}
		tols := runtime.Tolerances(c.k, c.env)
		for j, want := range c.want {
			data, err := os.ReadFile(c.outs[j])
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			got := &tensor.Tensor{DType: want.DType, Shape: want.Shape, Data: data}
			tol := tols[j]
			tol.Rtol *= 2 // PyTorch rounds each operation, as kgen's kernels do
			if _, bad, err := runtime.Compare(got, want, tol); err != nil || bad != nil {
				t.Errorf("%s: output %s: %v%v", c.name, c.k.Outputs[j].Name, err, bad)
			}
		}
	}
	t.Logf("%d programs checked", len(checks))
}
