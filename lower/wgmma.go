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
// TMA = 1 adds a producer warpgroup: one of its threads fills the ring
// with the tensor memory accelerator through tensor maps that the block
// builds on the device, in the workspace (so the ABI stays plain
// pointers), and the WGS warpgroups only multiply. A grid of at most
// bigGPU blocks walks the output tiles, the producer running ahead into
// the next tile while the consumers store this one. Operands whose rows
// TMA cannot copy fall back to the consumers' own loads at run time.
// (The same split fed by cp.async copies was slower: 500 us against 304
// for bf16 4096^3 on the H100, 2026-11-23.)
type matmulWgmma struct{}

// WgmmaBK is the wgmma template's K step: 64 16-bit elements, one
// 128-byte swizzle row.
const WgmmaBK = 64

func (matmulWgmma) Name() string { return "matmul-wgmma" }

// Version: 2 since TMA (a parameter, 1 by default where it applies) and
// the epilogue's pair stores; records of version 1 timed the older code.
func (matmulWgmma) Version() int              { return 2 }
func (matmulWgmma) Available(lim Limits) bool { return lim.Wgmma }
func (matmulWgmma) Accepts(s *ir.Stmt) bool {
	m := MatchMatmul(s)
	return m != nil && m.TensorCores && m.Elem.Size() == 2 // tf32 products stay on matmul-mma
}

func (matmulWgmma) Space() map[string][]int64 {
	return map[string][]int64{
		"BM": {64, 128, 256}, "BN": {64, 128, 256}, "WGS": {1, 2}, "STAGES": {3, 4, 5}, "TMA": {0, 1},
	}
}

// Default: 128 x 256 tiles of two warpgroups for products known to have
// enough of them to fill a large GPU twice over, else 128 x 128; four
// stages (two tiles in flight while one multiplies). bf16 4096^3 on the
// H100, 2026-11-23: 304 us (452 TFLOP/s) with 128 x 256, 331 with
// 256 x 128; with 3 stages 364 and 366. TMA wherever it applies (no batch
// indices): 2026-11-26, 206 us with 128 x 256 against 277 without, the
// best of an exhaustive search within the noise
// (testsuite/results/2026-11-26-h100-s13-tma/).
func (t matmulWgmma) Default(l *Launch) Config {
	c := Config{"BM": 128, "BN": 128, "WGS": 2, "STAGES": 4, "TMA": 0}
	m := MatchMatmul(l.Stmt)
	if m != nil && fillsTwice(m, 128, 256) {
		c["BN"] = 256
	}
	if m != nil && len(m.Batch) == 0 {
		c["TMA"] = 1
	}
	return c
}

// Check holds the tile's own constraints (those of KgWgmma in the CUDA
// prelude): at least three stages (tile k + STAGES - 2 is fetched while
// tile k multiplies and tile k - 1's products may be in flight); BN a
// wgmma N in whole 64-column swizzle atoms; each warpgroup's rows whole
// m64 products; the accumulators (BM / WGS x BN / 128 a thread, at most
// 128) and about 40 other registers within a thread's share of the
// multiprocessor's 64K (with TMA and two or more consumer warpgroups,
// wgmmaConsumerRegs); and the threads staging each tile in whole 16-byte
// chunks, each thread the same chunk column of its stored rows. TMA copies
// only products without batch indices.
func (matmulWgmma) Check(l *Launch) error {
	c := l.Config
	rows, threads := c["BM"]/c["WGS"], 128*c["WGS"]
	acc, regs := rows/64*c["BN"]/2, min(255, 65536/threads)
	if c["TMA"] == 1 && c["WGS"] > 1 {
		regs = wgmmaConsumerRegs
	}
	m := MatchMatmul(l.Stmt)
	switch {
	case c["TMA"] == 1 && m != nil && len(m.Batch) > 0:
		return fmt.Errorf("TMA = 1 copies two-dimensional operands: this product has batch indices")
	case c["STAGES"] < 3:
		return fmt.Errorf("the wgmma pipeline needs STAGES >= 3, not %d", c["STAGES"])
	case c["BN"]%64 != 0 || c["BN"] > 256:
		return fmt.Errorf("BN = %d is not a multiple of 64 up to 256 (whole 64-column swizzle atoms of one wgmma)", c["BN"])
	case rows%64 != 0:
		return fmt.Errorf("each of the %d warpgroups needs a multiple of 64 rows of BM = %d", c["WGS"], c["BM"])
	case acc > 128 || acc+wgmmaOtherRegs > regs:
		return fmt.Errorf("%d accumulators a thread (BM / WGS x BN / 128) and about %d other registers do not fit in registers (%d a thread of %d, at most 128 accumulators)", acc, wgmmaOtherRegs, regs, threads)
	}
	if m == nil {
		return nil
	}
	return wgmmaStaging(c, m.AKMajor, m.BKMajor)
}

