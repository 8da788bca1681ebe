package lower

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
)

// MinSplitRows is the fewest points of a reduction that each chunk of a
// split column reduction takes.
const MinSplitRows = 512

// splitColumns gives more blocks to column reductions whose tiles cannot
// fill the GPU (a mean over 65536 rows of 16 columns is one tile) when
// every size is known: the statement becomes two col-reduce launches
// through the workspace. The first reduces chunks of the first reduction
// axis into a let of partial results; the second combines the chunks, in
// order, with the same operation, and applies the epilogue:
//
//	let Y_part[chunk in 0..S, d] = sum[r in chunk * CH..min(chunk * CH + CH, R)](X[r, d])
//	Y[d] = sum[chunk in 0..S](Y_part[chunk, d]) / R
//
// Each chunk reduces exactly its points (the last may be short), in the
// accumulation type; there are no atomics, so results repeat run to run.
func splitColumns(k *ir.Kernel) {
	for i := 0; i < len(k.Stmts); i++ {
		s := k.Stmts[i]
		if choose(s, Limits{}).Name() != "col-reduce" {
			continue
		}
		parts, chunk := splitSize(s)
		if parts < 2 {
			continue
		}
		p := splitStmt(k, s, MatchColumns(s).Reduce, parts, chunk)
		insertLet(k, i, p)
		i++
	}
}

// MaxSplitOutputs is the most outputs a row reduction may have for
// splitRows to split it: a quarter of bigGPU's multiprocessors, each
// output's row a block. On a target with clusters, whose row-reduce
// launch spreads a row over up to 8 blocks, an eighth of that: on the
// H100 (2026-11-26, testsuite/results/2026-11-26-h100-s6-split/) the
// split took a total from 26.21 to 6.84 us (one row on 8 clustered
// blocks), but 16 rows on 128 clustered blocks from 3.49 to 5.43 us (a
// second launch).
const MaxSplitOutputs = bigGPU / 4

// maxSplitOutputs is MaxSplitOutputs for a target with limits lim.
func maxSplitOutputs(lim Limits) int64 {
	if lim.Clusters {
		return MaxSplitOutputs / 8
	}
	return MaxSplitOutputs
}

// splitRows gives more blocks to row reductions with too few rows to fill
// the GPU when every size is known: a total (a mean squared error, one
// row of every element, was one block) or a few rows' sums. As in
// splitColumns, the statement becomes a let of partial results, a whole
// chunk of its reduction's first axis each, a block a row of them, and
// the statement combines the chunks, in order, with the same operation:
//
//	let loss_part[chunk in 0..S] = sum[b in 0..CH, d](sq(P[chunk * CH + b, d] - T[chunk * CH + b, d]))
//	loss = sum[chunk in 0..S](loss_part[chunk]) / (NB * D)
//
// A let with few rows fuses into the launch of the statements that read
// it, a block a row, which the split would break up; only a let whose
// rows are long (longRows: a Frobenius norm's total, a layer norm's
// statistics over 4 M elements a row) is split, and the statements that
// read it then run as launches of their own (rowGroupOK), every element
// of the rows spread over the GPU.
func splitRows(k *ir.Kernel, lim Limits) {
	for i := 0; i < len(k.Stmts); i++ {
		s := k.Stmts[i]
		rs := ir.TopReductions(s.Value)
		if len(rs) != 1 || choose(s, lim).Name() != "row-reduce" {
			continue
		}
		r := rs[0]
		maxRows := maxSplitOutputs(lim)
		if s.Target.Kind == ir.Let {
			if n, ok := constExtent(r.Axes); !ok || !longRows(s.Index, n) {
				continue
			}
			maxRows = MaxSplitOutputs
		}
		parts, chunk := splitRowsSize(s, r, maxRows)
		if parts < 2 {
			continue
		}
		if t, sq := centeredPartner(k, i); t != nil {
			cm, dev := splitCentered(k, s, r, t, sq, parts, chunk)
			insertLet(k, i, cm)
			insertLet(k, i+1, dev)
			i += 2
			continue
		}
		p := partials(k, s, r, parts, func(chunkIx *ir.Index, subst map[*ir.Index]ir.Expr) []*ir.Index {
			return wholeChunk(r, chunkIx, chunk, subst)
		})
		insertLet(k, i, p)
		i++
	}
}

