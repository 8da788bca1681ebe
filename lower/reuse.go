package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// MinReuseBytes is the least size of the inputs that an elementwise
// launch reads across one of its outer indices for its default
// configuration to visit points in the reuse order (Reuse).
const MinReuseBytes = 4 << 20

// Reuse is the order in which an elementwise launch with REUSE=1 visits
// its points: in tiles of Tile points over every index but Index, every
// value of Index for one tile before the next tile. The inputs whose
// loads do not depend on Index (a layer norm's weights over [F, D1, D2]
// beside X[b, f, i, j]) are then read while their tile is still in L2,
// from memory once rather than once for each value of Index: in the
// row-major order a whole row of every tensor lies between two reads of
// the same weight, 64 MB for 16 rows of 4 M f32 and their 16 MB
// weights, more than the H100's L2 holds.
//
// A point p of the reuse order is the point
//
//	m = p / (Tile * Extent) * Tile + p % Tile   (among the other indices)
//	r = p % (Tile * Extent) / Tile              (Index's value, from 0)
//
// that is, in the statement's row-major order, (m / Inner * Extent + r) *
// Inner + m % Inner. Tile divides Inner, so that a tile's points are one
// run along the indices after Index, as many as a block takes in one
// step of its loop.
type Reuse struct {
	Index  *ir.Index
	Extent int64 // Index's
	Inner  int64 // the points of the indices after Index
	Tile   int64
}

// ReuseOrder is l's reuse order where its configuration asks for one
// (REUSE=1), tiles of tile points; false otherwise.
func ReuseOrder(l *Launch, tile int64) (Reuse, bool) {
	if l.Config["REUSE"] != 1 {
		return Reuse{}, false
	}
	return reuseIndex(l, tile, 1)
}

// reuseIndex finds the index of l's statements whose reuse order saves
// the most: the outer index (not the last) that input loads of at least
// minBytes, in all, do not depend on, where every extent is known and
// tile divides the points after it. The outermost wins a tie.
func reuseIndex(l *Launch, tile, minBytes int64) (Reuse, bool) {
	s := l.Stmt
	stmts := append([]*ir.Stmt{s}, l.Also...)
	var best Reuse
	bestBytes := int64(0)
	for d, ix := range s.Index[:max(len(s.Index)-1, 0)] {
		extent, ok1 := constExtent([]*ir.Index{ix})
		inner, ok2 := constExtent(s.Index[d+1:])
		if !ok1 || !ok2 || extent < 2 || tile <= 0 || inner%tile != 0 {
			continue
		}
		bytes := int64(0)
		var seen []*ir.Tensor
		for _, st := range stmts {
			ir.Walk(st.Value, func(x ir.Expr) bool {
				ld, ok := x.(*ir.Load)
				if !ok || ld.Tensor.Kind != ir.Input || mentions(ld, ix) || slices.Contains(seen, ld.Tensor) {
					return true
				}
				if n, ok := Simplify(product(ld.Tensor.Shape)).(*ir.Const); ok {
					seen = append(seen, ld.Tensor)
					bytes += n.I * int64(ld.Tensor.DType.Size())
				}
				return true
			})
		}
		if bytes >= minBytes && bytes > bestBytes {
			best, bestBytes = Reuse{Index: ix, Extent: extent, Inner: inner, Tile: tile}, bytes
		}
	}
	return best, bestBytes > 0
}

// withReuse is c, the default configuration of pointwise launch l, with
// REUSE=1 where inputs of MinReuseBytes or more, in all, are read across
// an outer index that a reuse order can take.
func withReuse(l *Launch, c Config) Config {
	probe := &Launch{Stmt: l.Stmt, Also: l.Also, Config: c}
	if _, ok := reuseIndex(probe, reuseTile(probe), MinReuseBytes); ok {
		c["REUSE"] = 1
	}
	return c
}

// reuseTile is the tile of pointwise launch l's reuse order: the points
// one block takes in one step, or a program's BLOCK (Triton).
func reuseTile(l *Launch) int64 {
	if b, ok := l.Config["BLOCK"]; ok {
		return b
	}
	return l.Config["THREADS"] * max(l.Config["UNROLL"], 1) * max(l.Config["VEC"], 1)
}

// checkReuse reports why l, an elementwise launch, cannot take REUSE=1.
func checkReuse(l *Launch) error {
	if l.Config["REUSE"] != 1 {
		return nil
	}
	if _, ok := reuseIndex(l, reuseTile(l), 1); !ok {
		return fmt.Errorf("REUSE=1 needs an outer index that an input is read across, known extents, and the points after it a multiple of %d", reuseTile(l))
	}
	return nil
}
