package hip

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/runtime"
)

// requireTool skips a test when a toolchain is missing (err), unless
// KGEN_REQUIRE_TOOLCHAINS=1 (CI), where that fails it.
func requireTool(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %v", err)
	}
	t.Skip(err)
}

// examples are the specs the compile tests build: every example where
// KGEN_REQUIRE_TOOLCHAINS=1 (CI), otherwise five that reach every
// template HIP plans (row and column reductions, elementwise, transpose,
// matrix products on simt and matrix-core tiles, implicit GEMMs), since
// compiling all of them three times takes minutes of a shared machine.
func examples(t *testing.T) []string {
	t.Helper()
	paths, _ := filepath.Glob("../../examples/*.kg")
	if len(paths) == 0 {
		t.Fatal("no examples")
	}
	if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
		return paths
	}
	var some []string
	for _, p := range paths {
		switch filepath.Base(p) {
		case "softmax.kg", "reductions.kg", "matmul_lowp.kg", "conv2d.kg", "transpose.kg":
			some = append(some, p)
		}
	}
	return some
}

// emitExamples writes the examples' HIP for tgt into dir, as kgen build
// plans it, and returns the sources and, for each, its entry points.
func emitExamples(t *testing.T, tgt runtime.Target, dir string) (sources []string, entries [][]string) {
	t.Helper()
	paths := examples(t)
	lim := tgt.Limits()
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		plans := plansFor(t, p, string(text), lim)
		var names []string
		for _, pl := range plans {
			for _, l := range pl.Launches {
				names = append(names, l.Name)
			}
		}
		src := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".kg")+".hip")
		if err := os.WriteFile(src, []byte(Emit(plans, lim.Warp())), 0o644); err != nil {
			t.Fatal(err)
		}
		sources, entries = append(sources, src), append(entries, names)
	}
	return sources, entries
}

// checkSymbols checks that the binary at path holds every entry point's
// symbol, each with suffix (".kd", the kernel descriptor of a code object).
func checkSymbols(t *testing.T, path string, entries []string, suffix string) {
	t.Helper()
	bin, err := os.ReadFile(path)
	if err != nil || len(bin) == 0 {
		t.Errorf("%s: missing or empty (%v)", path, err)
		return
	}
	for _, e := range entries {
		if !strings.Contains(string(bin), e+suffix) {
			t.Errorf("%s lacks %s", filepath.Base(path), e+suffix)
		}
	}
}

// TestCompileExamplesAMD compiles the examples' HIP with hipcc for
// hip:gfx90a, hip:gfx908 and hip:gfx1030, as kgen build does, and checks
// that each code object holds every entry point. (cmd/kgen's tests build
// a few examples through kgen build itself; all of them, three times, fit
// this package's test time better.)
func TestCompileExamplesAMD(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every example three times")
	}
	h, err := runtime.FindHIPCC("")
	requireTool(t, err)
	for _, arch := range []string{"gfx90a", "gfx908", "gfx1030"} {
		t.Run(arch, func(t *testing.T) {
			tgt := runtime.Target{Backend: "hip", Arch: arch}
			dir := t.TempDir()
			sources, entries := emitExamples(t, tgt, dir)
			var jobs []runtime.HIPCompileJob
			for _, s := range sources {
				jobs = append(jobs, runtime.HIPCompileJob{Source: s, Target: tgt, OutDir: dir})
			}
			results, errs := h.CompileAll(context.Background(), jobs, 0)
			for i := range jobs {
				if errs[i] != nil {
					t.Errorf("%v", errs[i])
					continue
				}
				checkSymbols(t, results[i].CodeObject, entries[i], ".kd")
			}
		})
	}
}

// TestCompileExamplesNvidia compiles the examples' HIP for hip:nvidia:
// nvcc, the prelude's compatibility layer, sm_90 cubins holding every
// entry point.
func TestCompileExamplesNvidia(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every example")
	}
	n, err := runtime.FindNVCC(os.Getenv("KGEN_NVCC"))
	requireTool(t, err)
	tgt := runtime.Target{Backend: "hip", Arch: "nvidia"}
	dir := t.TempDir()
	sources, entries := emitExamples(t, tgt, dir)
	var jobs []runtime.CompileJob
	for _, s := range sources {
		jobs = append(jobs, runtime.CompileJob{Source: s, Target: runtime.Target{Backend: "cuda", Arch: runtime.HIPNvidiaArch}, OutDir: dir, Language: "cu"})
	}
	results, errs := n.CompileAll(context.Background(), jobs, 0)
	for i := range jobs {
		if errs[i] != nil {
			t.Errorf("%v", errs[i])
			continue
		}
		checkSymbols(t, results[i].Cubin, entries[i], "")
	}
}

// TestMFMAOnlyOnGfx90a: f16 and bf16 products take the matrix cores on
// gfx90a and the simt tile on gfx908, gfx1030 and nvidia.
func TestMFMAOnlyOnGfx90a(t *testing.T) {
	text := "kernel h<M, N, K>(A: f16[M, K], B: f16[K, N]) -> (C: f32[M, N]) {\n  C[m, n] = sum[k](f32(A[m, k]) * f32(B[k, n]))\n}\n" +
		"kernel b<M, N, K>(A: bf16[M, K], B: bf16[N, K]) -> (C: bf16[M, N]) @acc(f32) {\n  C[m, n] = sum[k](A[m, k] * B[n, k])\n}\n"
	want := map[string]string{"gfx90a": "matmul-mfma", "gfx908": "matmul-simt", "gfx1030": "matmul-simt", "nvidia": "matmul-simt"}
	for arch, tmpl := range want {
		lim := runtime.Target{Backend: "hip", Arch: arch}.Limits()
		for _, p := range plansFor(t, "mm.kg", text, lim) {
			for _, l := range p.Launches {
				if l.Template.Name() != tmpl {
					t.Errorf("%s on %s: template %s, want %s", l.Name, arch, l.Template.Name(), tmpl)
				}
				if err := l.Check(lim); err != nil {
					t.Errorf("%s on %s: %v", l.Name, arch, err)
				}
			}
		}
	}
}
