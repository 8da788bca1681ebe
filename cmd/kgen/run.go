package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

func init() {
	register(&command{
		name: "run", args: "--kernel K --target cuda:sm_90 [--shape NAME=V,...] [--in [NAME=]FILE.npy ...] [--out DIR] FILE",
		short: "run one compiled kernel on the GPU on your inputs",
		long: `
Run builds kernel (or instance) K of FILE for the target, runs it once on the
GPU and prints a summary of each output; with --out it writes them as
DIR/NAME.npy, so that they can be checked against your own reference. Sizes
and inputs work as in 'kgen eval' (instance, then .npy shapes, then
--shape; inputs not given are generated from --seed and --dist). An
instance run at its own sizes uses the specialized kernel, otherwise the
kernel with runtime sizes.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			kernel := fs.String("kernel", "", "the kernel or instance to run (required)")
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required)")
			var tools toolPaths
			tools.register(fs)
			var shape shapeFlag
			fs.Var(&shape, "shape", "sizes and params: NAME=V,...")
			var ins inFlag
			fs.Var(&ins, "in", "an input .npy file, as NAME=FILE or FILE (repeatable)")
			out := fs.String("out", "", "write outputs as .npy files into this directory")
			saveInputs := fs.Bool("save-inputs", false, "with --out, also write the inputs used to DIR/inputs/")
			seed := fs.Uint64("seed", 1, "seed for generated inputs")
			dist := fs.String("dist", "normal", "distribution of generated inputs: normal, uniform, large, ints")
			show := fs.Int("show", 8, "print at most this many values of each output")
			return func(args []string) int {
				if len(args) != 1 || *kernel == "" || *target == "" {
					return usageError("run", "want --kernel, --target and exactly one FILE")
				}
				if *saveInputs && *out == "" {
					return usageError("run", "--save-inputs needs --out")
				}
				d, err := tensor.ParseDist(*dist)
				if err != nil {
					return usageError("run", "--dist: %v", err)
				}
				tgt, err := kgrt.ParseTarget(*target)
				if err != nil {
					return usageError("run", "%v", err)
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if code := report(&diags, false); code != exitOK {
					return code
				}
				k, inst, err := findKernel(files, *kernel)
				if err != nil {
					fmt.Fprintf(stderr, "kgen run: %v\n", err)
					return exitUser
				}
				e := &evaluation{cmd: "run", k: k, inst: inst, shape: shape, ins: ins, dist: d, seed: *seed}
				env, inputs, code := e.prepare(false)
				if code != exitOK {
					return code
				}
				outputs, err := runOnGPU(files[0], k, inst, env, inputs, tgt, tools)
				if err != nil {
					return e.fail("%v", err)
				}
				return e.finish(env, inputs, outputs, *out, *saveInputs, *show)
			}
		},
	})
}

// runOnGPU builds the one plan that computes k at env, compiles it and
// executes it on GPU 0.
func runOnGPU(file *loaded, k *ir.Kernel, inst *ir.Instance, env *ir.Env, inputs []*tensor.Tensor, tgt kgrt.Target, tools toolPaths) ([]*tensor.Tensor, error) {
	be, err := openBackend(tgt, tools, true)
	if err != nil {
		return nil, err
	}
	var p *lower.Plan
	if inst != nil && inst.Env.String() == env.String() {
		p, err = lower.Build(k, inst.Env, inst.Name, tgt.Limits())
	} else {
		p, err = lower.Build(k, nil, k.Name, tgt.Limits())
	}
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kgen-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	u := &unit{file: file, stem: p.Name, source: filepath.Join(dir, p.Name+be.ext()), plans: []*lower.Plan{p},
		manifest: &lower.Manifest{Kgen: Version, Target: tgt.String(), Source: p.Name + be.ext()}, scratch: true}
	if err := writeFileAtomic(u.source, be.emit(u.plans), 0o644); err != nil {
		return nil, err
	}
	ctx := context.Background()
	var diags diag.List
	be.compile(ctx, []*unit{u}, 1, false, &diags)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s", diags.Diags[0].Msg)
	}
	r, err := be.startRunner(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	x := &kgrt.Executor{Runner: r, Binary: u.binary}
	return x.Execute(ctx, p, env, inputs)
}
