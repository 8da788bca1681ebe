package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// Matmul is a statement recognized as a (batched) matrix product with an
// elementwise epilogue:
//
//	C[batch..., m..., n...] = epilogue(sum[k](body(A[...], B[...])))
//
// in any order of the output indices, where A is indexed by the batch, M
// and K indices and B by the batch, N and K indices, each by plain index
// variables. The M indices (A's alone) are adjacent in A, in output order,
// so that they flatten into one row index; likewise N in B. The body is
// the reduction's expression of the two loads (A * B, f32(A) * f32(B),
// f64(A * B)); the epilogue is the rest of the statement, evaluated per
// output element with the sum in a register (bias, activation, scaling,
// residual, cast).
type Matmul struct {
	Stmt   *ir.Stmt
	Reduce *ir.Reduce
	A, B   *ir.Load
	M, N   []*ir.Index // in output order
	Batch  []*ir.Index // in output order
	K      *ir.Index
	// AKMajor: A's last dimension is K (A is M x K row-major); otherwise
	// it is M's last, and A is stored K x M. Likewise BKMajor for B
	// (N x K when set, K x N otherwise).
	AKMajor, BKMajor bool
	// TensorCores: f16 or bf16 operands widened to f32, or f32 operands
	// rounded with tf32(), multiplied and summed in f32: what mma
	// instructions compute exactly (Elem is the operands' dtype).
	TensorCores bool
	Elem        ir.DType
}

