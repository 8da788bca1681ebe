package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// IGemm is a statement recognized as an implicit matrix product, a
// convolution among others:
//
//	Y[out...] = epilogue(sum[k...](body(A[...], B[...])))
//
// where the two loads' index expressions are affine in the output and
// reduction indices (oh * stride + kh * dil - pad) and a load may have a
// default for reads outside its tensor (`?? 0`, the padding). The output
// indices split by the operands that read them: those of A alone are the
// product's rows (M), those of B alone its columns (N), those of both
// select one independent product (Batch); the reduction's axes flatten
// into the product's K. Element (m, k) of A is A's load at the indices
// that m and k decompose into: an operand is gathered, not a strided
// matrix, unless its load happens to be one. The body and epilogue are as
// a Matmul's.
//
// B is the operand that reads the output's last row or column index, so
// that a tile's columns run along the output's contiguous dimension: for
// an NCHW convolution, A is the filter (M = f) and B the input
// (N = n, oh, ow); for NHWC, A is the input and B the filter.
type IGemm struct {
	Stmt        *ir.Stmt
	Reduce      *ir.Reduce
	A, B        *Operand
	M, N, Batch []*ir.Index // output indices, in output order
	K           []*ir.Index // the reduction's axes; k flattens them, the last fastest
	TensorCores bool        // as Matmul's
}

// Operand is one factor of an implicit matrix product: element (row, k)
// is Load at the indices that row (flattening Rows) and k decompose into.
type Operand struct {
	Load *ir.Load
	Rows []*ir.Index
	// KMajor: the operand's tiles are staged with rows along K (M x K),
	// otherwise along its rows (K x M); the one whose consecutive
	// elements are nearest in memory, judged by the index expression of
	// the load's last dimension.
	KMajor bool
	// Strided: the load is a matrix of Ld-element rows (its rows along K
	// when KMajor, along Rows otherwise) at an offset set by the batch
	// indices: plain indices, Rows and K each in adjacent dimensions in
	// order, and no default. A strided operand is read through a pointer
	// (and on tensor cores with cp.async); any other is gathered.
	Strided bool
	Ld      ir.Expr
	// Checked lists, for a gathered load with a default, the dimensions
	// whose index can leave the tensor inside the product's bounds (all
	// of them unless the sizes are constants and interval arithmetic
	// proves otherwise): only these need a test before the read.
	Checked []bool
}

// MatchIGemm recognizes s as an implicit matrix product, or returns nil.
// Every Matmul is one too; the template table tries the matmul templates
// first.
func MatchIGemm(s *ir.Stmt) *IGemm {
	rs := ir.TopReductions(s.Value)
	if len(rs) != 1 || !unguarded(s.Value) {
		return nil
	}
	r := rs[0]
	if r.Op != ir.Sum || len(ir.TopReductions(r.Body)) > 0 || !product2(r.Body) {
		return nil
	}
	for _, ix := range append(slices.Clone(s.Index), r.Axes...) {
		if !zeroLo(ix) {
			return nil
		}
	}
	var loads []*ir.Load
	ir.Walk(r.Body, func(e ir.Expr) bool {
		if l, ok := e.(*ir.Load); ok {
			loads = append(loads, l)
			return false
		}
		return true
	})
	for _, l := range loads {
		if slices.ContainsFunc(l.Index, func(e ir.Expr) bool { return !affine(e) }) || (l.Default != nil && !invariant(l.Default)) {
			return nil
		}
	}
	g := &IGemm{Stmt: s, Reduce: r, A: &Operand{Load: loads[0]}, B: &Operand{Load: loads[1]}, K: r.Axes}
	reads := func(l *ir.Load) func(*ir.Index) bool { return func(ix *ir.Index) bool { return mentions(l, ix) } }
	var ok bool
	if g.Batch, g.M, g.N, ok = splitOutputs(s.Index, reads(g.A.Load), reads(g.B.Load)); !ok {
		return nil // an output index neither operand reads: a broadcast
	}
	if len(g.M) == 0 || len(g.N) == 0 {
		return nil // a matrix-vector product
	}
	for _, l := range loads {
		if !quasiOnBatch(l, g.Batch) {
			return nil
		}
	}
	// B reads the output's last row or column index.
	for _, ix := range slices.Backward(s.Index) {
		if slices.Contains(g.M, ix) {
			g.A, g.B, g.M, g.N = g.B, g.A, g.N, g.M
			break
		}
		if slices.Contains(g.N, ix) {
			break
		}
	}
	g.A.Rows, g.B.Rows = g.M, g.N
	for _, o := range []*Operand{g.A, g.B} {
		o.layout(g.Batch, g.K)
	}
	g.TensorCores = tensorCoreBody(r) && g.A.Load.Tensor.DType.Size() == 2 // 16-bit gathers
	return g
}

