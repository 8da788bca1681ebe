package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// Transpose is an elementwise statement that reads an input across its
// layout: the input's last (contiguous) dimension is indexed by an output
// index Q other than the output's last, P, which the input also reads.
// Read point by point, either the loads or the stores stride through
// memory; staged through a shared-memory tile, both run along their
// tensors' rows.
type Transpose struct {
	Stmt  *ir.Stmt
	Load  *ir.Load    // the staged load
	P, Q  *ir.Index   // the output's last index; the load's last index
	Batch []*ir.Index // the other output indices, in output order
}

// MatchTranspose recognizes s as a transpose, or returns nil: an
// elementwise statement over indices from 0 with a load of an input whose
// indices are distinct output indices, its last one not the output's
// last, which it reads too.
func MatchTranspose(s *ir.Stmt) *Transpose {
	if ir.Classify(s) != ir.Elementwise || len(s.Index) < 2 || !unguarded(s.Value) {
		return nil
	}
	for _, ix := range s.Index {
		if !zeroLo(ix) {
			return nil
		}
	}
	p := s.Index[len(s.Index)-1]
	var t *Transpose
	ir.Walk(s.Value, func(e ir.Expr) bool {
		l, ok := e.(*ir.Load)
		if !ok || t != nil {
			return t == nil
		}
		if l.Default != nil || l.Tensor.Kind != ir.Input || !plainIndices(l, s.Index, nil) || len(l.Index) < 2 {
			return true
		}
		q := l.Index[len(l.Index)-1].(*ir.IndexRef).Index
		if q == p || !slices.ContainsFunc(l.Index, refersTo(p)) {
			return true
		}
		t = &Transpose{Stmt: s, Load: l, P: p, Q: q}
		return false
	})
	if t == nil {
		return nil
	}
	for _, ix := range s.Index {
		if ix != t.P && ix != t.Q {
			t.Batch = append(t.Batch, ix)
		}
	}
	return t
}

// transposeTemplate computes a transpose in TILE x TILE tiles of (Q, P),
// a block of TILE x ROWS threads per tile (grid-stride over tiles and the
// batch): the block reads the staged load's tile along Q into shared
// memory, then computes the statement along P, reading the staged values
// across the tile and every other load directly.
type transposeTemplate struct{}

func (transposeTemplate) Name() string            { return "transpose" }
func (transposeTemplate) Accepts(s *ir.Stmt) bool { return MatchTranspose(s) != nil }
func (transposeTemplate) Space() map[string][]int64 {
	return map[string][]int64{"TILE": {32, 64}, "ROWS": {4, 8, 16}}
}

// Default: 64 x 64 tiles, 4 rows of threads (16 elements a thread). On
// the H100 (testsuite/results/2026-11-26-h100-s12-colgroup/sweep-misc12.txt),
// against 32 x 32 tiles with 8 rows: the last two axes of 32 x 512 x 1024
// bf16 36.0 -> 32.7 us; 4096 x 4096 f32 52.3 -> 52.0 and NCHW to NHWC of
// 16 x 64 x 256 x 256 f32 187.9 -> 187.4, the same.
func (transposeTemplate) Default(*Launch) Config { return Config{"TILE": 64, "ROWS": 4} }

// TransposeTiles is the number of tiles of a transpose launch: the batch
// points times the (Q, P) tiles.
func TransposeTiles(l *Launch) ir.Expr {
	t := MatchTranspose(l.Stmt)
	tile := l.Config["TILE"]
	return Simplify(mul(Extent(t.Batch), mul(cdiv(Extent([]*ir.Index{t.Q}), tile), cdiv(Extent([]*ir.Index{t.P}), tile))))
}

func (transposeTemplate) Grid(l *Launch) Grid {
	return Grid{Blocks: capBlocks(TransposeTiles(l)), Threads: l.Config["TILE"] * l.Config["ROWS"]}
}