// centeredPartner finds the statement after k.Stmts[i] whose one
// reduction sums the squared deviations of k.Stmts[i]'s sum's points from
// its let (a CenteredSum over the same rows: a variance after its mean),
// and that reduction; nil when there is none.
func centeredPartner(k *ir.Kernel, i int) (*ir.Stmt, *ir.Reduce) {
	s := k.Stmts[i]
	if s.Target.Kind != ir.Let {
		return nil, nil
	}
	for _, t := range k.Stmts[i+1:] {
		if len(t.Index) != len(s.Index) || len(ir.TopReductions(t.Value)) != 1 {
			continue
		}
		if pairs := centeredSums([]*ir.Stmt{s, t}, len(s.Index)); len(pairs) == 1 {
			return t, pairs[0].Squares
		}
	}
	return nil, nil
}

// splitCentered splits a mean's sum r (in s) and the sum sq of squared
// deviations from it (in t) into the same parts whole chunks, each chunk
// giving its own mean and its points' squared deviations from it, which
// one pass over the chunk computes (a CenteredSum within the chunk); s
// and t then combine the chunks (Chan et al.'s parallel variance): over
// chunks c of P points each, with means m_c and squared deviations D_c,
//
//	let cm[c, row] = sum[chunk c's points](B) / P
//	let dev[c, row] = sum[chunk c's points]((B - cm[c, row]) * (B - cm[c, row]))
//	mean's sum = sum[c](cm[c, row] * P)
//	squares = sum[c](dev[c, row] + P * (cm[c, row] - mean[row]) * (cm[c, row] - mean[row]))
//
// an identity, as the deviations within a chunk sum to 0. Split each on
// its own (splitRows), the two sums would read the points twice, and a
// chunk's sum of squared deviations from the whole row's mean would need
// that mean first. It returns cm's and dev's statements, for
// k.Stmts before s.
func splitCentered(k *ir.Kernel, s *ir.Stmt, r *ir.Reduce, t *ir.Stmt, sq *ir.Reduce, parts, chunk int64) (cm, dev *ir.Stmt) {
	rest, _ := constExtent(r.Axes[1:])
	points := &ir.Const{T: r.T, F: float64(chunk * rest)}
	taken := names(k)
	chunkName := fresh(taken, "chunk")
	// chunked returns the chunk index, copies of row (a statement's
	// indices) and reduction x's axes over one chunk, and the
	// substitution of x's and row's indices by them.
	chunked := func(row []*ir.Index, x *ir.Reduce) (*ir.Index, []*ir.Index, []*ir.Index, map[*ir.Index]ir.Expr) {
		c := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
		copied, _, subst := copies(row)
		return c, copied, wholeChunk(x, c, chunk, subst), subst
	}
	shape := append([]ir.Expr{ir.IntConst(parts)}, s.Target.Shape...)
	let := func(name string) *ir.Tensor {
		return &ir.Tensor{Name: fresh(taken, name), Span: s.Target.Span, Kind: ir.Let, DType: r.T, Shape: shape}
	}
	at := func(t *ir.Tensor, c *ir.Index, row []*ir.Index, span diag.Span) *ir.Load {
		return &ir.Load{Tensor: t, Index: Refs(append([]*ir.Index{c}, row...)), Span: span}
	}

	// cm: each chunk's mean.
	c, row, axes, subst := chunked(s.Index, r)
	cmT := let(s.Target.Name + "_part")
	cm = &ir.Stmt{Target: cmT, Index: append([]*ir.Index{c}, row...), Span: s.Span,
		Value: &ir.Binary{Op: ir.Div, X: &ir.Reduce{Op: ir.Sum, Axes: axes, Body: ir.Substitute(r.Body, subst), T: r.T, Span: r.Span}, Y: points}}

	// dev: each chunk's squared deviations from its mean.
	diff := sq.Body.(*ir.Binary).X.(*ir.Binary)
	c, row, axes, subst = chunked(t.Index, sq)
	d := &ir.Binary{Op: ir.Sub, X: ir.Substitute(diff.X, subst), Y: at(cmT, c, row, diff.Y.(*ir.Load).Span), Span: diff.Span}
	devT := let(t.Target.Name + "_part")
	dev = &ir.Stmt{Target: devT, Index: append([]*ir.Index{c}, row...), Span: t.Span,
		Value: &ir.Reduce{Op: ir.Sum, Axes: axes, Body: &ir.Binary{Op: ir.Mul, X: d, Y: d}, T: sq.T, Span: sq.Span}}

	// s and t combine the chunks.
	c = &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	replace(s, r, &ir.Reduce{Op: ir.Sum, Axes: []*ir.Index{c}, T: r.T, Span: r.Span,
		Body: &ir.Binary{Op: ir.Mul, X: at(cmT, c, s.Index, r.Span), Y: points}})
	c = &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	shift := &ir.Binary{Op: ir.Sub, X: at(cmT, c, t.Index, sq.Span), Y: diff.Y}
	replace(t, sq, &ir.Reduce{Op: ir.Sum, Axes: []*ir.Index{c}, T: sq.T, Span: sq.Span,
		Body: &ir.Binary{Op: ir.Add, X: at(devT, c, t.Index, sq.Span), Y: &ir.Binary{Op: ir.Mul, X: points, Y: &ir.Binary{Op: ir.Mul, X: shift, Y: shift}}}})
	return cm, dev
}

