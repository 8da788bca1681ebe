package lower

import (
	"fmt"

	"kgen.dev/kgen/ir"
)

// matmulMfma computes a 16-bit matrix product on AMD's matrix cores (CDNA2
// gfx90a: v_mfma_f32_32x32x8f16 and v_mfma_f32_32x32x8bf16_1k):
// WAVES_M x WAVES_N wavefronts of 64 lanes share a BM x BN output tile,
// each computing a (BM / WAVES_M) x (BN / WAVES_N) sub-tile as 32 x 32
// blocks of 16 f32 accumulators a lane; K advances BK at a time through
// LDS, where both operands are stored K-major (transposed on the way in
// when they are not), so that a lane's four consecutive k of a row are
// one 8-byte read. Output tiles are visited as matmul-mma's are. gfx908
// (CDNA1) has the f16 instruction but not bf16_1k; kgen plans it, like
// RDNA2, with matmul-simt.
type matmulMfma struct{}

// MfmaK is the K of one matrix-core instruction.
const MfmaK = 8

func (matmulMfma) Name() string              { return "matmul-mfma" }
func (matmulMfma) Available(lim Limits) bool { return lim.MFMA }
func (matmulMfma) Accepts(s *ir.Stmt) bool {
	m := MatchMatmul(s)
	return m != nil && m.TensorCores && m.Elem.Size() == 2 // f16 and bf16; tf32 products go to matmul-simt
}

func (matmulMfma) Space() map[string][]int64 {
	return map[string][]int64{
		"BM": {64, 128, 256}, "BN": {64, 128, 256}, "BK": {16, 32, 64}, "WAVES_M": {1, 2, 4}, "WAVES_N": {1, 2, 4},
	}
}

// Default: 128 x 128 tiles of four wavefronts (64 x 64 each: four 32 x 32
// blocks, 64 accumulators a lane), K 32 at a time: the shape rocBLAS's
// and Composable Kernel's f16 GEMMs start from on MI200. Not measured:
// there is no AMD GPU here.
func (matmulMfma) Default(*Launch) Config {
	return Config{"BM": 128, "BN": 128, "BK": 32, "WAVES_M": 2, "WAVES_N": 2}
}

// Check holds the tile's own constraints: each wavefront's sub-tile is
// whole 32 x 32 blocks, and the block's threads stage the A and B tiles
// in whole 8-element chunks.
func (matmulMfma) Check(l *Launch) error {
	c := l.Config
	threads := 64 * c["WAVES_M"] * c["WAVES_N"]
	switch {
	case c["BM"]%(32*c["WAVES_M"]) != 0 || c["BN"]%(32*c["WAVES_N"]) != 0:
		return fmt.Errorf("each of the %d x %d wavefronts needs whole 32 x 32 blocks of the %d x %d tile", c["WAVES_M"], c["WAVES_N"], c["BM"], c["BN"])
	case (c["BM"]*c["BK"]/8)%threads != 0 || (c["BN"]*c["BK"]/8)%threads != 0:
		return fmt.Errorf("the %d threads must split BM x BK and BN x BK into whole 8-element chunks", threads)
	}
	return nil
}

func (matmulMfma) Grid(l *Launch) Grid {
	c := l.Config
	return Grid{Blocks: capBlocks(Tiles(l)), Threads: 64 * c["WAVES_M"] * c["WAVES_N"], Smem: MfmaSmem(c)}
}

// MfmaPad is the padding, in elements, of the mfma template's K-major LDS
// rows: 8 (16 bytes) keeps rows 16-byte aligned for whole-chunk stores
// and staggers the rows that a wavefront's lanes read across LDS banks.
const MfmaPad = 8

// MfmaSmem is the mfma template's LDS: the A and B tiles, K-major, with
// padded rows of 2-byte elements.
func MfmaSmem(c Config) int64 { return (c["BM"] + c["BN"]) * (c["BK"] + MfmaPad) * 2 }
