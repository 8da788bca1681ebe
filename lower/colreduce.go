package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// Columns is a statement recognized as a column reduction:
//
//	Y[outer..., c] = epilogue(op[axes](body))
//
// with one reduction, evaluated whenever the statement is, whose body
// reads at least one tensor along the columns: X[..., c], c in the last
// (contiguous) dimension and nowhere else, the reduction's axes in other
// dimensions, and every outer index somewhere (or in the reduction's
// ranges, as the chunk of a split reduction), so that each element of X
// belongs to one output point (a column sum, torch.sum over dim 1 of a
// 3-D tensor, a vector-matrix product x A). Other reads of the body either
// do not depend on the axes or do not depend on c (x[r] in x A: the same
// element for a whole strip of columns). The epilogue is the rest of the
// statement, evaluated once per output point with the reduction's value.
type Columns struct {
	Stmt   *ir.Stmt
	Reduce *ir.Reduce
	Outer  []*ir.Index // the output indices before C
	C      *ir.Index   // the last output index: the columns
	// Loads are the body's reads along the columns, in evaluation order.
	Loads []*ir.Load
}

// MatchColumns recognizes s as a column reduction, or returns nil.
func MatchColumns(s *ir.Stmt) *Columns {
	rs := ir.TopReductions(s.Value)
	if len(s.Index) == 0 || len(rs) != 1 || !unguarded(s.Value) {
		return nil
	}
	r := rs[0]
	if len(ir.TopReductions(r.Body)) > 0 {
		return nil
	}
	c := s.Index[len(s.Index)-1]
	m := &Columns{Stmt: s, Reduce: r, Outer: s.Index[:len(s.Index)-1], C: c}
	// The reduction's ranges may depend on the outer indices (the chunks
	// of a split reduction), not on the columns: a strip shares them.
	ranged := map[*ir.Index]bool{}
	for _, ax := range r.Axes {
		for _, e := range []ir.Expr{ax.Lo, ax.Hi} {
			if Mentions(e, c) {
				return nil
			}
			for _, ix := range m.Outer {
				ranged[ix] = ranged[ix] || Mentions(e, ix)
			}
		}
	}
	ok := true
	ir.Walk(r.Body, func(e ir.Expr) bool {
		l, isLoad := e.(*ir.Load)
		if !isLoad || !ok {
			return ok
		}
		reduced := slices.ContainsFunc(r.Axes, func(ax *ir.Index) bool { return mentions(l, ax) })
		if !reduced || !mentions(l, c) {
			return true // loop-invariant, or the same element for every column
		}
		last := len(l.Index) - 1
		if !refersTo(c)(l.Index[last]) || slices.ContainsFunc(l.Index[:last], func(x ir.Expr) bool { return Mentions(x, c) }) {
			ok = false // not contiguous along the columns
			return false
		}
		for _, ix := range m.Outer {
			if !mentions(l, ix) && !ranged[ix] {
				ok = false // read again for every value of ix: a matrix product
				return false
			}
		}
		m.Loads = append(m.Loads, l)
		return true
	})
	if !ok || len(m.Loads) == 0 {
		return nil
	}
	return m
}

// colReduce computes a column reduction (MatchColumns) with a block per
// tile: a strip of TX*VEC consecutive output columns at one point of the
// outer output indices. The block's TX x TY threads split the strip's
// columns (VEC consecutive ones each, read with vector loads where the
// sizes and pointers allow) and the reduction's points (ty, ty + TY, ...;
// UNROLL of them in flight together); each thread accumulates serially,
// the TY partial results of a column are combined in a fixed order
// (shuffles within a warp, shared memory across warps), and the epilogue
// runs once per column. No atomics: results repeat run to run.
type colReduce struct{}