// wholeChunk returns the axes of reduction r over chunk c's points, the
// first axis's whole chunks of chunk points, and sets in subst what
// replaces that axis: lo + c * chunk + ax', ax' over the chunk's points,
// so that every partial row has the same constant length.
func wholeChunk(r *ir.Reduce, c *ir.Index, chunk int64, subst map[*ir.Index]ir.Expr) []*ir.Index {
	ax := r.Axes[0]
	part := &ir.Index{Name: ax.Name, Span: ax.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(chunk)}
	subst[ax] = Simplify(add(ax.Lo, add(mul(&ir.IndexRef{Index: c}, ir.IntConst(chunk)), &ir.IndexRef{Index: part})))
	return append([]*ir.Index{part}, r.Axes[1:]...)
}

// MinSplitLetRow is the shortest row, in elements, that a block a row no
// longer streams well where the rows are few (longRows).
const MinSplitLetRow = 1 << 18

// longRows reports whether rows indexed by index, n elements each, are
// too few to give the GPU's multiprocessors a block each (at most
// MaxSplitOutputs of them) and at least MinSplitLetRow long: a block a
// row would take each row's whole length on one multiprocessor, and a
// cluster a row 8 of them. Measured on the H100
// (testsuite/results/2026-11-26-h100-s10-split-lets/): the Frobenius
// norm's division of 4096 x 4096 f32 (one row) 1073 -> 124 us on
// cuda:sm_90 (clusters), 5699 -> 81 on triton:sm_90, 12829 -> 92 on
// hip:nvidia; a layer norm over 16 rows of 4 M f32 848 -> 629, 2340 ->
// 538 and 4928 -> 607 us.
func longRows(index []*ir.Index, n int64) bool {
	rows, ok := constExtent(index)
	return ok && rows <= MaxSplitOutputs && n >= MinSplitLetRow
}

// splitRowsSize is the number of whole chunks splitRows cuts the first
// axis of a row reduction's reduction r into, and their length: the
// axis's largest divisor that keeps about two blocks a bigGPU
// multiprocessor, each chunk at least MinSplitRows points; 0 parts when
// the statement has more than maxRows outputs, or a size is not known.
func splitRowsSize(s *ir.Stmt, r *ir.Reduce, maxRows int64) (parts, chunk int64) {
	rows, rok := constExtent(s.Index)
	n, nok := constExtent(r.Axes)
	first, fok := constExtent(r.Axes[:1])
	if !rok || !nok || !fok || rows == 0 || rows > maxRows || !allZeroLo(s.Index) || len(ir.TopReductions(r.Body)) > 0 {
		return 0, 0
	}
	for parts := min(2*bigGPU/rows, n/MinSplitRows, first); parts >= 2; parts-- {
		if first%parts == 0 {
			return parts, first / parts
		}
	}
	return 0, 0
}

