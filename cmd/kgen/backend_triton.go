package main

import (
	"context"
	"fmt"
	"path/filepath"

	"kgen.dev/kgen/backends/triton"
	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// tritonBackend emits a Triton Python module per spec file, checks that
// every kernel compiles for the target with Triton's compiler (no GPU
// needed), and runs modules through the Triton runner, which compiles
// them again for the GPU it finds.
type tritonBackend struct {
	target kgrt.Target
	triton *kgrt.Triton
	// interpret runs the kernels in Triton's interpreter on the CPU
	// (--triton-interpret).
	interpret bool
}

func openTriton(tgt kgrt.Target, tools toolPaths, compile bool) (backend, error) {
	b := &tritonBackend{target: tgt, interpret: tools.tritonInterpret}
	if compile {
		t, err := kgrt.FindTriton(context.Background(), tools.python)
		if err != nil {
			return nil, err
		}
		b.triton = t
	}
	return b, nil
}

func (b *tritonBackend) ext() string                     { return ".py" }
func (b *tritonBackend) emit(plans []*lower.Plan) []byte { return []byte(triton.Emit(plans)) }
func (b *tritonBackend) toolchain() string               { return b.triton.String() }

// compile runs Triton's compiler over every kernel of each module; the
// module itself is what the runner loads.
func (b *tritonBackend) compile(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List) {
	gt := kgrt.TritonTarget(b.target)
	for _, u := range units {
		ks, err := b.triton.CompileModule(ctx, u.source, gt, jobs)
		if err != nil {
			diags.Errorf(diag.Span{}, "internal error: the Triton module generated for %s does not load; please report it:\n%v", u.file.path, err)
			continue
		}
		failed := false
		for _, k := range ks {
			span := u.spanOf(k.Name)
			switch {
			case !k.OK:
				failed = true
				diags.Errorf(span, "internal error: the Triton kernel %s generated for %s does not compile for %s; please report it:\n%s", k.Name, u.file.path, b.target, k.Error)
			case k.LocalBytes > 0:
				diags.Warnf(span, "%s spills registers: %s", k.Name, k)
			case verbose:
				diags.Add(diag.Note, span, fmt.Sprintf("%s: %s", k.Name, k))
			}
		}
		if !failed {
			u.binary = u.source
			u.manifest.Binary = filepath.Base(u.source)
		}
	}
}

func (b *tritonBackend) startRunner(ctx context.Context, gpu int) (*kgrt.Runner, error) {
	if b.interpret {
		return kgrt.StartTritonInterpreter(ctx, b.triton.Python, "")
	}
	return kgrt.StartPythonRunner(ctx, b.triton.Python, "", gpu)
}
