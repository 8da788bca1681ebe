package main

import (
	"context"
	"fmt"
	"path/filepath"

	"kgen.dev/kgen/backends/hip"
	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// hipBackend emits HIP C++. For an AMD target it compiles with hipcc to
// code objects, which no runner here loads (build only); for hip:nvidia it
// compiles the same source with nvcc, behind the prelude's compatibility
// layer, to cubins that the CUDA runner loads.
type hipBackend struct {
	target kgrt.Target
	warp   int64
	hipcc  *kgrt.HIPCC // AMD targets
	nvcc   *kgrt.NVCC  // hip:nvidia
}

func openHIP(tgt kgrt.Target, tools toolPaths, compile bool) (backend, error) {
	b := &hipBackend{target: tgt, warp: tgt.Limits().Warp()}
	if !compile {
		return b, nil
	}
	if tgt.Arch == "nvidia" {
		nvcc, err := kgrt.FindNVCC(tools.nvcc)
		if err != nil {
			return nil, err
		}
		if err := nvcc.SupportsTarget(b.cudaTarget()); err != nil {
			return nil, fmt.Errorf("%s compiles for %s: %v", tgt, kgrt.HIPNvidiaArch, err)
		}
		nvcc.Cache = kgrt.DefaultCompileCache()
		b.nvcc = nvcc
		return b, nil
	}
	hipcc, err := kgrt.FindHIPCC(tools.hipcc)
	if err != nil {
		return nil, err
	}
	hipcc.Cache = kgrt.DefaultCompileCache()
	b.hipcc = hipcc
	return b, nil
}

// cudaTarget is the CUDA target that hip:nvidia's sources compile for.
func (b *hipBackend) cudaTarget() kgrt.Target {
	return kgrt.Target{Backend: "cuda", Arch: kgrt.HIPNvidiaArch}
}

func (b *hipBackend) ext() string                     { return ".hip" }
func (b *hipBackend) emit(plans []*lower.Plan) []byte { return []byte(hip.Emit(plans, b.warp)) }

func (b *hipBackend) toolchain() string {
	if b.nvcc != nil {
		return "nvcc " + b.nvcc.Version
	}
	return "hipcc " + b.hipcc.Version
}

func (b *hipBackend) compile(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List) {
	if b.nvcc != nil {
		b.compileNvidia(ctx, units, jobs, verbose, diags)
		return
	}
	var hjobs []kgrt.HIPCompileJob
	for _, u := range units {
		hjobs = append(hjobs, kgrt.HIPCompileJob{Source: u.source, Target: b.target, OutDir: filepath.Dir(u.source), Scratch: u.scratch})
	}
	results, errs := b.hipcc.CompileAll(ctx, hjobs, jobs)
	for i, u := range units {
		if errs[i] != nil {
			u.compileFailed(diags, "the HIP generated", errs[i])
			continue
		}
		var reports []resourceReport
		for _, r := range results[i].Resources {
			reports = append(reports, resourceReport{r.Name, r.String(), r.Spills()})
		}
		u.compiled(results[i].CodeObject, reports, results[i].Warnings, verbose, diags)
	}
}

// compileNvidia compiles hip:nvidia's sources as CUDA (nvcc -x cu).
func (b *hipBackend) compileNvidia(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List) {
	var cjobs []kgrt.CompileJob
	for _, u := range units {
		cjobs = append(cjobs, kgrt.CompileJob{Source: u.source, Target: b.cudaTarget(), OutDir: filepath.Dir(u.source), Language: "cu", Scratch: u.scratch})
	}
	results, errs := b.nvcc.CompileAll(ctx, cjobs, jobs)
	for i, u := range units {
		if errs[i] != nil {
			u.compileFailed(diags, "the HIP generated (compiled by nvcc for "+b.target.String()+")", errs[i])
			continue
		}
		u.compiled(results[i].Cubin, ptxasReports(results[i].Resources), results[i].Warnings, verbose, diags)
	}
}

func (b *hipBackend) startRunner(ctx context.Context, gpu int) (*kgrt.Runner, error) {
	if b.nvcc == nil {
		return nil, fmt.Errorf("%s is a compile-only target here: kgen has no runner for AMD GPUs (run HIP on an NVIDIA GPU with --target hip:nvidia)", b.target)
	}
	cache, err := kgrt.DefaultRunnerCacheDir()
	if err != nil {
		return nil, err
	}
	return kgrt.StartRunner(ctx, b.nvcc.Path, cache, gpu)
}