// MatchMatmul recognizes s as a matrix product, or returns nil. The
// product may sit in a branch of the epilogue (a causal mask's j > i ?
// -inf : sum[d](Q[i, d] * K[j, d])): a tile computes every sum of its
// outputs, which reads only the operands' elements at plain indices, in
// bounds at every point, and the epilogue picks per output.
func MatchMatmul(s *ir.Stmt) *Matmul {
	rs := ir.TopReductions(s.Value)
	if len(rs) != 1 {
		return nil
	}
	r := rs[0]
	if r.Op != ir.Sum || len(r.Axes) != 1 || !zeroLo(r.Axes[0]) || len(ir.TopReductions(r.Body)) > 0 {
		return nil
	}
	for _, ix := range s.Index {
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
	if len(loads) != 2 || !product2(r.Body) {
		return nil
	}
	k := r.Axes[0]
	mm := &Matmul{Stmt: s, Reduce: r, A: loads[0], B: loads[1], K: k}
	for _, l := range loads {
		if l.Default != nil || !plainIndices(l, s.Index, k) || !slices.ContainsFunc(l.Index, refersTo(k)) {
			return nil
		}
	}
	var ok bool
	reads := func(l *ir.Load) func(*ir.Index) bool {
		return func(ix *ir.Index) bool { return slices.ContainsFunc(l.Index, refersTo(ix)) }
	}
	if mm.Batch, mm.M, mm.N, ok = splitOutputs(s.Index, reads(mm.A), reads(mm.B)); !ok {
		return nil
	}
	if len(mm.M) == 0 || len(mm.N) == 0 {
		return nil // a matrix-vector product suits a block per row better
	}
	// Order the operands so that A holds the first output index of M or N.
	if slices.Index(s.Index, mm.N[0]) < slices.Index(s.Index, mm.M[0]) {
		mm.A, mm.B, mm.M, mm.N = mm.B, mm.A, mm.N, mm.M
	}
	if mm.AKMajor, ok = layout(mm.A, mm.M, k); !ok {
		return nil
	}
	if mm.BKMajor, ok = layout(mm.B, mm.N, k); !ok {
		return nil
	}
	mm.TensorCores = tensorCoreBody(r)
	mm.Elem = mm.A.Tensor.DType
	return mm
}

// splitOutputs sorts the output indices of a product of two operands:
// those both read (a batch), those only the first reads (rows), those
// only the second reads (columns), each in output order. It fails on an
// index neither reads (a broadcast).
func splitOutputs(index []*ir.Index, inA, inB func(*ir.Index) bool) (batch, rows, cols []*ir.Index, ok bool) {
	for _, ix := range index {
		a, b := inA(ix), inB(ix)
		switch {
		case a && b:
			batch = append(batch, ix)
		case a:
			rows = append(rows, ix)
		case b:
			cols = append(cols, ix)
		default:
			return nil, nil, nil, false
		}
	}
	return batch, rows, cols, true
}

func zeroLo(ix *ir.Index) bool {
	c, ok := ix.Lo.(*ir.Const)
	return ok && c.I == 0
}

func refersTo(ix *ir.Index) func(ir.Expr) bool {
	return func(e ir.Expr) bool {
		ref, ok := e.(*ir.IndexRef)
		return ok && ref.Index == ix
	}
}

// plainIndices: every index of l is one of out or k, none twice.
func plainIndices(l *ir.Load, out []*ir.Index, k *ir.Index) bool {
	seen := map[*ir.Index]bool{}
	for _, e := range l.Index {
		ref, ok := e.(*ir.IndexRef)
		if !ok || seen[ref.Index] || (ref.Index != k && !slices.Contains(out, ref.Index)) {
			return false
		}
		seen[ref.Index] = true
	}
	return true
}

// product2 reports whether body is a product of its two loads, each
// possibly widened, or such a product widened: an expression whose value
// is linear in each operand, as a tiled product requires.
func product2(body ir.Expr) bool {
	if c, ok := body.(*ir.Cast); ok {
		body = c.X
	}
	b, ok := body.(*ir.Binary)
	if !ok || b.Op != ir.Mul {
		return false
	}
	isLoad := func(e ir.Expr) bool {
		if c, ok := e.(*ir.Cast); ok && c.T.IsFloat() == c.X.Type().IsFloat() && c.T.Size() >= c.X.Type().Size() {
			e = c.X
		} else if c, ok := e.(*ir.Call); ok && c.Fn == ir.TF32 {
			e = c.Args[0]
		}
		_, ok := e.(*ir.Load)
		return ok
	}
	return isLoad(b.X) && isLoad(b.Y)
}

// layout checks that the row indices rows are adjacent in l in output
// order, and that l's last dimension is k (K-major) or the last of rows.
func layout(l *ir.Load, rows []*ir.Index, k *ir.Index) (kMajor bool, ok bool) {
	first := slices.IndexFunc(l.Index, refersTo(rows[0]))
	for i, ix := range rows {
		if first+i >= len(l.Index) || !refersTo(ix)(l.Index[first+i]) {
			return false, false
		}
	}
	last := l.Index[len(l.Index)-1]
	switch {
	case refersTo(k)(last):
		return true, true
	case refersTo(rows[len(rows)-1])(last):
		return false, true
	}
	return false, false
}

// tensorCoreBody: the reduction multiplies two f16 or two bf16 loads
// widened to f32, or two f32 loads rounded to tf32, and sums in f32.
func tensorCoreBody(r *ir.Reduce) bool {
	if r.T != ir.F32 {
		return false
	}
	b, ok := r.Body.(*ir.Binary)
	if !ok {
		return false
	}
	tf32 := func(e ir.Expr) bool {
		c, ok := e.(*ir.Call)
		if !ok || c.Fn != ir.TF32 {
			return false
		}
		l, ok := c.Args[0].(*ir.Load)
		return ok && l.Tensor.DType == ir.F32
	}
	if tf32(b.X) && tf32(b.Y) {
		return true
	}
	var dt ir.DType
	for _, e := range []ir.Expr{b.X, b.Y} {
		c, ok := e.(*ir.Cast)
		if !ok || c.T != ir.F32 {
			return false
		}
		t := c.X.Type()
		if (t != ir.F16 && t != ir.BF16) || (dt != 0 && t != dt) {
			return false
		}
		dt = t
	}
	return true
}

// MatrixUnit names the GPU unit whose rate bounds the products of the
// sum r: "bf16" or "f16" when r multiplies two such loads widened to f32
// (tensor cores), "tf32" for two f32 loads rounded with tf32(), "f32" for
// any other f32 sum (fused multiply-adds), "" for other types (no unit
// kgen measures: runtime.Peak).
func MatrixUnit(r *ir.Reduce) string {
	switch {
	case tensorCoreBody(r):
		var t ir.DType
		ir.Walk(r.Body, func(e ir.Expr) bool {
			if l, ok := e.(*ir.Load); ok {
				t = l.Tensor.DType
				return false
			}
			return true
		})
		if t == ir.F32 {
			return "tf32"
		}
		return t.String()
	case r.T == ir.F32:
		return "f32"
	}
	return ""
}

// Extent is the number of points of indices ix, an i64 expression.
func Extent(ix []*ir.Index) ir.Expr {
	var extents []ir.Expr
	for _, x := range ix {
		extents = append(extents, &ir.Binary{Op: ir.Sub, X: x.Hi, Y: x.Lo})
	}
	return Simplify(product(extents))
}

// Strides are the row-major element strides of a tensor's dimensions.
func Strides(t *ir.Tensor) []ir.Expr {
	s := make([]ir.Expr, len(t.Shape))
	var acc ir.Expr = ir.IntConst(1)
	for d := len(t.Shape) - 1; d >= 0; d-- {
		s[d] = Simplify(acc)
		acc = mul(acc, t.Shape[d])
	}
	return s
}

// Stride is how far apart in l's tensor (elements) the points that l
// reads at ix and ix + 1 are: the stride of the dimension ix indexes, or
// for an index inside affine index expressions (a split product's chunk,
// chunk * CH + k), the sum over dimensions of stride times coefficient.
func Stride(l *ir.Load, ix *ir.Index) ir.Expr {
	strides := Strides(l.Tensor)
	var total ir.Expr = ir.IntConst(0)
	for d, e := range l.Index {
		if c := coefficient(e, ix); c != nil {
			total = add(total, mul(c, strides[d]))
		}
	}
	return Simplify(total)
}

// Contiguous reports whether load l reads consecutive elements at
// consecutive points of axes in row-major order (the last axis fastest):
// every index of l affine in the axes, the last axis's stride 1 and each
// other's the next one's times the next one's (known) extent, as X[r,
// chunk * CH + d] over d and a group's X[n, g * CG + j, h, w] over [j, h,
// w] are.
func Contiguous(l *ir.Load, axes []*ir.Index) bool {
	for _, e := range l.Index {
		for _, ax := range axes {
			if Mentions(e, ax) && coefficient(e, ax) == nil {
				return false
			}
		}
	}
	want := int64(1)
	for k := len(axes) - 1; k >= 0; k-- {
		s, ok := Simplify(Stride(l, axes[k])).(*ir.Const)
		if !ok || s.I != want {
			return false
		}
		if k > 0 {
			n, ok := constExtent(axes[k : k+1])
			if !ok {
				return false
			}
			want *= n
		}
	}
	return true
}

// coefficient is the factor of ix in the affine expression e (nil for
// none): e's terms are indices, invariants and their products.
func coefficient(e ir.Expr, ix *ir.Index) ir.Expr {
	switch x := e.(type) {
	case *ir.IndexRef:
		if x.Index == ix {
			return ir.IntConst(1)
		}
	case *ir.Binary:
		cx, cy := coefficient(x.X, ix), coefficient(x.Y, ix)
		switch {
		case x.Op == ir.Add && cx != nil && cy != nil:
			return add(cx, cy)
		case x.Op == ir.Add && cx != nil:
			return cx
		case x.Op == ir.Add:
			return cy
		case x.Op == ir.Sub && cy != nil:
			return &ir.Binary{Op: ir.Sub, X: orZero(cx), Y: cy}
		case x.Op == ir.Sub:
			return cx
		case x.Op == ir.Mul && cx != nil && invariant(x.Y):
			return mul(cx, x.Y)
		case x.Op == ir.Mul && cy != nil && invariant(x.X):
			return mul(x.X, cy)
		}
	case *ir.Unary:
		if c := coefficient(x.X, ix); c != nil && x.Op == ir.Neg {
			return &ir.Binary{Op: ir.Sub, X: ir.IntConst(0), Y: c}
		}
	}
	return nil
}

func orZero(e ir.Expr) ir.Expr {
	if e == nil {
		return ir.IntConst(0)
	}
	return e
}

// matmulTemplate computes a matrix product in output tiles of BM x BN, a
// block per tile (grid-stride over tiles, grouped for L2 reuse), stepping
// through K by BK. With tensor cores (mma) each of the WARPS_M x WARPS_N
// warps computes a sub-tile with mma.sync from operands staged through a
// STAGES-deep cp.async pipeline in shared memory; without (simt) each of
// 256 threads computes an 8 x 8 block of outputs from double-buffered
// shared tiles.
type matmulTemplate struct{ mma bool }

func (t matmulTemplate) Name() string {
	if t.mma {
		return "matmul-mma"
	}
	return "matmul-simt"
}

// Accepts: the mma tile takes the products tensor cores can compute; the
// simt tile takes every product, those too on a target without mma.sync
// (the table puts the tensor-core templates first).
func (t matmulTemplate) Accepts(s *ir.Stmt) bool {
	m := MatchMatmul(s)
	return m != nil && (m.TensorCores || !t.mma)
}

// Available: the mma tile needs mma.sync, ldmatrix and cp.async.
func (t matmulTemplate) Available(lim Limits) bool { return !t.mma || !lim.NoMMASync }

func (t matmulTemplate) Space() map[string][]int64 {
	if t.mma {
		return map[string][]int64{
			"BM": {64, 128, 256}, "BN": {64, 128, 256}, "BK": {32, 64},
			"WARPS_M": {1, 2, 4}, "WARPS_N": {1, 2, 4}, "STAGES": {2, 3, 4, 5},
			"BLOCKS_PER_SM": {1, 2}, "FRAGS": {1, 2},
		}
	}
	return map[string][]int64{"BM": {64, 128}, "BN": {64, 128}, "BK": {8, 16}, "BLOCKS_PER_SM": {1, 2}}
}

// Version: 2 since the simt tile moves aligned operands in vector chunks
// and takes BLOCKS_PER_SM, and since the mma tile's epilogue stores
// column pairs; 3 since the simt tile takes BM and BN.
func (t matmulTemplate) Version() int { return 3 }

// Default: for tensor cores, 128 x 128 tiles of 8 warps with
// double-buffered fragments, or 256 x 128 tiles when the product is known
// to have enough of them to fill a large GPU twice over (bf16 4096^3 on the
// H100, 2026-11-23: 284 TFLOP/s with 128 x 128, 330 with 256 x 128; single
// fragments 224; testsuite/sweep.txt; tf32 tiles, twice the bytes, stay
// 128 x 128 to fit sm_80's shared memory); for CUDA cores, simtDefault.
func (t matmulTemplate) Default(l *Launch) Config {
	if !t.mma {
		m := MatchMatmul(l.Stmt)
		// HIP's simt tile (NoMMASync marks HIP) keeps 128 x 128 for B by
		// rows: see simtTile.
		return simtDefault(m.Reduce.T, m.Batch, m.M, m.N, []*ir.Index{m.K}, true, !m.BKMajor && !l.Target.NoMMASync)
	}
	c := Config{"BM": 128, "BN": 128, "BK": 32, "WARPS_M": 2, "WARPS_N": 4, "STAGES": 4, "BLOCKS_PER_SM": 1, "FRAGS": 2}
	if m := MatchMatmul(l.Stmt); m != nil && m.Elem.Size() == 2 && fillsTwice(m, 256, 128) {
		c["BM"], c["WARPS_M"], c["WARPS_N"] = 256, 4, 2
	}
	return c
}

// simtDefault is the CUDA-core tile's default for a product of batch x
// rows x cols outputs over k: slices of BK = 8 and, where the product is
// specialized (every extent known), its accumulator 4 bytes or less and
// its operands matrices in memory (strided), two blocks a
// multiprocessor, which caps a thread at 128 registers. On the H100
// (2026-11-26, testsuite/results/2026-11-26-h100-s6-simt/) that was the
// fastest or within 11% of the fastest of the four configurations for
// each of the suite's 11 f32 products (BK = 16 with one block lost up to
// 1.6x on some: kb_matmul_bt 411 against 665 us with BK = 8 and one
// block, ptxas scheduling the shared-memory reads differently); under the
// cap a kernel of run-time sizes, which holds both the vector and the
// element paths, or a gathered operand, spills hundreds of bytes.
//
// The tile is simtTile's.
func simtDefault(acc ir.DType, batch, rows, cols, k []*ir.Index, strided, bRows bool) Config {
	c := Config{"BK": 8, "BLOCKS_PER_SM": 1}
	c["BM"], c["BN"] = simtTile(batch, rows, cols, strided, bRows)
	if _, known := constExtent(slices.Concat(batch, rows, cols, k)); known && strided && acc.Size() <= 4 {
		c["BLOCKS_PER_SM"] = 2
	}
	return c
}

// simtTile is the CUDA-core tile for batch x rows x cols outputs: 128 x
// 128 (256 threads), or 128 x 64 or 64 x 128 (128 threads) when the
// product is known to have fewer 128 x 128 tiles than half of bigGPU's
// multiprocessors and the halved side gives it more (the columns when
// both do). Measured on the H100 (2026-11-26,
// testsuite/results/2026-11-26-h100-s14-simt/sweep.txt, every shape of
// the space): a stride-2 3x3 convolution of 6272 pixels and 128 filters,
// 49 tiles of 128 x 128, took 104.90 us, 75.92 with 128 x 64, 97.63 with
// 64 x 128; split-K's partial products of a 128 x 512 linear layer, 32
// tiles, 26.05 us, 20.77 with 128 x 64. With 128 tiles a 1024 x 2048
// product was faster in 64 x 128 tiles with B stored by rows (418 against
// 539 us) but slower with B stored by columns (462 against 433), and a
// dilated convolution of 32 filters slower (43.68 against 39.01). So a
// matrix product whose B is a matrix stored by rows (K x N, bRows) and
// whose 128 x 128 tiles do not fill bigGPU's multiprocessors once takes 64
// x 128 tiles where that gives it more; other products keep 128 x 128.
// Tuning agreed (testsuite/results/2026-11-27-h100-s21-tune/): 64 x 128
// won for both 1024 x 2048 products with B by rows (541.22 -> 421.76 us,
// 451.52 -> 417.66), 128 x 128 for the one with B by columns; as the
// default (-s21-simt/) on cuda:sm_90, matmul_rect 536.38 -> 422.59 us, a
// batched product of 66 tiles 37.98 -> 20.99. HIP's tile, on hip:nvidia,
// lost (matmul_rect 512.46 -> 654.85 us) and keeps 128 x 128. 64 x 64
// tiles (64 threads) were the slowest on all but the smallest products
// and f64 sums; they are left to tuning.
//
// Operands that are matrices in memory (strided) take 128 x 64 tiles when
// the product has at most 64 columns, whatever the tile count: causal
// attention's output, 64 columns, took 757.15 us with 128 x 128 tiles
// and 649.98 with 128 x 64 (testsuite/results/2026-11-26-h100-s14-attention/sweep/),
// a 16384 x 16 product 3.70 and 3.07 (-s14-simt/sweep.txt). Gathered
// operands keep 128 x 128 there: a dilated convolution of 32 filters
// took 39.01 us, 49.31 with 128 x 64.
func simtTile(batch, rows, cols []*ir.Index, strided, bRows bool) (bm, bn int64) {
	b, bok := constExtent(batch)
	m, mok := constExtent(rows)
	n, nok := constExtent(cols)
	if !bok || !mok || !nok {
		return 128, 128
	}
	if strided && n <= 64 {
		return 128, 64
	}
	tiles := func(bm, bn int64) int64 { return b * ((m + bm - 1) / bm) * ((n + bn - 1) / bn) }
	switch t := tiles(128, 128); {
	case t >= bigGPU/2 && !(bRows && t < bigGPU):
		return 128, 128
	case tiles(128, 64) > t && t < bigGPU/2:
		return 128, 64
	case tiles(64, 128) > t:
		return 64, 128
	}
	return 128, 128
}

// fillsTwice reports whether m is known to have enough whole bm x bn
// output tiles to fill a large GPU twice over.
func fillsTwice(m *Matmul, bm, bn int64) bool {
	rows, rok := Simplify(mul(Extent(m.Batch), Extent(m.M))).(*ir.Const)
	cols, cok := Simplify(Extent(m.N)).(*ir.Const)
	return rok && cok && (rows.I/bm)*(cols.I/bn) >= 2*bigGPU
}

// Check holds the mma tile's own constraint: the block's threads stage
// the A and B tiles in whole 16-byte chunks each. (Warp sub-tiles are
// whole 16 x 16 fragment pairs for every value in the space.)
func (t matmulTemplate) Check(l *Launch) error {
	if !t.mma {
		if m := MatchMatmul(l.Stmt); m != nil && SimtSmem(m, l.Config) > MaxStaticSmem {
			return fmt.Errorf("the operand tiles take %d bytes of static shared memory; at most %d", SimtSmem(m, l.Config), MaxStaticSmem)
		}
		return nil
	}
	c := l.Config
	threads := 32 * c["WARPS_M"] * c["WARPS_N"]
	if (c["BM"]*c["BK"]/8)%threads != 0 || (c["BN"]*c["BK"]/8)%threads != 0 {
		return fmt.Errorf("the %d threads must split BM x BK and BN x BK into whole 8-element chunks", threads)
	}
	return nil
}

// bigGPU is the multiprocessor count the defaults plan for (the H100 SXM
// has 132).
const bigGPU = 132

// SimtThreads is the simt tile's block: a thread for each 8 x 8 outputs
// of its BM x BN tile.
func SimtThreads(c Config) int64 { return c["BM"] / 8 * (c["BN"] / 8) }

// SimtSmem is the simt tile's static shared memory under configuration c:
// two buffers of BK rows of each operand's tile, padded by 4 elements
// (prelude's KgSimt).
func SimtSmem(m *Matmul, c Config) int64 {
	return 2 * c["BK"] * ((c["BM"]+4)*int64(m.A.Tensor.DType.Size()) + (c["BN"]+4)*int64(m.B.Tensor.DType.Size()))
}

// Tiles is the number of output tiles of a matmul launch.
func Tiles(l *Launch) ir.Expr {
	m := MatchMatmul(l.Stmt)
	bm, bn := TileShape(l)
	return Simplify(mul(Extent(m.Batch), mul(cdiv(Extent(m.M), bm), cdiv(Extent(m.N), bn))))
}

func (t matmulTemplate) Grid(l *Launch) Grid {
	g := Grid{Blocks: capBlocks(Tiles(l)), Threads: SimtThreads(l.Config)}
	c := l.Config
	if t.mma {
		g.Threads = 32 * c["WARPS_M"] * c["WARPS_N"]
		g.Smem = MmaSmem(MatchMatmul(l.Stmt), c)
	}
	return occupancy(l, g)
}

// mmaPad is the padding, in elements, of each shared-memory row of the
// mma template, which keeps a fragment's reads on distinct banks: 8 for
// ldmatrix's eight 16-byte rows; for tf32's element reads, 4 on K-major
// rows and 8 on the others.
func mmaPad(elem ir.DType, kMajor bool) int64 {
	if elem == ir.F32 && kMajor {
		return 4
	}
	return 8
}

// MmaSmem is the mma template's dynamic shared memory: STAGES copies of
// the A and B tiles, each stored as in global memory (K-major or not),
// with padded rows.
func MmaSmem(m *Matmul, c Config) int64 { return mmaRing(m.AKMajor, m.BKMajor, m.Elem, c) }

// mmaRing is the shared memory of STAGES A and B tiles of elem elements,
// stored K-major or not.
func mmaRing(aKMajor, bKMajor bool, elem ir.DType, c Config) int64 {
	a := c["BM"] * (c["BK"] + mmaPad(elem, true))
	if !aKMajor {
		a = c["BK"] * (c["BM"] + mmaPad(elem, false))
	}
	b := c["BN"] * (c["BK"] + mmaPad(elem, true))
	if !bKMajor {
		b = c["BK"] * (c["BN"] + mmaPad(elem, false))
	}
	return c["STAGES"] * (a + b) * int64(elem.Size())
}