// splitSize decides how many chunks the first axis of a column
// reduction's reduction is split into, and their length: enough for about
// two tiles per bigGPU multiprocessor, each at least MinSplitRows points.
// It returns 0 parts when the tiles of the default configuration fill at
// least half of the GPU (as colReduce.Default's strips then stop
// narrowing; a split's second launch cost what it gained on 128 tiles of
// column sums, testsuite/results/2026-11-26-h100-s12-colgroup/colreduce-split/),
// or when a size is not known.
func splitSize(s *ir.Stmt) (parts, chunk int64) {
	m := MatchColumns(s)
	l := &Launch{Stmt: s, Template: colReduce{}}
	l.Config = l.Template.Default(l)
	tiles, ok := Simplify(ColTiles(l)).(*ir.Const)
	n, nok := constExtent(m.Reduce.Axes)
	first, fok := constExtent(m.Reduce.Axes[:1])
	if !ok || !nok || !fok || tiles.I == 0 || tiles.I >= bigGPU/2 || !allZeroLo(s.Index) {
		return 0, 0
	}
	parts = min((2*bigGPU+tiles.I-1)/tiles.I, n/MinSplitRows, first)
	if parts < 2 {
		return 0, 0
	}
	chunk = (first + parts - 1) / parts
	return (first + chunk - 1) / chunk, chunk
}

// MinSplitK is the fewest points of K that each chunk of a split matrix
// product takes. 128 since the fourteenth session (1024 before, chosen
// without a measurement): a 128 x 512 x 1024 f32 linear layer with a GELU,
// four 128 x 128 tiles, took 118.66 us unsplit and 20.67 in 8 chunks of
// 128 on the H100 (testsuite/results/2026-11-26-h100-s14-simt/call2/).
const MinSplitK = 128

// splitK gives more blocks to matrix products whose output tiles cannot
// fill the GPU over a long K (256 x 256 x 131072 is four 128 x 128 tiles,
// each 131072 deep) when every size is known: the product becomes a
// batched product of partial results, a chunk of K each, through the
// workspace, and a column reduction that combines the chunks in order
// and applies the epilogue:
//
//	let C_part[chunk in 0..S, m, n] = sum[k in 0..CH](A[m, chunk * CH + k] * B[chunk * CH + k, n])
//	C[m, n] = sum[chunk in 0..S](C_part[chunk, m, n])
//
// The chunks are whole (S divides K), so that the partial product reads
// its operands as strided matrices at a batch offset (an implicit GEMM
// whose batch is the chunk). No atomics: results repeat run to run.
func splitK(k *ir.Kernel, lim Limits) {
	for i := 0; i < len(k.Stmts); i++ {
		s := k.Stmts[i]
		m := MatchMatmul(s)
		if m == nil || !strings.HasPrefix(choose(s, lim).Name(), "matmul") {
			continue
		}
		parts := splitKParts(m)
		if parts < 2 {
			continue
		}
		p := splitProduct(k, s, m, parts)
		insertLet(k, i, p)
		i++
	}
}

// splitKParts is the number of chunks splitK cuts m's K into: the most,
// doubling, that keep about two tiles of 128 x 128 a bigGPU
// multiprocessor, whole chunks of at least MinSplitK points in multiples
// of 64; 0 when the tiles already fill half the GPU, or a size is not
// known.
func splitKParts(m *Matmul) int64 {
	rows, rok := constExtent(m.M)
	cols, cok := constExtent(m.N)
	batch, bok := constExtent(m.Batch)
	depth, kok := constExtent([]*ir.Index{m.K})
	if !rok || !cok || !bok || !kok {
		return 0
	}
	tiles := batch * ((rows + 127) / 128) * ((cols + 127) / 128)
	if tiles == 0 || tiles >= bigGPU/2 {
		return 0
	}
	parts := int64(1)
	for next := 2 * parts; next*tiles <= 2*bigGPU && depth%next == 0 && depth/next >= MinSplitK && depth/next%64 == 0; next = 2 * parts {
		parts = next
	}
	return parts
}

