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

// Check holds the tile's own constraints (those of KgWgmma in the CUDA
// prelude): at least three stages (tile k + STAGES - 2 is fetched while
// tile k multiplies and tile k - 1's products may be in flight); BN a
// wgmma N in whole 64-column swizzle atoms; each warpgroup's rows whole
// m64 products; the accumulators (BM / WGS x BN / 128 a thread, at most
// 128) and about 40 other registers within a thread's share of the
// multiprocessor's 64K; and the threads staging each tile in whole 16-byte
// chunks, each thread the same chunk column of its stored rows.
func (matmulWgmma) Check(l *Launch) error {
	c := l.Config
	rows, threads := c["BM"]/c["WGS"], 128*c["WGS"]
	acc, regs := rows/64*c["BN"]/2, min(255, 65536/threads)
	switch {
	case c["STAGES"] < 3:
		return fmt.Errorf("the wgmma pipeline needs STAGES >= 3, not %d", c["STAGES"])
	case c["BN"]%64 != 0 || c["BN"] > 256:
		return fmt.Errorf("BN = %d is not a multiple of 64 up to 256 (whole 64-column swizzle atoms of one wgmma)", c["BN"])
	case rows%64 != 0:
		return fmt.Errorf("each of the %d warpgroups needs a multiple of 64 rows of BM = %d", c["WGS"], c["BM"])
	case acc > 128 || acc+wgmmaOtherRegs > regs:
		return fmt.Errorf("%d accumulators a thread (BM / WGS x BN / 128) and about %d other registers do not fit in registers (%d a thread of %d, at most 128 accumulators)", acc, wgmmaOtherRegs, regs, threads)
	}
	m := MatchMatmul(l.Stmt)
	if m == nil {
		return nil
	}
	for _, op := range []struct {
		x      int64
		kMajor bool
	}{{c["BM"], m.AKMajor}, {c["BN"], m.BKMajor}} {
		per := op.x / 8 // 16-byte chunks a stored row of an MN-major tile
		if op.kMajor {
			per = WgmmaBK / 8
		}
		if threads%per != 0 || op.x*WgmmaBK/8%threads != 0 {
			return fmt.Errorf("the %d threads cannot stage a %d x %d tile in whole 16-byte chunks, the same chunk column each", threads, op.x, WgmmaBK)
		}
	}
	return nil
}

// wgmmaOtherRegs is about what a wgmma thread holds besides its
// accumulators: addresses, loop state, descriptors. On the H100
// (2026-11-25) 128 accumulators in 512 threads (128 registers each) did
// not assemble; 64 did.
const wgmmaOtherRegs = 40

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
