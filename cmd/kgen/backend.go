package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"kgen.dev/kgen/backends/cuda"
	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// backend is what build, test, bench and run need of a target's backend:
// render plans as source, compile the sources, and start the runner that
// loads what was compiled. Everything above it is the same for every
// backend.
type backend interface {
	// ext is the extension of the source written for each spec file
	// (".cu").
	ext() string
	emit(plans []*lower.Plan) []byte
	// compile compiles every unit's source in parallel (at most jobs at a
	// time), setting each unit's binary and its manifest's Binary, and
	// reports failures and resource usage in diags at the spec's kernels.
	compile(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List)
	// startRunner starts a runner on the given GPU (a CUDA device index)
	// that loads this backend's binaries.
	startRunner(ctx context.Context, gpu int) (*kgrt.Runner, error)
	// toolchain names the compiler and its version for reports:
	// "nvcc 13.0.88".
	toolchain() string
}

// toolPaths are the command-line choices of toolchains; empty means
// search the usual places.
type toolPaths struct {
	nvcc   string
	hipcc  string
	python string
	// tritonInterpret runs Triton kernels in Triton's interpreter on the
	// CPU instead of on a GPU.
	tritonInterpret bool
}

// register adds the toolchain flags to fs.
func (t *toolPaths) register(fs *flag.FlagSet) {
	fs.StringVar(&t.nvcc, "nvcc", "", "the nvcc to use (a file, or a CUDA install directory; default: PATH, then /usr/local/cuda)")
	fs.StringVar(&t.hipcc, "hipcc", "", "the hipcc to use for AMD hip: targets (a file, or a ROCm directory; default: PATH, then /opt/rocm)")
	fs.BoolVar(&t.tritonInterpret, "triton-interpret", false, "run triton: targets' kernels in Triton's interpreter on the CPU (no GPU needed; slow; no timing)")
	fs.StringVar(&t.python, "python", "", "the python3 to use for the Triton backend and bench's --baseline (default: python3 on PATH)")
}

// openBackend returns tgt's backend. Its toolchain is found only when
// compile is set (build --emit-only needs none), and must then support
// tgt; without it, only ext and emit may be called.
func openBackend(tgt kgrt.Target, tools toolPaths, compile bool) (backend, error) {
	switch tgt.Backend {
	case "cuda":
		b := &cudaBackend{target: tgt}
		if compile {
			nvcc, err := kgrt.FindNVCC(tools.nvcc)
			if err != nil {
				return nil, err
			}
			if err := nvcc.SupportsTarget(tgt); err != nil {
				return nil, err
			}
			nvcc.Cache = kgrt.DefaultCompileCache()
			b.nvcc = nvcc
		}
		return b, nil
	case "hip":
		return openHIP(tgt, tools, compile)
	case "triton":
		return openTriton(tgt, tools, compile)
	}
	return nil, fmt.Errorf("no backend for target %s", tgt)
}

// cudaBackend emits CUDA C++ and compiles it with nvcc to cubins that the
// CUDA runner loads.
type cudaBackend struct {
	target kgrt.Target
	nvcc   *kgrt.NVCC
}

func (b *cudaBackend) ext() string                     { return ".cu" }
func (b *cudaBackend) emit(plans []*lower.Plan) []byte { return []byte(cuda.Emit(plans)) }
func (b *cudaBackend) toolchain() string               { return "nvcc " + b.nvcc.Version }

func (b *cudaBackend) compile(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List) {
	var cjobs []kgrt.CompileJob
	for _, u := range units {
		cjobs = append(cjobs, kgrt.CompileJob{Source: u.source, Target: b.target, OutDir: filepath.Dir(u.source), Scratch: u.scratch})
	}
	results, errs := b.nvcc.CompileAll(ctx, cjobs, jobs)
	for i, u := range units {
		if errs[i] != nil {
			u.compileFailed(diags, "the CUDA generated", errs[i])
			continue
		}
		u.compiled(results[i].Cubin, ptxasReports(results[i].Resources), results[i].Warnings, verbose, diags)
	}
}

// resourceReport is one kernel's registers, memory and spills, as its
// compiler reported them.
type resourceReport struct {
	name, text string
	spills     bool
}

func ptxasReports(rs []kgrt.FuncResources) []resourceReport {
	var out []resourceReport
	for _, r := range rs {
		out = append(out, resourceReport{r.Name, r.String(), r.SpillStores > 0 || r.SpillLoads > 0})
	}
	return out
}

// compiled records unit u's binary and reports its kernels' resources at
// the spec: spills always, as warnings, the rest as notes with -v. What
// the compiler warned of in the generated source is kgen's to fix, not
// the user's: it is shown as a note with -v.
func (u *unit) compiled(binary string, resources []resourceReport, warnings []kgrt.ToolMessage, verbose bool, diags *diag.List) {
	u.binary = binary
	u.manifest.Binary = filepath.Base(binary)
	for _, r := range resources {
		span := u.spanOf(r.name)
		if r.spills {
			diags.Warnf(span, "%s spills registers: %s", r.name, r.text)
		} else if verbose {
			diags.Add(diag.Note, span, fmt.Sprintf("%s: %s", r.name, r.text))
		}
	}
	if verbose {
		for _, w := range warnings {
			diags.Add(diag.Note, diag.Span{}, fmt.Sprintf("the compiler warns of the generated code: %s", w))
		}
	}
}

// compileFailed reports that what kgen generated for u (what: "the CUDA
// generated") does not compile: kgen's bug, not the user's, said so with
// the compiler's words.
func (u *unit) compileFailed(diags *diag.List, what string, err error) {
	diags.Errorf(diag.Span{}, "internal error: %s for %s does not compile; please report it:\n%v", what, u.file.path, err)
}

func (b *cudaBackend) startRunner(ctx context.Context, gpu int) (*kgrt.Runner, error) {
	cache, err := kgrt.DefaultRunnerCacheDir()
	if err != nil {
		return nil, err
	}
	return kgrt.StartRunner(ctx, b.nvcc.Path, cache, gpu)
}
