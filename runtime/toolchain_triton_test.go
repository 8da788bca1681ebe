package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// needTriton finds a python with triton (KGEN_PYTHON, else python3 on
// PATH), skipping without one unless KGEN_REQUIRE_TOOLCHAINS=1.
func needTriton(t *testing.T) *Triton {
	t.Helper()
	tr, err := FindTriton(context.Background(), os.Getenv("KGEN_PYTHON"))
	if err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %v (set KGEN_PYTHON to a python with triton)", err)
		}
		t.Skipf("no triton: %v", err)
	}
	return tr
}

// tinyModule has the layout kgen emits: one kernel that compiles and one
// that does not (it loads through an integer, not a pointer).
const tinyModule = `import math
import triton
import triton.language as tl


@triton.jit
def good(x, y, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + p, tl.load(x + p, mask=p < n, other=0) * 2.0, mask=p < n)


@triton.jit
def bad(x, y, n, BLOCK: tl.constexpr):
    tl.store(y, tl.load(n))


KERNELS = {
    "good": {"fn": good, "signature": {"x": "*fp32", "y": "*fp32", "n": "i64", "BLOCK": "constexpr"}, "constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 1},
    "bad": {"fn": bad, "signature": {"x": "*fp32", "y": "*fp32", "n": "i64", "BLOCK": "constexpr"}, "constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 1},
}
`

// TestTritonCompileModule compiles a module's kernels without a GPU for
// sm_80, sm_90 and AMD's gfx90a: the good kernel compiles with the warps
// it asks for (128 threads: .reqntid in its PTX), registers and no local
// memory; the bad one reports Triton's error.
func TestTritonCompileModule(t *testing.T) {
	tr := needTriton(t)
	path := filepath.Join(t.TempDir(), "tiny.py")
	if err := os.WriteFile(path, []byte(tinyModule), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, gt := range []GPUTarget{TritonTarget(Target{"triton", "sm_80"}), TritonTarget(Target{"triton", "sm_90"}), {Backend: "hip", Arch: "gfx90a", Warp: 64}} {
		ks, err := tr.CompileModule(context.Background(), path, gt, 2)
		if err != nil {
			t.Fatalf("%v: %v", gt, err)
		}
		if len(ks) != 2 || ks[0].Name != "good" || ks[1].Name != "bad" {
			t.Fatalf("%v: results %+v", gt, ks)
		}
		good, bad := ks[0], ks[1]
		if !good.OK || good.NumWarps != 4 {
			t.Errorf("%v: good: %+v", gt, good)
		}
		if gt.Backend == "cuda" && (good.Registers <= 0 || good.LocalBytes != 0) {
			t.Errorf("%v: good: registers %d, local %d", gt, good.Registers, good.LocalBytes)
		}
		if bad.OK || !strings.Contains(bad.Error, "CompilationError") {
			t.Errorf("%v: bad: %+v", gt, bad)
		}
	}
}

// TestTritonTargets: triton:sm_80 and triton:sm_90 plan with the tile
// templates and name Triton's GPUTarget.
func TestTritonTargets(t *testing.T) {
	for arch, cc := range map[string]string{"sm_80": "80", "sm_90": "90"} {
		tgt, err := ParseTarget("triton:" + arch)
		if err != nil {
			t.Fatal(err)
		}
		if lim := tgt.Limits(); !lim.Tiles || lim.Wgmma || lim.Clusters {
			t.Errorf("%s: limits %+v", tgt, lim)
		}
		if gt := TritonTarget(tgt); gt != (GPUTarget{"cuda", cc, 32}) {
			t.Errorf("%s: %+v", tgt, gt)
		}
	}
	if _, err := ParseTarget("triton:sm_90a"); err == nil {
		t.Error("triton:sm_90a parsed")
	}
}