// splitProduct returns the statement of m's partial products over parts
// whole chunks of K, and rewrites s (m's statement) to combine them.
func splitProduct(k *ir.Kernel, s *ir.Stmt, m *Matmul, parts int64) *ir.Stmt {
	depth, _ := constExtent([]*ir.Index{m.K})
	chunk := depth / parts
	return partials(k, s, m.Reduce, parts, func(chunkIx *ir.Index, subst map[*ir.Index]ir.Expr) []*ir.Index {
		// k = chunk * CH + k', k' over the chunk's points.
		part := &ir.Index{Name: m.K.Name, Span: m.K.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(chunk)}
		subst[m.K] = add(mul(&ir.IndexRef{Index: chunkIx}, ir.IntConst(chunk)), &ir.IndexRef{Index: part})
		return []*ir.Index{part}
	})
}

// allZeroLo: every index of ix starts at 0, as the let of partial
// results' indices must.
func allZeroLo(ix []*ir.Index) bool {
	return !slices.ContainsFunc(ix, func(x *ir.Index) bool { return !zeroLo(x) })
}

// splitStmt returns the statement of the partial results of s's
// reduction r, in parts chunks of chunk points of r's first axis, and
// rewrites s to combine them.
func splitStmt(k *ir.Kernel, s *ir.Stmt, r *ir.Reduce, parts, chunk int64) *ir.Stmt {
	ax := r.Axes[0]
	return partials(k, s, r, parts, func(chunkIx *ir.Index, subst map[*ir.Index]ir.Expr) []*ir.Index {
		// The first axis runs over the chunk's points.
		start := func() ir.Expr {
			return Simplify(add(ax.Lo, mul(&ir.IndexRef{Index: chunkIx}, ir.IntConst(chunk))))
		}
		part := &ir.Index{Name: ax.Name, Span: ax.Span, Lo: start(), Hi: minExpr(add(start(), ir.IntConst(chunk)), ax.Hi)}
		subst[ax] = &ir.IndexRef{Index: part}
		return append([]*ir.Index{part}, r.Axes[1:]...)
	})
}

// partials returns the statement of a let of partial results of s's
// reduction r, a chunk of its points each over a new leading index of
// parts points (then copies of s's indices), and rewrites s to combine
// them in order with r's operation. chunked gives the partial
// reduction's axes, in terms of the chunk index, and sets in subst what
// replaces r's split axis.
func partials(k *ir.Kernel, s *ir.Stmt, r *ir.Reduce, parts int64, chunked func(chunk *ir.Index, subst map[*ir.Index]ir.Expr) []*ir.Index) *ir.Stmt {
	taken := names(k)
	chunkName := fresh(taken, "chunk")
	chunkIx := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	copied, shape, subst := copies(s.Index)
	index := append([]*ir.Index{chunkIx}, copied...)
	shape = append([]ir.Expr{ir.IntConst(parts)}, shape...)
	axes := chunked(chunkIx, subst)
	t := &ir.Tensor{Name: fresh(taken, s.Target.Name+"_part"), Span: s.Target.Span, Kind: ir.Let, DType: r.T, Shape: shape}
	p := &ir.Stmt{Target: t, Index: index, Span: s.Span,
		Value: &ir.Reduce{Op: r.Op, Axes: axes, Body: ir.Substitute(r.Body, subst), T: r.T, Span: r.Span}}

	// s combines the chunks' results in order.
	c := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	read := &ir.Load{Tensor: t, Index: Refs(append([]*ir.Index{c}, s.Index...)), Span: r.Span}
	replace(s, r, &ir.Reduce{Op: r.Op, Axes: []*ir.Index{c}, Body: read, T: r.T, Span: r.Span})
	return p
}

