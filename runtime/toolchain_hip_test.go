package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireHIPCC returns the machine's hipcc, skipping the test without one
// unless KGEN_REQUIRE_TOOLCHAINS=1 (CI), where that fails it.
func requireHIPCC(t *testing.T) *HIPCC {
	t.Helper()
	h, err := FindHIPCC(os.Getenv("KGEN_HIPCC"))
	if err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %v", err)
		}
		t.Skipf("no hipcc (set KGEN_REQUIRE_TOOLCHAINS=1 to make this a failure): %v", err)
	}
	return h
}

// A log of hipcc 5.2 (clang 15) for two kernels, cut to its remarks.
const hipRemarks = `k.hip:4:1: remark: Function Name: scale [-Rpass-analysis=kernel-resource-usage]
extern "C" __global__ void __launch_bounds__(256) scale(float* x) {
^
k.hip:4:1: remark:     SGPRs: 8 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     VGPRs: 6 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     Occupancy [waves/SIMD]: 8 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark: Function Name: gemm [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     SGPRs: 84 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs: 256 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     AGPRs: 139 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     ScratchSize [bytes/lane]: 516 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     Occupancy [waves/SIMD]: 1 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs Spill: 40 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     LDS Size [bytes/block]: 16896 [-Rpass-analysis=kernel-resource-usage]
`

func TestParseHIPResourceUsage(t *testing.T) {
	got := ParseHIPResourceUsage(hipRemarks)
	want := []HIPResources{
		{Name: "scale", SGPRs: 8, VGPRs: 6, Occupancy: 8},
		{Name: "gemm", SGPRs: 84, VGPRs: 256, AGPRs: 139, ScratchBytes: 516, Occupancy: 1, VGPRSpill: 40, LDSBytes: 16896},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d kernels, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kernel %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].Spills() || !got[1].Spills() {
		t.Errorf("Spills: scale %v, gemm %v; want false, true", got[0].Spills(), got[1].Spills())
	}
}

func TestFindHIPCCFlag(t *testing.T) {
	if _, err := FindHIPCC(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "--hipcc") {
		t.Errorf("missing --hipcc path: err = %v, want one naming --hipcc", err)
	}
	// A directory without bin/hipcc.
	if _, err := FindHIPCC(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not an executable hipcc") {
		t.Errorf("directory without hipcc: err = %v", err)
	}
	// A fake hipcc that prints its version, in a ROCm-like directory.
	dir := t.TempDir()
	p := filepath.Join(dir, "bin", "hipcc")
	os.MkdirAll(filepath.Dir(p), 0o755)
	script := "#!/bin/sh\necho 'HIP version: 5.2.21153-0'\necho 'Debian clang version 15.0.6'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := FindHIPCC(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != "5.2.21153-0" || h.Clang != "Debian clang version 15.0.6" || h.Path != p {
		t.Errorf("got %+v", h)
	}
}

// TestHIPCompileChecksOutput: a hipcc that exits 0 without writing the
// code object (as some setups do on failure) is a failed compile.
func TestHIPCompileChecksOutput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hipcc")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'HIP version: 5.2.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := FindHIPCC(p)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "k.hip")
	os.WriteFile(src, []byte("// empty\n"), 0o644)
	_, err = h.Compile(context.Background(), HIPCompileJob{Source: src, Target: Target{"hip", "gfx90a"}, OutDir: dir})
	var herr *HIPCCError
	if !errors.As(err, &herr) || !strings.Contains(err.Error(), "wrote no code object") {
		t.Fatalf("err = %v, want a HIPCCError saying no code object was written", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "k.gfx90a.hsaco")); err == nil {
		t.Errorf("a code object was left behind")
	}
	if _, err := h.Compile(context.Background(), HIPCompileJob{Source: src, Target: Target{"hip", "nvidia"}, OutDir: dir}); err == nil {
		t.Errorf("hipcc compiled for hip:nvidia, which is nvcc's")
	}
}

// TestHIPCompile compiles a kernel for each AMD target with the machine's
// hipcc: the code object holds the kernel's descriptor symbol, the
// resource report names it, and a source with an error fails with the
// error at its line.
func TestHIPCompile(t *testing.T) {
	h := requireHIPCC(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "k.hip")
	text := "#include <hip/hip_runtime.h>\n" +
		"extern \"C\" __global__ void __launch_bounds__(256) kg_twice(float* x) {\n" +
		"  x[threadIdx.x] = __shfl_xor(x[threadIdx.x], 1, warpSize) * 2.0f;\n}\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"gfx90a", "gfx908", "gfx1030"} {
		res, err := h.Compile(context.Background(), HIPCompileJob{Source: src, Target: Target{"hip", arch}, OutDir: dir})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		obj, err := os.ReadFile(res.CodeObject)
		if err != nil {
			t.Fatal(err)
		}
		if res.CodeObject != filepath.Join(dir, "k."+arch+".hsaco") || !strings.Contains(string(obj), "kg_twice.kd") {
			t.Errorf("%s: code object %s lacks kg_twice.kd", arch, res.CodeObject)
		}
		if len(res.Resources) != 1 || res.Resources[0].Name != "kg_twice" || res.Resources[0].VGPRs == 0 {
			t.Errorf("%s: resources %+v", arch, res.Resources)
		}
	}
	bad := filepath.Join(dir, "bad.hip")
	os.WriteFile(bad, []byte("#include <hip/hip_runtime.h>\n__global__ void k() {\n  undeclared();\n}\n"), 0o644)
	_, err := h.Compile(context.Background(), HIPCompileJob{Source: bad, Target: Target{"hip", "gfx90a"}, OutDir: dir})
	var herr *HIPCCError
	if !errors.As(err, &herr) || len(herr.Messages) == 0 || herr.Messages[0].Line != 3 {
		t.Fatalf("err = %v, want a HIPCCError with the error at line 3", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.gfx90a.hsaco")); err == nil {
		t.Errorf("a failed compile left a code object")
	}
}

// TestHIPTargets: the HIP targets parse, and their limits are the AMD
// ISA guides' (wavefronts, 64 KiB of LDS a block) with none of NVIDIA's
// instructions, matrix cores on gfx90a only.
func TestHIPTargets(t *testing.T) {
	want := map[string]struct {
		warp, smem int64
		mfma       bool
	}{
		"gfx90a": {64, 64 << 10, true}, "gfx908": {64, 64 << 10, false},
		"gfx1030": {32, 64 << 10, false}, "nvidia": {32, 64 << 10, false},
	}
	for arch, w := range want {
		tg, err := ParseTarget("hip:" + arch)
		if err != nil {
			t.Fatal(err)
		}
		lim := tg.Limits()
		if lim.Warp() != w.warp || lim.MaxSmem != w.smem || lim.MFMA != w.mfma || !lim.NoMMASync || lim.Wgmma || lim.Clusters || lim.MaxThreads != 1024 {
			t.Errorf("hip:%s: limits %+v; want warp %d, %d bytes of LDS, MFMA %v, no CUDA instructions", arch, lim, w.warp, w.smem, w.mfma)
		}
	}
	// CUDA targets keep mma.sync and warps of 32.
	for _, s := range []string{"cuda:sm_80", "cuda:sm_90a"} {
		tg, _ := ParseTarget(s)
		if lim := tg.Limits(); lim.NoMMASync || lim.MFMA || lim.Warp() != 32 {
			t.Errorf("%s: limits %+v", s, lim)
		}
	}
}
