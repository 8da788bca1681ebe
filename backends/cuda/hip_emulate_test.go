package cuda

import (
	"os"
	"os/exec"
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

// TestEmulatedHIP runs the HIP kgen emits for every example on the CPU
// and compares every output with the reference interpreter, as
// TestEmulatedExamples does for CUDA, for hip:gfx90a: wavefronts of 64,
// so that the block and column reductions' shuffles span 64 lanes, f16
// and bf16 products on the matrix cores (hip.h emulates the instruction),
// and no CUDA instruction. No AMD GPU is needed: this is the evidence that
// the wavefront-64 code is right. At wavefronts of 32 (hip:gfx1030, like
// hip:nvidia), where the HIP code is CUDA's but for its spelling, two
// examples with many block and column reductions run: all of them would
// take this package past its test time for little.
func TestEmulatedHIP(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every example with g++")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	paths, _ := filepath.Glob("../../examples/*.kg")
	if len(paths) == 0 {
		t.Fatal("no examples")
	}
	wave32 := []string{"softmax.kg", "reductions.kg"} // row-reduce and col-reduce launches
	d := hipDialect(t)
	for _, target := range []string{"hip:gfx90a", "hip:gfx1030"} {
		tgt, err := runtime.ParseTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		tg := emuTarget{d: d, lim: tgt.Limits(), shims: []string{"testdata/host/shim.h", "testdata/host/hip.h"}}
		for _, path := range paths {
			if tg.lim.Warp() == 32 && !slices.Contains(wave32, filepath.Base(path)) {
				continue
			}
			t.Run(target+"/"+filepath.Base(path), func(t *testing.T) {
				t.Parallel()
				emulateFileOn(t, gxx, path, tg)
			})
		}
	}
}