// copies are new indices over the ranges of ixs, for a let over them:
// the copies, their extents (the let's shape; each range starts at 0),
// and the substitution of each index by its copy.
func copies(ixs []*ir.Index) (index []*ir.Index, shape []ir.Expr, subst map[*ir.Index]ir.Expr) {
	subst = map[*ir.Index]ir.Expr{}
	for _, ix := range ixs {
		c := &ir.Index{Name: ix.Name, Span: ix.Span, Lo: ix.Lo, Hi: ix.Hi}
		index = append(index, c)
		shape = append(shape, ix.Hi)
		subst[ix] = &ir.IndexRef{Index: c}
	}
	return index, shape, subst
}

// Refs reads ixs, in order: a load's (or a store's) index expressions.
func Refs(ixs []*ir.Index) []ir.Expr {
	var out []ir.Expr
	for _, ix := range ixs {
		out = append(out, &ir.IndexRef{Index: ix})
	}
	return out
}

// insertLet puts let statement p before statement i of k, and its tensor
// among k's lets in statement order.
func insertLet(k *ir.Kernel, i int, p *ir.Stmt) {
	lets := 0
	for _, w := range k.Stmts[:i] {
		if w.Target.Kind == ir.Let {
			lets++
		}
	}
	k.Lets = slices.Insert(k.Lets, lets, p.Target)
	k.Stmts = slices.Insert(k.Stmts, i, p)
}

// replace puts by in place of node x in s's value.
func replace(s *ir.Stmt, x, by ir.Expr) {
	s.Value = ir.Rewrite(s.Value, func(e ir.Expr) ir.Expr {
		if e == x {
			return by
		}
		return nil
	})
}

// minExpr is the i64 expression min(x, y).
func minExpr(x, y ir.Expr) ir.Expr {
	return &ir.Call{Fn: ir.MinFn, T: ir.I64, Args: []ir.Expr{x, y}}
}

// boundedExtent is an upper bound on the number of points of axes when
// one is known: each axis's constant extent, or for a chunk of a split
// reduction (lo..min(lo + n, hi)), n.
func boundedExtent(axes []*ir.Index) (int64, bool) {
	total := int64(1)
	for _, ax := range axes {
		if n, ok := constExtent([]*ir.Index{ax}); ok {
			total *= n
			continue
		}
		m, ok := ax.Hi.(*ir.Call)
		if !ok || m.Fn != ir.MinFn {
			return 0, false
		}
		sum, ok := m.Args[0].(*ir.Binary)
		if !ok || sum.Op != ir.Add || ir.Format(sum.X) != ir.Format(ax.Lo) {
			return 0, false
		}
		n, ok := sum.Y.(*ir.Const)
		if !ok {
			return 0, false
		}
		total *= n.I
	}
	return total, true
}

// Identity is the value of an empty reduction of op in dtype t: sum 0,
// prod 1, max and min the lowest and highest values (infinities for
// floats).
func Identity(op ir.ReduceOp, t ir.DType) *ir.Const {
	lo, hi := t.IntRange()
	switch op {
	case ir.Sum:
		return &ir.Const{T: t}
	case ir.Prod:
		return &ir.Const{T: t, F: 1, I: 1}
	case ir.Max:
		return &ir.Const{T: t, F: math.Inf(-1), I: lo}
	}
	return &ir.Const{T: t, F: math.Inf(1), I: hi}
}

// names is every name in k's scopes: dims, params, tensors and the
// indices of its statements and reductions.
func names(k *ir.Kernel) map[string]bool {
	taken := map[string]bool{}
	for _, d := range k.Dims {
		taken[d.Name] = true
	}
	for _, p := range k.Params {
		taken[p.Name] = true
	}
	for _, t := range k.Tensors() {
		taken[t.Name] = true
	}
	for _, s := range k.Stmts {
		for _, ix := range s.Index {
			taken[ix.Name] = true
		}
		ir.Walk(s.Value, func(e ir.Expr) bool {
			if r, ok := e.(*ir.Reduce); ok {
				for _, ax := range r.Axes {
					taken[ax.Name] = true
				}
			}
			return true
		})
	}
	return taken
}

// fresh returns base, or base2, base3, ... if base is taken, and takes it.
func fresh(taken map[string]bool, base string) string {
	n := base
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s%d", base, i)
	}
	taken[n] = true
	return n
}
