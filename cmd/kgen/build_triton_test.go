package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tune"
)

// needTriton returns the python that imports triton (KGEN_PYTHON, else
// python3 on PATH), skipping the test without one unless
// KGEN_REQUIRE_TOOLCHAINS=1 (CI), where it fails.
func needTriton(t *testing.T) string {
	t.Helper()
	tr, err := kgrt.FindTriton(context.Background(), os.Getenv("KGEN_PYTHON"))
	if err != nil {
		missingTool(t, fmt.Sprintf("no triton: %v (set KGEN_PYTHON to a python with triton)", err))
	}
	return tr.Python
}

// TestBuildTritonExamples compiles every kernel of every example with
// Triton's compiler for triton:sm_80 and triton:sm_90 (no GPU needed) and
// checks that the manifest names the module, which holds a KERNELS entry
// for every launch, and that -v reports each kernel's registers.
func TestBuildTritonExamples(t *testing.T) {
	python := needTriton(t)
	examples, _ := filepath.Glob("../../examples/*.kg")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		out := t.TempDir()
		code, _, errText := kgen(t, append([]string{"build", "--target", "triton:" + arch, "--python", python, "-v", "-o", out}, examples...)...)
		if code != exitOK {
			t.Fatalf("build for triton:%s: exit %d\n%s", arch, code, errText)
		}
		for _, ex := range examples {
			stem := strings.TrimSuffix(filepath.Base(ex), ".kg")
			data, err := os.ReadFile(filepath.Join(out, stem+".manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m lower.Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: manifest: %v", stem, err)
			}
			if m.Binary != stem+".py" || m.Target != "triton:"+arch {
				t.Errorf("%s: manifest binary %q, target %q", stem, m.Binary, m.Target)
			}
			text, _ := os.ReadFile(ex)
			prog, _ := frontend.CheckSource(ex, string(text))
			if want := len(prog.Kernels) + len(prog.Instances); len(m.Kernels) != want {
				t.Errorf("%s: manifest has %d kernels, the spec %d kernels and instances", stem, len(m.Kernels), want)
			}
			src, _ := os.ReadFile(filepath.Join(out, stem+".py"))
			for _, mk := range m.Kernels {
				for _, l := range mk.Launches {
					if !strings.Contains(string(src), "\n    \""+l.Function+"\": {\n") {
						t.Errorf("%s: entry point %s is not in KERNELS", stem, l.Function)
					}
					if !strings.Contains(errText, " "+l.Function+": ") || strings.Contains(errText, " "+l.Function+": -1 registers") {
						t.Errorf("%s: no resource note for %s", stem, l.Function)
					}
				}
			}
		}
	}
}

// TestBuildTritonReference compiles the reference kernels kgen test runs
// for a Triton target (the generic template, f64 accumulators, and the
// rounding plans with the declared ones) for triton:sm_90.
func TestBuildTritonReference(t *testing.T) {
	python := needTriton(t)
	buildReference(t, "triton:sm_90", toolPaths{python: python})
}

// TestBuildCUDAReference is TestBuildTritonReference for cuda:sm_90.
func TestBuildCUDAReference(t *testing.T) {
	needNVCC(t)
	buildReference(t, "cuda:sm_90", toolPaths{})
}

// buildReference compiles every example's reference unit for target.
func buildReference(t *testing.T, target string, tools toolPaths) {
	examples, _ := filepath.Glob("../../examples/*.kg")
	tgt, err := kgrt.ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	be, err := openBackend(tgt, tools, true)
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	files := loadFiles(examples, &diags)
	b := &builder{target: tgt, be: be, out: t.TempDir()}
	refs, err := b.emitReference(files)
	if err != nil {
		t.Fatal(err)
	}
	be.compile(context.Background(), refs, 4, false, &diags)
	if diags.HasErrors() {
		var sb strings.Builder
		diags.Print(&sb)
		t.Fatalf("reference kernels do not compile:\n%s", sb.String())
	}
	for _, u := range refs {
		if u.binary == "" {
			t.Errorf("%s: no binary", u.stem)
		}
	}
}

// divisionSpec divides f32 values, and takes their floor modulo, which
// divides too.
const divisionSpec = `kernel quotients<N>(X: f32[N], Y: f32[N]) -> (Q: f32[N], M: f32[N]) {
  Q[i] = X[i] / Y[i]
  M[i] = X[i] % Y[i]
}
`

