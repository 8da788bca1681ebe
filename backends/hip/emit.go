// Package hip renders lowering plans as HIP C++ for AMD GPUs (hipcc) and,
// through kgen's own compatibility layer, for NVIDIA GPUs (nvcc, target
// hip:nvidia). The kernels are written by backends/cuda's C++ emitter in
// HIP's dialect: this package holds what differs, the prelude's pieces for
// HIP (headers and types, wavefront reductions, matrix-core tiles), and
// the same ABI (docs/abi.md).
package hip

import (
	"embed"

	"kgen.dev/kgen/backends/cuda"
	"kgen.dev/kgen/lower"
)

//go:embed prelude
var preludeFS embed.FS

func piece(name string) string {
	b, err := preludeFS.ReadFile("prelude/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

// Dialect is HIP: kgen's bfloat16 type (HIP's differs across ROCm
// releases), shuffles with HIP's signatures at the target's wavefront size
// (KG_WARP), and no minimum-blocks launch bound.
var Dialect = &cuda.Dialect{
	Prelude: cuda.PreludeParts{
		Head:        piece("head.h"),
		BlockReduce: piece("reduce.h"),
		ColCombine:  piece("colreduce.h"),
		Widen:       piece("widen.h"),
		Matrix:      piece("matrix.h"),
	}.Assemble(),
	BF16:      "kg_bf16",
	WarpMacro: "KG_WARP",
}

// Emit renders the plans as one HIP source file for a target with
// wavefronts of warp threads (the plans' own Limits, or the generic
// reference plans, which use no shuffles). The same plans give
// byte-identical text.
func Emit(plans []*lower.Plan, warp int64) string { return Dialect.Emit(plans, warp) }