func (colReduce) Name() string            { return "col-reduce" }
func (colReduce) Accepts(s *ir.Stmt) bool { return MatchColumns(s) != nil }
func (colReduce) Space() map[string][]int64 {
	return map[string][]int64{
		"TX":     {1, 2, 4, 8, 16, 32, 64, 128, 256},
		"TY":     {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
		"VEC":    {1, 2, 4, 8},
		"UNROLL": {1, 2, 4, 8},
	}
}

// MaxStaticSmem is the most static shared memory a CUDA block may declare.
const MaxStaticSmem = 48 << 10

// residentThreads is the number of threads bigGPU multiprocessors hold at
// once (2048 each).
const residentThreads = bigGPU * 2048

// Default reads 16 bytes a vector (VEC, fewer when the column count is a
// known size it does not divide) and 128 bytes of each row a strip (a
// whole cache line: TX = 8 for f32), no wider than the columns; strips
// narrow to 64 bytes while there are fewer tiles than half of bigGPU's
// multiprocessors. Blocks take at most 512 threads, each at least 8 of a
// known reduction's points, and no more rows of threads (TY) than it
// takes for the tiles to fill the GPU; UNROLL is 4, 8 for elements of 2
// bytes or less. On the H100 (2026-11-26,
// testsuite/results/2026-11-26-h100-s12-colgroup/sweep-colreduce.txt,
// write flush): column sums of 4096 x 4096 f32 took 37.02 us in strips
// of 64 bytes (256 tiles, the former default) and 34.88 in strips of 128
// (128 tiles); of 8192 x 4096 bf16, 48.22 us in strips of 32 bytes
// (UNROLL 4, the former default), 42.14 with UNROLL 8, 37.98 in strips of
// 64 bytes with UNROLL 8.
func (colReduce) Default(l *Launch) Config {
	m := MatchColumns(l.Stmt)
	size := int64(1)
	for _, ld := range m.Loads {
		size = max(size, int64(ld.Tensor.DType.Size()))
	}
	vec := min(8, max(1, 16/size))
	cols, colsKnown := constExtent([]*ir.Index{m.C})
	outer, outerKnown := constExtent(m.Outer)
	n, nKnown := boundedExtent(m.Reduce.Axes)
	if colsKnown {
		for vec > 1 && cols%vec != 0 {
			vec /= 2
		}
	}
	tx := max(1, 128/(vec*size))
	if colsKnown {
		for tx > 1 && (tx/2)*vec >= cols {
			tx /= 2
		}
	}
	tiles := func(tx int64) int64 { return outer * ((cols + tx*vec - 1) / (tx * vec)) }
	known := colsKnown && outerKnown
	if known {
		for tx > 1 && tiles(tx) < bigGPU/2 && (tx/2)*vec*size >= 64 {
			tx /= 2
		}
	}
	ty := 512 / tx
	if nKnown {
		for ty > 1 && ty*8 > n {
			ty /= 2
		}
	}
	if known {
		for ty > 1 && tiles(tx)*tx*(ty/2) >= residentThreads {
			ty /= 2
		}
	}
	ty = max(ty, l.Target.Warp()/tx) // whole warps
	unroll := int64(4)
	if size <= 2 {
		unroll = 8
	}
	return Config{"TX": tx, "TY": ty, "VEC": vec, "UNROLL": unroll}
}

// ColParts is the number of partial results per column that a col-reduce
// block combines through shared memory: one per warp when a warp's
// threads share columns (TX below the warp size), otherwise one per row
// of threads.
func ColParts(l *Launch) int64 {
	c := l.Config
	return c["TY"] / max(1, l.Target.Warp()/c["TX"])
}

// ColSmem is the static shared memory of a col-reduce launch, bytes.
func ColSmem(l *Launch) int64 {
	c := l.Config
	acc := int64(MatchColumns(l.Stmt).Reduce.T.Size())
	return ColParts(l) * c["TX"] * c["VEC"] * acc
}

// Check holds the constraints of the combine: whole warps, and the
// partial results within the static shared memory a block may declare.
func (colReduce) Check(l *Launch) error { return checkCombine(l, ColSmem(l)) }

// checkCombine holds the constraints of kg_col_combine (col-reduce's and
// col-group's): TX x TY whole warps, and the partial results (smem bytes)
// within the static shared memory a block may declare.
func checkCombine(l *Launch, smem int64) error {
	c := l.Config
	if threads := c["TX"] * c["TY"]; threads%l.Target.Warp() != 0 {
		return fmt.Errorf("TX x TY = %d threads is not a whole number of warps (of %d threads)", threads, l.Target.Warp())
	}
	if smem > MaxStaticSmem {
		return fmt.Errorf("the partial results take %d bytes of shared memory; at most %d", smem, MaxStaticSmem)
	}
	return nil
}

// ColTiles is the number of tiles of a col-reduce launch: strips of
// TX*VEC columns at every point of the outer indices.
func ColTiles(l *Launch) ir.Expr {
	m := MatchColumns(l.Stmt)
	return stripTiles(m.Outer, m.C, l.Config["TX"]*l.Config["VEC"])
}

// stripTiles is the number of strips of width consecutive columns (the
// index c) at every point of the outer indices.
func stripTiles(outer []*ir.Index, c *ir.Index, width int64) ir.Expr {
	return Simplify(mul(Extent(outer), cdiv(Extent([]*ir.Index{c}), width)))
}

func (colReduce) Grid(l *Launch) Grid {
	return Grid{Blocks: capBlocks(ColTiles(l)), Threads: l.Config["TX"] * l.Config["TY"]}
}