// ptxDivisions compiles a module's kernels for sm_90 with Triton, as
// kgen's compile step does (runtime/python/triton_compile.py), and prints
// how many f32 divisions of each kind each kernel's PTX holds.
const ptxDivisions = `import importlib.util, json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
for name, k in m.KERNELS.items():
    src = ASTSource(fn=k["fn"], signature=k["signature"], constexprs=k["constexprs"])
    ck = triton.compiler.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": k["num_warps"], "num_stages": k["num_stages"]})
    ptx = ck.asm["ptx"]
    print(json.dumps({"kernel": name, "rn": ptx.count("div.rn.f32"), "approx": ptx.count("div.full.f32") + ptx.count("div.approx.f32")}))
`

// TestTritonDivisionCorrectlyRounded: f32 division is correctly rounded
// on every backend (docs/language.md, section 11), where Triton's own /
// compiles to div.full.f32, within 2 ulp: 1 - x*y / (|x| |y|) was 1.3e-8
// on triton:sm_90 and exactly 0 on CUDA and HIP. The compiled PTX of a
// quotient and a floor modulo has correctly rounded divisions only.
func TestTritonDivisionCorrectlyRounded(t *testing.T) {
	python := needTriton(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "div.kg")
	script := filepath.Join(dir, "divisions.py")
	if err := os.WriteFile(spec, []byte(divisionSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(ptxDivisions), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errText := kgen(t, "build", "--target", "triton:sm_90", "--python", python, "-o", dir, spec); code != exitOK {
		t.Fatalf("build: exit %d\n%s", code, errText)
	}
	out, err := exec.Command(python, script, filepath.Join(dir, "div.py")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Kernel     string
			Rn, Approx int
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		n++
		if r.Approx != 0 || r.Rn < 2 {
			t.Errorf("%s: %d correctly rounded and %d approximate f32 divisions in its PTX; want at least 2 and none", r.Kernel, r.Rn, r.Approx)
		}
	}
	if n == 0 {
		t.Fatalf("no kernels compiled:\n%s", out)
	}
}

// TestTritonDotSmem compiles Triton dots at several configurations for
// triton:sm_80 and triton:sm_90 (no GPU needed) and checks that the
// shared memory Triton's compiler reports is at least lower.TileDotSmem,
// the bound by which the template's Check refuses configurations before
// compiling them: a refused one could not have fit.
func TestTritonDotSmem(t *testing.T) {
	python := needTriton(t)
	src := `
kernel f32mm<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel bf16mm<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = sum[k](f32(A[m, k]) * f32(B[k, n]))
}
kernel pv<M, N, K>(P: f32[M, K], V: f16[K, N]) -> (O: f32[M, N]) {
  O[m, n] = sum[k](P[m, k] * f32(V[k, n]))
}
instance f = f32mm<M = 2048, N = 2048, K = 2048>
instance h = bf16mm<M = 2048, N = 2048, K = 2048>
instance p = pv<M = 2048, N = 2048, K = 2048>
`
	dir := t.TempDir()
	spec := filepath.Join(dir, "dots.kg")
	if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, diags := frontend.CheckSource(spec, src)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		tgt, err := kgrt.ParseTarget("triton:" + arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, cfg := range []string{
			"BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_stages=3,num_warps=8",
			"BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_stages=3,num_warps=8",
			"BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,num_stages=4,num_warps=4",
			"BLOCK_M=32,BLOCK_N=64,BLOCK_K=32,num_stages=1,num_warps=4",
		} {
			code, _, errText := kgen(t, "build", "--target", "triton:"+arch, "--python", python, "-v", "--config", cfg, "-o", filepath.Join(dir, arch), spec)
			if code != exitOK {
				t.Fatalf("%s %s: exit %d\n%s", arch, cfg, code, errText)
			}
			over, err := tune.ParseConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range prog.Instances {
				var shared int64 = -1
				for _, line := range strings.Split(errText, "\n") {
					if _, rest, ok := strings.Cut(line, "note: "+in.Name+": "); ok {
						if i := strings.Index(rest, " bytes shared memory"); i >= 0 {
							fields := strings.Fields(rest[:i])
							fmt.Sscan(fields[len(fields)-1], &shared)
						}
					}
				}
				if shared < 0 {
					t.Fatalf("%s %s %s: no shared memory reported\n%s", arch, cfg, in.Name, errText)
				}
				p, err := lower.Build(in.Kernel, in.Env, in.Name, tgt.Limits())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := lower.Override(p, over, tgt.Limits()); err != nil {
					t.Fatalf("%s %s %s: %v", arch, cfg, in.Name, err)
				}
				bound := lower.TileDotSmem(p.Launches[0])
				if bound > shared || bound == 0 {
					t.Errorf("%s %s %s: bound %d bytes, Triton's compile %d", arch, cfg, in.Name, bound, shared)
				}
				t.Logf("%s %s %s: bound %d, Triton %d", arch, cfg, in.Name, bound, shared)
			}
		}
	}
}
