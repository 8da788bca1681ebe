package cuda

import (
	"embed"
	"fmt"

	"kgen.dev/kgen/ir"
)

// The prelude's pieces: those every dialect shares (the language's scalar
// semantics, vectors, the matrix tiles' operands and the CUDA-core tile)
// and CUDA's own (headers, warp shuffles and clusters, the tensor-core
// tiles).
//
//go:embed prelude
var preludeFS embed.FS

func piece(name string) string {
	b, err := preludeFS.ReadFile("prelude/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

// PreludeParts are a dialect's own pieces of the prelude; Assemble splices
// them between the pieces every dialect shares, in the order the shared
// ones need them.
type PreludeParts struct {
	// Head includes the platform's headers and defines its types; before
	// the scalar functions.
	Head string
	// BlockReduce defines kg_block_reduce (and, for CUDA, the clusters'
	// kg_cluster_reduce): warp shuffles and shared memory.
	BlockReduce string
	// ColCombine defines kg_col_combine (template col-reduce), and
	// kg_shfl_xor unless BlockReduce did.
	ColCombine string
	// Widen defines kg_widen for the matrix tiles' 16-bit operands (and
	// tf32 ones).
	Widen string
	// Matrix defines KG_DYNAMIC_SMEM and the matrix-instruction tiles the
	// dialect's templates use.
	Matrix string
}

// Assemble is the whole prelude.
func (p PreludeParts) Assemble() string {
	return p.Head + piece("scalar.h") + p.BlockReduce + piece("vec.h") + p.ColCombine + piece("group.h") + piece("tiles.h") +
		p.Widen + piece("rows.h") + p.Matrix + piece("simt.h")
}

// Dialect is a C++ GPU dialect that plans are rendered in: CUDA, or HIP
// (backends/hip). The kernels' text is the same in every dialect but for
// the names and spellings a Dialect gives; the target's facts (warp size,
// instructions) come with the plans, in each launch's Limits.
type Dialect struct {
	// Prelude is the text after the banner (PreludeParts.Assemble).
	Prelude string
	// BF16 is the C type of bf16 values.
	BF16 string
	// WarpMacro, when set, is the macro the source defines to the
	// target's warp size before the prelude (HIP: 64 on CDNA, 32 on RDNA
	// and NVIDIA), which the prelude's reductions read; CUDA's prelude has
	// 32 built in.
	WarpMacro string
	// MinBlocks: __launch_bounds__ takes a launch's minimum blocks per
	// multiprocessor as its second argument (CUDA). HIP reads a second
	// argument as waves per execution unit, so its sources give only the
	// block size.
	MinBlocks bool
}

// CUDA is the CUDA dialect.
var CUDA = &Dialect{
	Prelude: PreludeParts{
		Head:        piece("cuda_head.cuh"),
		BlockReduce: piece("cuda_reduce.cuh"),
		ColCombine:  piece("cuda_colreduce.cuh"),
		Widen:       piece("cuda_widen.cuh"),
		Matrix:      piece("cuda_matrix.cuh"),
	}.Assemble(),
	BF16:      "__nv_bfloat16",
	MinBlocks: true,
}

// prelude is CUDA's prelude, which the tests strip from emitted sources.
var prelude = CUDA.Prelude

// cType is the C type of a storage or compute dtype in dialect d.
func (d *Dialect) cType(t ir.DType) string {
	if t == ir.BF16 {
		return d.BF16
	}
	return cType(t)
}

// warpDefine is the line that defines the warp size for the prelude, or
// "" when the dialect's prelude has it built in.
func (d *Dialect) warpDefine(warp int64) string {
	if d.WarpMacro == "" {
		return ""
	}
	return fmt.Sprintf("#define %s %d\n", d.WarpMacro, warp)
}