// wgmmaStaging holds KgWgmma's staging constraint: the WGS warpgroups
// copy each operand's tile in whole 16-byte chunks, each thread the same
// chunk column of its stored rows (aK, bK: the operands are K-major).
func wgmmaStaging(c Config, aK, bK bool) error {
	threads := 128 * c["WGS"]
	for _, op := range []struct {
		x      int64
		kMajor bool
	}{{c["BM"], aK}, {c["BN"], bK}} {
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

// wgmmaConsumerRegs is what each of two or more consumer warpgroups
// takes with TMA (setmaxnreg), the producer keeping 40.
const wgmmaConsumerRegs = 232

// wgmmaOtherRegs is about what a wgmma thread holds besides its
// accumulators: addresses, loop state, descriptors. On the H100
// (2026-11-25) 128 accumulators in 512 threads (128 registers each) did
// not assemble; 64 did.
const wgmmaOtherRegs = 40

func (t matmulWgmma) Grid(l *Launch) Grid {
	c := l.Config
	if c["TMA"] == 1 {
		return Grid{Blocks: minBlocks(Tiles(l), bigGPU), Threads: 128 * (c["WGS"] + 1), Smem: WgmmaSmem(c), MinBlocks: 1}
	}
	return Grid{Blocks: capBlocks(Tiles(l)), Threads: 128 * c["WGS"], Smem: WgmmaSmem(c), MinBlocks: 1}
}

// Scratch: with TMA, each block's two tensor maps (128 bytes each).
func (matmulWgmma) Scratch(l *Launch) int64 {
	if l.Config["TMA"] == 1 {
		return bigGPU * WgmmaMapBytes
	}
	return 0
}

// WgmmaMapBytes is the workspace a TMA block builds its tensor maps in.
const WgmmaMapBytes = 256

// WgmmaSmem is the wgmma template's dynamic shared memory: STAGES copies
// of the A and B tiles in 2-byte elements, and 1024 bytes to align the
// ring to the swizzle's atom; with TMA, 512 more for the stages' barriers
// and the staging of two tensor maps.
func WgmmaSmem(c Config) int64 {
	return c["STAGES"]*(c["BM"]+c["BN"])*WgmmaBK*2 + 1024 + 512*c["TMA"]
}

// igemmWgmma computes an implicit matrix product (a convolution) with
// matmul-wgmma's tile and without TMA: the warpgroups stage each operand
// as igemm-mma's tiles do (a strided operand in cp.async chunks, a
// gathered one through the statement's own load, in chunks where its
// elements are contiguous), into the wgmma ring's swizzled layout.
type igemmWgmma struct{}

func (igemmWgmma) Name() string              { return "igemm-wgmma" }
func (igemmWgmma) Available(lim Limits) bool { return lim.Wgmma }
func (igemmWgmma) Accepts(s *ir.Stmt) bool {
	g := MatchIGemm(s)
	return g != nil && g.TensorCores && g.A.Load.Tensor.DType.Size() == 2 && g.B.Load.Tensor.DType.Size() == 2
}

func (igemmWgmma) Space() map[string][]int64 {
	sp := matmulWgmma{}.Space()
	delete(sp, "TMA")
	return sp
}

// Default: matmul-wgmma's 128 x 128 tile of two warpgroups, with 64
// columns (or 64 rows, one warpgroup) where the product has no more, so
// that half of each tile is not idle (a convolution with 64 filters).
func (igemmWgmma) Default(l *Launch) Config {
	c := Config{"BM": 128, "BN": 128, "WGS": 2, "STAGES": 4}
	g := MatchIGemm(l.Stmt)
	if atMost64(g.N) {
		c["BN"] = 64
	}
	if atMost64(g.M) {
		c["BM"], c["WGS"] = 64, 1
	}
	return c
}

// Check: matmul-wgmma's constraints without TMA, and its staging for the
// convolution's operand layouts.
func (t igemmWgmma) Check(l *Launch) error {
	if err := (matmulWgmma{}).Check(l); err != nil {
		return err
	}
	g := MatchIGemm(l.Stmt)
	return wgmmaStaging(l.Config, g.A.KMajor, g.B.KMajor)
}

func (igemmWgmma) Grid(l *Launch) Grid {
	return Grid{Blocks: capBlocks(igemmTiles(l)), Threads: 128 * l.Config["WGS"], Smem: WgmmaSmem(l.Config), MinBlocks: 1}
}