// layout sets how the operand is read and staged.
func (o *Operand) layout(batch, ks []*ir.Index) {
	l := o.Load
	lastDim := l.Index[len(l.Index)-1]
	o.KMajor = slices.ContainsFunc(ks, func(k *ir.Index) bool { return Mentions(lastDim, k) }) &&
		!slices.ContainsFunc(o.Rows, func(r *ir.Index) bool { return Mentions(lastDim, r) })
	if kMajor, ok := stridedLayout(l, o.Rows, ks, batch); ok {
		o.Strided, o.KMajor = true, kMajor
		if kMajor {
			o.Ld = Stride(l, o.Rows[len(o.Rows)-1])
		} else {
			o.Ld = Stride(l, ks[len(ks)-1])
		}
		return
	}
	if l.Default == nil {
		return
	}
	// Specialized sizes are constants, which is all the empty
	// environment evaluates: symbolic sizes keep every test.
	env := &ir.Env{}
	indices := append(append(append([]*ir.Index(nil), batch...), o.Rows...), ks...)
	o.Checked = make([]bool, len(l.Index))
	for d, e := range l.Index {
		if ref, ok := e.(*ir.IndexRef); ok && ir.Format(Simplify(ref.Index.Hi)) == ir.Format(Simplify(l.Tensor.Shape[d])) {
			continue // an index over the whole dimension
		}
		lo, hi, ok := ir.IndexInterval(e, env, indices)
		n, err := env.Int(l.Tensor.Shape[d])
		o.Checked[d] = !ok || err != nil || lo < 0 || hi >= n
	}
}

// stridedLayout reports whether l reads a strided matrix: every index is
// a plain index of rows, ks or batch, each once, where a row's or k's may
// be offset by batch indices times invariants (a split product's A[m,
// chunk * CH + k]: Stride counts them in the batch offset); rows are
// adjacent and in order, likewise ks, each run flattening into one index
// (the extents after a run's first are the tensor's); and the last
// dimension is the last of ks (kMajor) or of rows.
func stridedLayout(l *ir.Load, rows, ks, batch []*ir.Index) (kMajor, ok bool) {
	if l.Default != nil {
		return false, false
	}
	mains := make([]*ir.Index, len(l.Index))
	seen := map[*ir.Index]bool{}
	for d, e := range l.Index {
		main, ok := mainIndex(e, batch)
		if !ok || seen[main] {
			return false, false
		}
		seen[main], mains[d] = true, main
	}
	run := func(ixs []*ir.Index) bool {
		first := slices.Index(mains, ixs[0])
		for i, ix := range ixs {
			d := first + i
			if first < 0 || d >= len(l.Index) || mains[d] != ix {
				return false
			}
			if i > 0 && ir.Format(Simplify(ix.Hi)) != ir.Format(Simplify(l.Tensor.Shape[d])) {
				return false
			}
		}
		return true
	}
	if !run(rows) || !run(ks) {
		return false, false
	}
	for _, ix := range batch {
		if !mentions(l, ix) {
			return false, false
		}
	}
	for _, m := range mains {
		if !slices.Contains(rows, m) && !slices.Contains(ks, m) && !slices.Contains(batch, m) {
			return false, false
		}
	}
	switch last := mains[len(mains)-1]; last {
	case ks[len(ks)-1]:
		return true, true
	case rows[len(rows)-1]:
		return false, true
	}
	return false, false
}

// mainIndex is the index that index expression e reads, when e is that
// index alone, or (not a batch index itself) plus batch indices scaled by
// invariants.
func mainIndex(e ir.Expr, batch []*ir.Index) (*ir.Index, bool) {
	if ref, ok := e.(*ir.IndexRef); ok {
		return ref.Index, true
	}
	b, ok := e.(*ir.Binary)
	if !ok || b.Op != ir.Add {
		return nil, false
	}
	for _, side := range [][2]ir.Expr{{b.X, b.Y}, {b.Y, b.X}} {
		ref, ok := side[0].(*ir.IndexRef)
		if ok && !slices.Contains(batch, ref.Index) && batchTerm(side[1], batch) {
			return ref.Index, true
		}
	}
	return nil, false
}

// batchTerm: e is a batch index, or a batch index times an invariant.
func batchTerm(e ir.Expr, batch []*ir.Index) bool {
	isBatch := func(x ir.Expr) bool {
		ref, ok := x.(*ir.IndexRef)
		return ok && slices.Contains(batch, ref.Index)
	}
	if isBatch(e) {
		return true
	}
	m, ok := e.(*ir.Binary)
	return ok && m.Op == ir.Mul && (isBatch(m.X) && invariant(m.Y) || isBatch(m.Y) && invariant(m.X))
}

// quasiOnBatch reports whether every floor division and modulus in l's
// indices divides an expression of batch indices alone: one value for
// each of the products, which the gather evaluates at each element (a
// transposed convolution's phase after splitPhases). A row or k inside
// one would make the operand no matrix of its row and k.
func quasiOnBatch(l *ir.Load, batch []*ir.Index) bool {
	ok := true
	for _, e := range l.Index {
		ir.Walk(e, func(x ir.Expr) bool {
			if b, isBin := x.(*ir.Binary); isBin && (b.Op == ir.Div || b.Op == ir.Mod) {
				for _, ix := range indicesOf(b.X) {
					if !slices.Contains(batch, ix) {
						ok = false
					}
				}
				return false
			}
			return ok
		})
	}
	return ok
}

