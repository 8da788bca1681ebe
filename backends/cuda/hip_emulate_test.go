package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"kgen.dev/kgen/runtime"
)

// hipDialect is backends/hip's Dialect, assembled here from its prelude
// files: package hip imports this one, so this package's tests cannot
// import it. Keep the two in step (backends/hip/emit.go).
func hipDialect(t *testing.T) *Dialect {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("../hip/prelude", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return &Dialect{
		Prelude: PreludeParts{
			Head: read("head.h"), BlockReduce: read("reduce.h"), ColCombine: read("colreduce.h"),
			Widen: read("widen.h"), Matrix: read("matrix.h"),
		}.Assemble(),
		BF16:      "kg_bf16",
		WarpMacro: "KG_WARP",
	}
}

// TestEmulatedHIP runs the HIP kgen emits for examples on the CPU and
// compares every output with the reference interpreter, as
// TestEmulatedExamples does for CUDA, for hip:gfx90a: wavefronts of 64,
// so that the block and column reductions' shuffles span 64 lanes, f16
// and bf16 products on the matrix cores (hip.h emulates the instruction),
// and no CUDA instruction. No AMD GPU is needed: this is the evidence that
// the wavefront-64 code is right. It takes examples that reach every
// template a HIP target plans, and every example with
// KGEN_EMULATE_ALL=1 (all of them pass; with the CUDA emulation they take
// this package past its 10 minutes on a busy machine). At wavefronts of
// 32 (hip:gfx1030, like hip:nvidia), where the HIP code is CUDA's but for
// its spelling, the two examples with the most block and column
// reductions run.
func TestEmulatedHIP(t *testing.T) {
	gxx := emulatorGxx(t)
	paths, _ := filepath.Glob("../../examples/*.kg")
	if len(paths) == 0 {
		t.Fatal("no examples")
	}
	all := os.Getenv("KGEN_EMULATE_ALL") == "1"
	picks := map[int64][]string{
		// row-reduce, col-reduce, matmul-mfma and matmul-simt, igemm-simt,
		// transpose, window, elementwise (bf16), generic
		64: {"softmax.kg", "reductions.kg", "matmul_lowp.kg", "conv2d.kg", "transpose.kg", "depthwise_conv.kg", "elementwise.kg", "layernorm.kg", "attention.kg"},
		32: {"softmax.kg", "reductions.kg"}, // row-reduce and col-reduce launches
	}
	d := hipDialect(t)
	for _, target := range []string{"hip:gfx90a", "hip:gfx1030"} {
		tgt, err := runtime.ParseTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		tg := emuTarget{d: d, lim: tgt.Limits(), shims: []string{"testdata/host/shim.h", "testdata/host/hip.h"}}
		for _, path := range paths {
			if !slices.Contains(picks[tg.lim.Warp()], filepath.Base(path)) && !(all && tg.lim.Warp() == 64) {
				continue
			}
			t.Run(target+"/"+filepath.Base(path), func(t *testing.T) {
				t.Parallel()
				emulateFileOn(t, gxx, path, tg)
			})
		}
	}
}
