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
