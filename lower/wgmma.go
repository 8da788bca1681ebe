package lower

import (
	"fmt"

	"kgen.dev/kgen/ir"
)

// matmulWgmma computes a 16-bit matrix product on Hopper's warpgroup
// tensor cores (wgmma, sm_90a): WGS warpgroups of 128 threads share a
// BM x BN output tile, each multiplying BM / WGS of its rows by the whole
// of BN with m64nBNk16 products that read both operands from shared
// memory; K advances 64 at a time through a STAGES-deep cp.async ring of
// 128-byte-swizzled tiles that all the block's threads fill. Output tiles
// are visited as matmul-mma's are.
//
// (A warp-specialized variant, a producer warpgroup feeding two consumers
// through mbarriers with setmaxnreg splitting the registers, was correct
// but slower on the H100 with cp.async copies: 500 us against 304 us for
// bf16 4096^3, 2026-11-23.)
type matmulWgmma struct{}

// WgmmaBK is the wgmma template's K step: 64 16-bit elements, one
// 128-byte swizzle row.
const WgmmaBK = 64

func (matmulWgmma) Name() string              { return "matmul-wgmma" }
func (matmulWgmma) Available(lim Limits) bool { return lim.Wgmma }
func (matmulWgmma) Accepts(s *ir.Stmt) bool {
	m := MatchMatmul(s)
	return m != nil && m.TensorCores && m.Elem.Size() == 2 // tf32 products stay on matmul-mma
}

func (matmulWgmma) Space() map[string][]int64 {
	return map[string][]int64{
		"BM": {64, 128, 256}, "BN": {64, 128, 256}, "WGS": {1, 2}, "STAGES": {3, 4, 5},
	}
}

// Default: 128 x 256 tiles of two warpgroups for products known to have
// enough of them to fill a large GPU twice over, else 128 x 128; four
// stages (two tiles in flight while one multiplies). bf16 4096^3 on the
// H100, 2026-11-23: 304 us (452 TFLOP/s) with 128 x 256, 331 with
// 256 x 128; with 3 stages 364 and 366.
func (t matmulWgmma) Default(l *Launch) Config {
	c := Config{"BM": 128, "BN": 128, "WGS": 2, "STAGES": 4}
	if m := MatchMatmul(l.Stmt); m != nil && fillsTwice(m, 128, 256) {
		c["BN"] = 256
	}
	return c
}

// Check holds the tile's own constraints: each warpgroup's rows are whole
// m64 products, its accumulators fit in registers (at most 128 a thread),
// and the threads stage both tiles in whole 16-byte chunks.
func (matmulWgmma) Check(l *Launch) error {
	c := l.Config
	rows, threads := c["BM"]/c["WGS"], 128*c["WGS"]
	switch {
	case rows%64 != 0:
		return fmt.Errorf("each of the %d warpgroups needs a multiple of 64 rows of BM = %d", c["WGS"], c["BM"])
	case rows/64*c["BN"]/2 > 128:
		return fmt.Errorf("%d accumulators a thread do not fit in registers (at most 128: BM / WGS x BN / 128)", rows/64*c["BN"]/2)
	case (c["BM"]*WgmmaBK/8)%threads != 0 || (c["BN"]*WgmmaBK/8)%threads != 0:
		return fmt.Errorf("the %d threads must split BM x 64 and BN x 64 into whole 8-element chunks", threads)
	}
	return nil
}

func (t matmulWgmma) Grid(l *Launch) Grid {
	c := l.Config
	return Grid{Blocks: capBlocks(Tiles(l)), Threads: 128 * c["WGS"], Smem: WgmmaSmem(c), MinBlocks: 1}
}

// WgmmaSmem is the wgmma template's dynamic shared memory: STAGES copies
// of the A and B tiles in 2-byte elements, and 1024 bytes to align the
// ring to the swizzle's atom.
func WgmmaSmem(c Config) int64 {
	return c["STAGES"]*(c["BM"]+c["BN"])*WgmmaBK*2 + 1024
}