// affine reports whether index expression e is a sum of loop indices
// scaled by invariants, plus an invariant.
func affine(e ir.Expr) bool {
	if invariant(e) {
		return true
	}
	switch x := e.(type) {
	case *ir.IndexRef:
		return true
	case *ir.Unary:
		return x.Op == ir.Neg && affine(x.X)
	case *ir.Binary:
		switch x.Op {
		case ir.Add, ir.Sub:
			return affine(x.X) && affine(x.Y)
		case ir.Mul:
			return invariant(x.X) && affine(x.Y) || affine(x.X) && invariant(x.Y)
		case ir.Div, ir.Mod:
			// Quasi-affine: a floor division or modulus by a positive
			// constant (splitPhases leaves a phase's start so).
			c, ok := constInt(x.Y)
			return ok && c > 0 && affine(x.X)
		}
	}
	return false
}

// invariant reports whether e reads no index and no tensor: one value for
// the whole launch.
func invariant(e ir.Expr) bool {
	ok := true
	ir.Walk(e, func(x ir.Expr) bool {
		switch x.(type) {
		case *ir.IndexRef, *ir.Load, *ir.Reduce:
			ok = false
		}
		return ok
	})
	return ok
}

// igemmTemplate computes an implicit matrix product with the matmul
// templates' tiles (same space, constraints and tile shapes), loading
// gathered operands element by element through the load's own index
// expressions; a strided operand loads as a matmul's does.
type igemmTemplate struct{ mma bool }

func (t igemmTemplate) Name() string {
	if t.mma {
		return "igemm-mma"
	}
	return "igemm-simt"
}

// Accepts: as matmulTemplate's, the simt tile takes every product.
func (t igemmTemplate) Accepts(s *ir.Stmt) bool {
	g := MatchIGemm(s)
	return g != nil && (g.TensorCores || !t.mma)
}

func (t igemmTemplate) Available(lim Limits) bool { return matmulTemplate(t).Available(lim) }

func (t igemmTemplate) Space() map[string][]int64 { return matmulTemplate(t).Space() }
func (t igemmTemplate) Version() int              { return matmulTemplate(t).Version() }
func (t igemmTemplate) Check(l *Launch) error     { return matmulTemplate(t).Check(l) }

// Default: on CUDA cores, simtDefault (BK = 8 also holds half as many
// gathered elements in registers for the next slice as 16: with 16,
// conv_s2 spills at 255 registers for sm_80 and sm_90; with 8 it takes
// 204). On tensor cores, the matmul default, with a 64-row or 64-column
// tile where the product has no more rows or columns than that (a
// convolution with 64 filters), so that half of each tile is not idle. Not
// yet timed on a GPU against the alternatives.
func (t igemmTemplate) Default(l *Launch) Config {
	if !t.mma {
		g := MatchIGemm(l.Stmt)
		return simtDefault(g.Reduce.T, g.Batch, g.M, g.N, g.K, g.A.Strided && g.B.Strided, false)
	}
	c := Config{"BM": 128, "BN": 128, "BK": 32, "WARPS_M": 2, "WARPS_N": 4, "STAGES": 4, "BLOCKS_PER_SM": 1, "FRAGS": 2}
	g := MatchIGemm(l.Stmt)
	// Warp tiles of 32 x 32 for the smaller tiles.
	switch m, n := atMost64(g.M), atMost64(g.N); {
	case m && n:
		c["BM"], c["BN"], c["WARPS_M"], c["WARPS_N"] = 64, 64, 2, 2
	case m:
		c["BM"] = 64
	case n:
		c["BN"], c["WARPS_M"], c["WARPS_N"] = 64, 4, 2
	}
	return c
}

// TileShape is the output tile of a matmul or igemm launch, BM x BN.
func TileShape(l *Launch) (bm, bn int64) { return l.Config["BM"], l.Config["BN"] }

// atMost64 reports whether indices ix are known to have at most 64
// points: a product dimension no larger than a 64-wide tile.
func atMost64(ix []*ir.Index) bool {
	n, ok := Simplify(Extent(ix)).(*ir.Const)
	return ok && n.I <= 64
}

// igemmTiles is the number of output tiles of an igemm launch (times its
// batch), as Tiles is a matmul's.
func igemmTiles(l *Launch) ir.Expr {
	g := MatchIGemm(l.Stmt)
	bm, bn := TileShape(l)
	return Simplify(mul(Extent(g.Batch), mul(cdiv(Extent(g.M), bm), cdiv(Extent(g.N), bn))))
}

func (t igemmTemplate) Grid(l *Launch) Grid {
	g := MatchIGemm(l.Stmt)
	c := l.Config
	gr := Grid{Blocks: capBlocks(igemmTiles(l)), Threads: SimtThreads(c)}
	if t.mma {
		gr.Threads = 32 * c["WARPS_M"] * c["WARPS_N"]
		gr.Smem = mmaRing(g.A.KMajor, g.B.KMajor, g.A.Load.Tensor.DType, c)
	}
	return occupancy(l, gr)
}
