package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// group is a run of statements one launch computes: Fused lets whose
// values stay on chip, then Final.
type group struct {
	fused   []*ir.Stmt
	final   *ir.Stmt
	also    []*ir.Stmt // elementwise siblings of final (see siblings)
	rowDims int
	cols    bool // a column group (colGroupOK)
}

// groupRows splits k's statements into launches. A run of lets that each
// reduce along a row (rowReduction), followed by the statement that
// reads them at its own row, becomes one row-reduce launch (softmax,
// layernorm, rmsnorm), which also stores those that later launches read;
// so does an inner reduction alone. Such a run may hold statements over
// whole rows that its later statements read, which the launch stores too
// (storedRowGroup). With cols, a run
// of column reductions and the elementwise statement that reads them
// becomes one col-group launch (colGroupOK). Everything else is a launch
// of its own.
func groupRows(k *ir.Kernel, cols bool, lim Limits) []group {
	var groups []group
	stmts := k.Stmts
	for i := 0; i < len(stmts); {
		if g, next, ok := storedRowGroup(k, i, lim); ok {
			groups = append(groups, g)
			i = next
			continue
		}
		best := rowGroupAt(k, i)
		if best < 0 && cols {
			for j := i; j < len(stmts); j++ {
				if colGroupOK(k, stmts[i:j], stmts[j], lim) {
					best = j
				}
				if stmts[j].Target.Kind != ir.Let || MatchColumns(stmts[j]) == nil {
					break
				}
			}
			if best >= 0 {
				groups = append(groups, group{fused: stmts[i:best], final: stmts[best], cols: true})
				i = best + 1
				continue
			}
		}
		if best < 0 {
			groups = append(groups, group{final: stmts[i]})
			i++
			continue
		}
		g := group{fused: stmts[i:best], final: stmts[best], rowDims: rowRank(stmts[i:best], stmts[best])}
		groups = append(groups, g)
		i = best + 1
	}
	return groups
}

// rowGroupAt is the index of the last statement of the longest row group
// that starts at k.Stmts[i] (see rowGroupOK), or -1.
func rowGroupAt(k *ir.Kernel, i int) int {
	stmts := k.Stmts
	best := -1
	for j := i; j < len(stmts); j++ {
		if rowGroupOK(k, stmts[i:j], nil, stmts[j]) {
			best = j
		}
		if !isRowMember(stmts[j]) {
			break
		}
	}
	return best
}

// storedRowGroup is a row group (see rowGroupOK) that also computes
// statements over whole rows read by the statements after them in the
// group: a threshold's mask M[r, d] = X[r, d] > t before the per-row
// any() of M; a residual sum H = X + R before the RMS norm of H; an
// attention's probabilities p = exp(s - mx) between the row's max mx and
// their sum. The group's statements read each one's value where they read
// its tensor (inlined), and the launch stores it along the row beside its
// own outputs (Launch.Also): the row is read from memory once and the
// stored statement's output written once, where separate launches would
// write it and read it back. It returns the group, whose statements run
// from k.Stmts[i], and the index of the statement after it, or ok false
// when no such group starts at i.
func storedRowGroup(k *ir.Kernel, i int, lim Limits) (g group, next int, ok bool) {
	stmts := k.Stmts
	var members, also []*ir.Stmt
	best := -1
	for j, s := range stmts[i:] {
		if len(also) > 0 && storedGroupOK(k, members, also, s, lim) {
			best = i + j
			g = group{also: slices.Clone(also), fused: slices.Clone(members), final: s, rowDims: rowRank(members, s)}
		}
		if rowPrologue(s) {
			also = append(also, s)
		} else if isRowMember(s) {
			members = append(members, s)
		} else {
			break // the group cannot reach past s
		}
	}
	if best < 0 {
		return group{}, 0, false
	}
	inGroup := stmts[i : best+1]
	for q, a := range inGroup {
		if !slices.Contains(g.also, a) {
			continue
		}
		inline := inliner(a, a.Target)
		for _, t := range inGroup[q+1:] {
			t.Value = ir.Rewrite(t.Value, inline)
		}
	}
	return g, best + 1, true
}

// storedGroupOK checks that members and also (statements over whole rows
// that the group stores, in statement order among the members), then
// final, can be one row group (storedRowGroup): the members and final as
// rowGroupOK has them, each of also over the group's rows and one column
// index and read by a later statement of the group, and a final without
// members a row reduction of its own.
func storedGroupOK(k *ir.Kernel, members, also []*ir.Stmt, final *ir.Stmt, lim Limits) bool {
	if len(members) == 0 && choose(final, lim).Name() != "row-reduce" {
		return false
	}
	if !rowGroupOK(k, members, also, final) {
		return false
	}
	r := rowRank(members, final)
	end := slices.Index(k.Stmts, final)
	for _, a := range also {
		if len(a.Index) != r+1 {
			return false
		}
		for d := range r {
			if !sameExtent(a.Index[d], final.Index[d]) {
				return false
			}
		}
		// Read by a later statement of the group: one read by none would
		// only share the launch.
		at := slices.Index(k.Stmts, a)
		if !slices.ContainsFunc(k.Stmts[at+1:end+1], func(t *ir.Stmt) bool { return uses(t, a.Target) }) {
			return false
		}
	}
	return true
}

// rowPrologue reports whether s could be a statement over whole rows that
// a row group stores (storedRowGroup): elementwise, and reading every
// tensor at most along its last index, that is, its column, as its own
// last dimension, so that a reduction over the column that reads it reads
// its inputs along their rows as well.
func rowPrologue(s *ir.Stmt) bool {
	if len(s.Index) < 2 || ir.Classify(s) != ir.Elementwise || (s.Target.Kind != ir.Output && s.Target.Kind != ir.Let) {
		return false
	}
	col := s.Index[len(s.Index)-1]
	ok := true
	ir.Walk(s.Value, func(x ir.Expr) bool {
		ld, isLoad := x.(*ir.Load)
		if !isLoad || len(ld.Index) == 0 {
			return true
		}
		last := len(ld.Index) - 1
		for d, ix := range ld.Index {
			if d == last && Mentions(ix, col) && !UnitStep(ix, col) {
				ok = false
			}
			if d < last && Mentions(ix, col) {
				ok = false
			}
		}
		return true
	})
	return ok
}

// isRowMember reports whether s could be a fused member: a let or an
// output whose value reduces along its rows. A fused output (a row's
// statistics that the kernel also returns, such as a quantization's
// scales) is stored by the launch as well as kept on chip.
func isRowMember(s *ir.Stmt) bool {
	return (s.Target.Kind == ir.Let || s.Target.Kind == ir.Output) && rowReduction(s) && unguarded(s.Value)
}

// rowReduction reports whether s reduces along its rows as a row-reduce
// launch's statements do: an inner reduction, or any other that suits a
// block per output point (rowWise; a group norm's statistics over a
// group's channels, a cosine's dot product).
func rowReduction(s *ir.Stmt) bool {
	return ir.Classify(s) == ir.InnerReduction || rowWise(s)
}

// unguarded reports whether every reduction in e is evaluated whenever e
// is: each is reached at least once outside a branch of ?: and the right
// of && or || (a reduction shared by the condition and a branch, as in
// g > 0 ? g : g * slope of a product g, is computed for the condition
// anyway). A row-reduce launch computes reductions up front, across the
// block, so a reduction a condition guards (r > 0 ? max[d](X[r - 1, d]) :
// 0) must stay generic.
func unguarded(e ir.Expr) bool {
	always := map[*ir.Reduce]bool{}
	var all []*ir.Reduce
	var visit func(e ir.Expr, guarded bool)
	visit = func(e ir.Expr, guarded bool) {
		switch x := e.(type) {
		case *ir.Reduce:
			all = append(all, x)
			always[x] = always[x] || !guarded
			return
		case *ir.Select:
			visit(x.Cond, guarded)
			visit(x.X, true)
			visit(x.Y, true)
			return
		case *ir.Binary:
			if x.Op == ir.And || x.Op == ir.Or {
				visit(x.X, guarded)
				visit(x.Y, true)
				return
			}
		}
		for _, c := range ir.Children(e) {
			visit(c, guarded)
		}
	}
	visit(e, false)
	return !slices.ContainsFunc(all, func(r *ir.Reduce) bool { return !always[r] })
}

func rowRank(members []*ir.Stmt, final *ir.Stmt) int {
	if len(members) > 0 {
		return len(members[0].Index)
	}
	return len(final.Index)
}

// rowGroupOK checks that members then final can run one block per row,
// and that they should: rows too few and too long for a block each
// (longRows) run the members and final as launches of their own, the
// final's elements over the whole GPU. The statements of also, which the
// group stores along its rows (storedRowGroup), may read the members
// before them at their own rows.
func rowGroupOK(k *ir.Kernel, members, also []*ir.Stmt, final *ir.Stmt) bool {
	kind := ir.Classify(final)
	if !unguarded(final.Value) {
		return false
	}
	if len(members) == 0 {
		return kind == ir.InnerReduction
	}
	r := rowRank(members, final)
	if len(final.Index) < r || (kind != ir.Elementwise && !(rowReduction(final) && len(final.Index) == r)) {
		return false
	}
	if n := RowLength(&Launch{Stmt: final, RowDims: r}); n > 0 && longRows(final.Index[:r], n) {
		return false
	}
	for _, m := range members {
		if !isRowMember(m) || len(m.Index) != r {
			return false
		}
		for d := range r {
			if ir.Format(m.Index[d].Hi) != ir.Format(final.Index[d].Hi) || ir.Format(m.Index[d].Lo) != ir.Format(final.Index[d].Lo) {
				return false
			}
		}
	}
	// Each member is read by later members and the final only at the
	// reader's own row; statements after the group may read it anywhere,
	// from the workspace, where the launch stores it too (readAfter).
	inGroup := append(slices.Clone(members), final)
	for mi, m := range members {
		for _, s := range k.Stmts {
			reads := false
			atRow := true
			ir.Walk(s.Value, func(e ir.Expr) bool {
				l, ok := e.(*ir.Load)
				if !ok || l.Tensor != m.Target {
					return true
				}
				reads = true
				if l.Default != nil || len(l.Index) != r || len(s.Index) < r {
					atRow = false
					return true
				}
				for d, ix := range l.Index {
					ref, ok := ix.(*ir.IndexRef)
					if !ok || ref.Index != s.Index[d] {
						atRow = false
					}
				}
				return true
			})
			if !reads {
				continue
			}
			if slices.Contains(also, s) {
				// Stored by the group after every member, whose values it
				// reads in registers: at its own row only.
				if !atRow {
					return false
				}
				continue
			}
			pos := slices.Index(inGroup, s)
			if pos < 0 && slices.Index(k.Stmts, s) > slices.Index(k.Stmts, final) {
				continue
			}
			if pos <= mi || !atRow {
				return false
			}
		}
	}
	return true
}

// rowWise reports whether a statement's reductions suit a block per output
// point: an inner reduction, or any unguarded reduction whose last axis
// runs along the last (contiguous) dimension of every load it indexes, so
// that a block's threads read consecutive elements, and that is long
// enough to occupy a block: a full reduction to a scalar (a loss), or one
// of known length >= MinRowLength (a matrix-vector product). Column sums
// and short windows (pooling) stay with the generic template, a thread per
// output point.
func rowWise(s *ir.Stmt) bool {
	if ir.Classify(s) == ir.InnerReduction {
		return true
	}
	rs := ir.TopReductions(s.Value)
	if len(rs) == 0 || !unguarded(s.Value) {
		return false
	}
	for _, r := range rs {
		last := r.Axes[len(r.Axes)-1]
		contiguous := true
		ir.Walk(r.Body, func(e ir.Expr) bool {
			l, ok := e.(*ir.Load)
			if !ok || !mentions(l, last) {
				return true
			}
			// A gather (an index read from memory) is not contiguous in
			// any template; a block still shares its row's reduction.
			if !UnitStep(l.Index[len(l.Index)-1], last) && !Gathers(l) {
				contiguous = false
			}
			return true
		})
		if !contiguous {
			return false
		}
		if len(s.Index) > 0 {
			n, ok := constExtent(r.Axes)
			if !ok || n < MinRowLength {
				return false
			}
		}
	}
	return true
}

// Gathers reports whether one of l's indices reads memory.
func Gathers(l *ir.Load) bool {
	return slices.ContainsFunc(l.Index, func(ix ir.Expr) bool {
		return ir.Any(ix, func(e ir.Expr) bool { _, isLoad := e.(*ir.Load); return isLoad })
	})
}

// MinRowLength is the shortest known reduction rowWise gives a block.
const MinRowLength = 256

// mentions reports whether any index of l refers to ix.
func mentions(l *ir.Load, ix *ir.Index) bool {
	return slices.ContainsFunc(l.Index, func(e ir.Expr) bool { return Mentions(e, ix) })
}

// UnitStep reports whether the index expression e steps by one element
// with ix: ix itself, or ix plus terms without it (a split row's chunk *
// CH + i).
func UnitStep(e ir.Expr, ix *ir.Index) bool {
	if ref, ok := e.(*ir.IndexRef); ok {
		return ref.Index == ix
	}
	b, ok := e.(*ir.Binary)
	if !ok || b.Op != ir.Add {
		return false
	}
	switch {
	case !Mentions(b.X, ix):
		return UnitStep(b.Y, ix)
	case !Mentions(b.Y, ix):
		return UnitStep(b.X, ix)
	}
	return false
}

// Mentions reports whether x refers to index ix anywhere inside it.
func Mentions(x ir.Expr, ix *ir.Index) bool {
	return ir.Any(x, func(e ir.Expr) bool { ref, ok := e.(*ir.IndexRef); return ok && ref.Index == ix })
}

// ExtentAtMost reports whether the points of axes are known and at most
// limit (a positive bound; no overflow on the way): a flat index over
// them, and every quotient of it, then fits in a narrower integer.
func ExtentAtMost(axes []*ir.Index, limit int64) bool {
	n := int64(1)
	for _, ax := range axes {
		c, ok := Simplify(&ir.Binary{Op: ir.Sub, X: ax.Hi, Y: ax.Lo}).(*ir.Const)
		if !ok || c.I <= 0 || c.I > limit/n {
			return false
		}
		n *= c.I
	}
	return true
}

// constExtent is the number of points of axes when it is a constant.
func constExtent(axes []*ir.Index) (int64, bool) {
	n := int64(1)
	for _, ax := range axes {
		c, ok := Simplify(&ir.Binary{Op: ir.Sub, X: ax.Hi, Y: ax.Lo}).(*ir.Const)
		if !ok {
			return 0, false
		}
		n *= c.I
	}
	return n, true
}

// rowReduce computes a group with one block per row: each fused let's
// reductions run across the block's threads and combine through shuffles
// and shared memory, their values stay in registers, and the threads then
// share the row's output elements. With BLOCK_ROWS > 1, a block takes
// BLOCK_ROWS rows at a time, each shared by a group of THREADS /
// BLOCK_ROWS threads (at most a warp) whose reductions combine by
// shuffles alone: short rows then keep every thread busy.
type rowReduce struct{}

func (rowReduce) Name() string            { return "row-reduce" }
func (rowReduce) Accepts(s *ir.Stmt) bool { return rowWise(s) }
func (rowReduce) Space() map[string][]int64 {
	return map[string][]int64{"THREADS": {64, 128, 256, 512, 1024}, "PREFETCH": {0, 1}, "CLUSTER": {1, 2, 4, 8, 16}, "VEC": {1, 2, 4, 8}, "BLOCK_ROWS": {1, 2, 4, 8, 16, 32}, "STAGE": {0, 1}, "BLOCKS_PER_SM": blocksPerSM}
}

// Check: rows shared by groups of threads (BLOCK_ROWS > 1) take groups
// of 2 to 32 threads, neither prefetched nor shared by clusters; a staged
// row (STAGE=1) takes one block or one cluster (a piece of the row a
// block, RowStagePiece), not prefetched. Rows of a length known
// only at run time (a kernel's symbolic plan), or that no input is read
// along, stage nothing, as they keep nothing in registers (VEC and
// PREFETCH are then moot too).
func (rowReduce) Check(l *Launch) error {
	if err := checkOccupancy(l); err != nil {
		return err
	}
	if l.Config["STAGE"] == 1 && (RowsPerBlock(l) > 1 || l.Config["PREFETCH"] != 0) {
		return fmt.Errorf("a row staged in shared memory takes one block or one cluster: BLOCK_ROWS 1, PREFETCH 0")
	}
	r := RowsPerBlock(l)
	if r == 1 {
		return nil
	}
	t := l.Config["THREADS"]
	switch {
	case t%r != 0 || t/r < 2 || t/r > 32:
		return fmt.Errorf("%d rows a block of %d threads: groups of %d threads a row, not 2 to 32", r, t, t/max(r, 1))
	case l.Config["CLUSTER"] > 1:
		return fmt.Errorf("clusters share one row: BLOCK_ROWS must be 1")
	case l.Config["PREFETCH"] != 0:
		return fmt.Errorf("prefetching takes whole blocks a row: BLOCK_ROWS must be 1")
	}
	return nil
}

// RowsPerBlock is the rows a row-reduce block takes at a time
// (BLOCK_ROWS, 1 when unset).
func RowsPerBlock(l *Launch) int64 { return max(l.Config["BLOCK_ROWS"], 1) }

// MaxCached is the most row elements a thread keeps in registers.
const MaxCached = 32

// RowCache tells whether a row-reduce launch keeps its rows in registers:
// when every loop over the row (each top-level reduction of the group, and
// the output's columns) runs over one index of the same constant extent n,
// at most MaxCached elements a thread. It returns n and those loops'
// indices. The inputs read at [row..., i] by such a loop are then loaded
// once a row (see the CUDA backend's rowCache). Empty rows (n = 0) have
// nothing to cache: a register array of length 0 is not valid C++.
func RowCache(l *Launch) (n int64, loops []*ir.Index, ok bool) {
	if l.Config["STAGE"] == 1 {
		return 0, nil, false
	}
	n, loops, ok = rowLoops(l)
	if !ok || rowRegs(n, RowThreads(l), rowVec(l, n)) > MaxCached {
		return 0, nil, false
	}
	return n, loops, true
}

// rowLoops finds the loops over a row-reduce launch's row: every
// top-level reduction of the group and the outputs' columns must run over
// one index from 0 of the same constant extent n > 0, which it returns
// with those indices. (Registers and shared memory hold a row's elements
// from its first: a loop from 4 would read them 4 places off.)
func rowLoops(l *Launch) (n int64, loops []*ir.Index, ok bool) {
	n = -1
	same := func(ix []*ir.Index) bool {
		if len(ix) != 1 || !zeroLo(ix[0]) {
			return false
		}
		c, ok := Simplify(&ir.Binary{Op: ir.Sub, X: ix[0].Hi, Y: ix[0].Lo}).(*ir.Const)
		if !ok || (n >= 0 && c.I != n) {
			return false
		}
		n = c.I
		return true
	}
	for _, s := range l.Stmts() {
		for _, r := range ir.TopReductions(s.Value) {
			if !same(r.Axes) {
				return 0, nil, false
			}
			loops = append(loops, r.Axes[0])
		}
	}
	for _, s := range RowOutputs(l) {
		if !same(s.Index[l.RowDims:]) {
			return 0, nil, false
		}
		loops = append(loops, s.Index[l.RowDims])
	}
	if n <= 0 {
		return 0, nil, false
	}
	return n, loops, true
}

// RowStage tells whether a row-reduce launch stages its rows in shared
// memory (STAGE=1): its block copies the row of each input that a row loop
// reads along (as RowCache's registers would hold it) into shared memory
// once, in 16-byte chunks, and every pass over the row reads it there.
// A row too long for registers is then still read from memory once, and
// the rows of few blocks a multiprocessor stay on chip: a softmax over
// rows of 50257 f32 keeps each 196 KiB row in one multiprocessor's shared
// memory. It returns the row length and the loops' indices, which all
// start at 0.
func RowStage(l *Launch) (n int64, loops []*ir.Index, ok bool) {
	if l.Config["STAGE"] != 1 || !stageable(l) {
		return 0, nil, false
	}
	return rowLoops(l)
}

func stageable(l *Launch) bool {
	_, loops, ok := rowLoops(l)
	for _, ix := range loops {
		if c, isConst := Simplify(ix.Lo).(*ir.Const); !isConst || c.I != 0 {
			return false
		}
	}
	return ok
}

// StageChunk is the elements of a staged row's 16-byte chunk for element
// type t: a staged row starts at its tensor's place in a chunk (at most
// StageChunk - 1 elements in), so that every chunk moves with one
// aligned vector access.
func StageChunk(t ir.DType) int64 { return max(1, 16/int64(t.Size())) }

// StageBytes is the shared memory that a staged row of n elements of t
// takes: whole chunks from the chunk that holds its first element,
// rounded to 16 bytes.
func StageBytes(t ir.DType, n int64) int64 {
	v := StageChunk(t)
	return (n + 2*v - 2) / v * 16
}

// RowVec is the number of consecutive row elements a thread of a
// row-reduce launch with cached rows takes at a time (VEC), 1 when the
// rows are not cached or their length n is not a multiple of VEC. Element
// (c * threads + t) * VEC + e of a row is then thread t's register
// c * VEC + e: chunks of VEC elements that move with one vector load or
// store where the tensors' rows are aligned (checked at run time).
func RowVec(l *Launch) int64 {
	n, _, ok := RowCache(l)
	if !ok {
		return 1
	}
	return rowVec(l, n)
}

func rowVec(l *Launch, n int64) int64 {
	if v := l.Config["VEC"]; v > 1 && n%v == 0 {
		return v
	}
	return 1
}

// RowRegs is the registers a thread of a row-reduce launch with cached
// rows of length n keeps per cached input: whole chunks of VEC elements
// (RowVec) for the threads sharing the row.
func RowRegs(l *Launch, n int64) int64 { return rowRegs(n, RowThreads(l), rowVec(l, n)) }

func rowRegs(n, threads, vec int64) int64 { return (n + threads*vec - 1) / (threads * vec) * vec }

// RowThreads is the number of threads that share a row: the block's, or
// with CLUSTER > 1, those of the cluster's blocks, or with BLOCK_ROWS >
// 1, a group's.
func RowThreads(l *Launch) int64 {
	return l.Config["THREADS"] / RowsPerBlock(l) * max(l.Config["CLUSTER"], 1)
}

// Prefetching reports whether l loads each row's successor while it
// computes the row (PREFETCH, with the rows cached). Its blocks then stay
// resident and take many rows each, so that loads and arithmetic overlap
// within a block rather than only across blocks.
func Prefetching(l *Launch) bool {
	if l.Config["PREFETCH"] != 1 || l.Config["CLUSTER"] > 1 {
		return false
	}
	_, _, ok := RowCache(l)
	return ok
}

// Default gives a row about 8 elements per thread, from 128 threads (rows
// up to 1024) to 1024 (rows of 8192 and more), so that few long rows still
// keep many loads in flight; 256 when the row length is unknown. Blocks of
// 512 threads or more prefetch the next row, but for rows in whole 16-byte
// chunks that 512 threads keep in registers (VEC, see rowVecDefault; up
// to 16384 f32), which take a block of 512 each: on the H100
// (testsuite/results/2026-11-26-h100-s12-stage/third/), softmax over 4096
// rows of 16384 f32 took 195.0 us prefetching with 1024 threads, 188.3
// so; a sum over the same rows 100.4 and 98.7, a matrix-vector product
// over 8192 rows of 8192 103.1 and 101.8. Measured on the H100
// (2026-11-23, testsuite/results/2026-11-23-h100-sweep*.txt), as fractions
// of copy bandwidth: rmsnorm of 4096 x 4096 f32 52% with 128 threads, 82%
// with 512, 85% prefetching; softmax of 4096 x 16384 f32 37%, 55% and 71%
// with 256, 512 and 1024 threads, 91% with 1024 prefetching; layernorm of
// 8192 x 4096 f32 91% with 512 threads, 88% prefetching, but 74% with 256
// prefetching (more blocks than fit at once with doubled registers). On a
// target with clusters, rows too few for two blocks a multiprocessor are
// shared by clusters of up to 8 blocks, each block at least 2048 elements
// of the row (CLUSTER; no prefetching): softmax of 128 rows of 50257 f32
// took 55.8 us with a block per row, 45.0 with clusters of 4 (and of 2,
// or 8 of 512 threads), 56.1 with clusters of 8 of 1024 threads
// (testsuite/results/2026-11-23-h100-bench-rows-cluster.log).
func (rowReduce) Default(l *Launch) Config {
	n := int64(-1)
	for _, s := range l.Stmts() {
		for _, r := range ir.TopReductions(s.Value) {
			if c, ok := constExtent(r.Axes); ok {
				n = max(n, c)
			}
		}
	}
	for _, s := range RowOutputs(l) {
		if c, ok := constExtent(s.Index[l.RowDims:]); ok {
			n = max(n, c)
		}
	}
	if n < 0 {
		return Config{"THREADS": 256, "PREFETCH": 1, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1}
	}
	if c := stagedDefault(l); c != nil {
		return c
	}
	c := streamedDefault(l, n)
	if s := clusterStagedDefault(l, c); s != nil {
		return s
	}
	return c
}

// streamedDefault is rowReduce's Default for rows of at most n elements
// that no block stages whole (stagedDefault).
func streamedDefault(l *Launch, n int64) Config {
	// Short rows: a group of 8 to 32 threads a row, with about 8
	// elements a thread, BLOCK_ROWS rows a block of 256, in 16-byte
	// chunks where the rows are whole chunks for the group, where the
	// rows fill two such blocks a multiprocessor. Measured on the H100
	// (testsuite/results/2026-11-26-h100-s10-rows/): ResNet's global
	// average pool (64 x 2048 rows of 49 f32, 25 MiB) took 84 us with a
	// block of 128 a row, 21.0 us with this default (42% of the copy
	// bandwidth), 28.3 and 30.4 with groups of 16 and 32, and 20.7 with
	// groups of 4 in blocks of 128.
	g := int64(8)
	for g < 32 && g*8 < n {
		g *= 2
	}
	//
	// Fewer rows than two such blocks a multiprocessor take blocks of 128
	// threads, still a group a row: a block of 128 a row reduces a short
	// row with most of its threads idle and a block-wide reduction's
	// barriers. On the H200 (testsuite/results/2026-11-28-h200-s30-third/,
	// kgen tune on cuda:sm_90), cross entropy over 4096 rows of 10 f32
	// took 7.46 us with a block a row and 4.91 with 16 rows of 8 threads
	// a block; log-softmax, layernorm, l2 and instance norm over 2 or 3
	// rows of 3 to 7 elements 1.41-1.72 us and 1.15-1.45.
	if n <= shortRow || n*widestElement(l) <= shortRowBytes {
		threads := int64(256)
		if !manyRows(l, threads/g) {
			threads = 128
		}
		vec := int64(1)
		if v := rowVecDefault(l); n%v == 0 && n >= g*v {
			vec = v
		}
		return Config{"THREADS": threads, "PREFETCH": 0, "CLUSTER": 1, "VEC": vec, "BLOCK_ROWS": threads / g}
	}
	// Too few rows to give every multiprocessor a block: on a target with
	// clusters, a cluster of blocks shares each row.
	cluster := int64(1)
	if rows, ok := Simplify(Rows(l)).(*ir.Const); ok && l.Target.Clusters && n >= 4096 {
		for cluster < 8 && rows.I*cluster < 2*bigGPU && n/(2*cluster) >= 2048 {
			cluster *= 2
		}
	}
	n = (n + cluster - 1) / cluster
	t := int64(128)
	for t < 1024 && t*8 < n {
		t *= 2
	}
	// Rows of up to 4096 elements in whole 16-byte chunks take a block
	// each and move in chunks; longer rows, or rows of single elements,
	// are prefetched by resident blocks.
	prefetch, vec := int64(0), int64(1)
	if cluster > 1 {
		vec = rowVecDefault(l)
	} else if t >= 512 {
		if v := rowVecDefault(l); n%v == 0 && rowRegs(n, 512, v) <= MaxCached {
			// Rows that 512 threads would hold in a chunk each take
			// fewer, two chunks a thread: on the H100
			// (testsuite/results/2026-11-26-h100-s15-online/second/),
			// layernorm over 8192 rows of 4096 bf16 took 57.98 us with
			// 512 threads, 54.50 with 256, 54.18 with 128.
			//
			// Rows that an online pass reads once (see readOnce) take
			// four chunks a thread where they can: on the H200
			// (testsuite/results/2026-11-28-h200-s28-first/), log-sum-exp
			// over 4096 rows of 4096 f32 took 24.38 us with 512 threads
			// and 19.81 with 256 (24.48 and 19.36 in the session
			// before), while rmsnorm, layernorm and a sum over the same
			// rows, not online, were the same within 3% with either.
			chunks := int64(2)
			if readOnce(l) {
				chunks = 4
			}
			t, vec = 512, v
			for t > 128 && n <= t*v*chunks/2 {
				t /= 2
			}
		} else if readOnce(l) && manyRows(l, 1) {
			// Rows that one online pass reads once (a log-sum-exp; see
			// OnePass) stream through a block of 512 threads each,
			// keeping nothing: on the H100
			// (testsuite/results/2026-11-26-h100-s15-online/), cross
			// entropy's log-sum-exp over 512 rows of 32000 f32 took 38.94
			// us with clusters of 4 keeping the row in registers, 39.74
			// with blocks of 1024 keeping it, 31.30 streamed by 512 (35.07
			// by 256, 48.32 by 128; 32.90 by clusters of 2 of 256).
			return Config{"THREADS": 512, "PREFETCH": 0, "CLUSTER": 1, "VEC": rowVecDefault(l), "BLOCK_ROWS": 1}
		} else {
			prefetch = 1
		}
	}
	if prefetch == 1 && l.Target.Clusters && !prefetchFits(l, t) {
		// A prefetching thread holds two rows' chunks: where they do not
		// fit in registers, or the row is not kept in them at all, the
		// row is shared by a cluster of blocks of 256 threads instead (4,
		// the same 1024 threads a row, or 8 where a block cannot keep the
		// row), whose smaller blocks fill the multiprocessors more evenly
		// and whose fewer rows in flight at once leave the L2 holding
		// what each row's later passes read again. On the H100
		// (testsuite/results/2026-11-26-h100-s11-clusters/bench/):
		// cross entropy's log-sum-exp over 512 rows of 32000 f32,
		// prefetching and spilling, 61.7 -> 49.0 us for the plan; instance
		// norm over 1024 rows of 256 x 256 f32, read three times, 474 ->
		// 308 us, and once its axes collapsed into rows of 65536 that the
		// cluster keeps in registers, 309 -> 201 us (-s11-collapse/).
		// Without clusters the prefetching block stays: a block a
		// row without prefetching took cross entropy on hip:nvidia from
		// 61.4 to 77.4 us, spills and all.
		c := int64(4)
		if _, _, cached := RowCache(l.with(Config{"THREADS": t, "PREFETCH": 0, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1})); !cached {
			c = 8
		}
		return Config{"THREADS": 256, "PREFETCH": 0, "CLUSTER": c, "VEC": rowVecDefault(l), "BLOCK_ROWS": 1}
	}
	return Config{"THREADS": t, "PREFETCH": prefetch, "CLUSTER": cluster, "VEC": vec, "BLOCK_ROWS": 1}
}

// readOnce reports whether l's statements, streamed, read each row once
// through an online pass: a max and its sum of shifted exponentials and
// nothing else over the row (OnePass's OnlineSum pairs, which were
// measured). (A single reduction reads its rows once too, but streaming
// them did not pay: a matrix-vector product over 1001 rows of 30001 f32
// took 45.98 us with clusters of 4 keeping them in registers, 59.78
// streamed by 512 threads, in
// testsuite/results/2026-11-26-h100-s15-online/second/.)
func readOnce(l *Launch) bool {
	ps, ok := OnePass(append(slices.Clone(l.Fused), l.Stmt), l.RowDims)
	return ok && len(ps.Online) > 0 && len(l.Also) == 0
}

// stagedDefault stages the rows (STAGE=1, a block of 1024 threads a row)
// where a block cannot keep a row in registers, the rows fit in the
// target's shared memory, and they are no more than bigGPU, a block each
// at once; else it returns nil. On the H100
// (testsuite/results/2026-11-26-h100-s12-stage/), softmax over 128 rows of
// 50257 f32 took 44.5 us with clusters of 4 keeping the row in registers
// (62 clusters at once: three waves), 34.9 staged; but cross entropy's
// log-sum-exp over 512 rows of 32000, 49.0 us with clusters, took 56.4
// staged (a block a multiprocessor, its loads and arithmetic in turn),
// and rows that a block keeps in registers were slower staged.
func stagedDefault(l *Launch) Config {
	rows, ok := Simplify(Rows(l)).(*ir.Const)
	if !ok || rows.I > bigGPU {
		return nil
	}
	t := min(1024, max(l.Target.MaxThreads, 1))
	if _, _, cached := RowCache(l.with(Config{"THREADS": t, "PREFETCH": 0, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1})); cached {
		return nil
	}
	c := Config{"THREADS": t, "PREFETCH": 0, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1, "STAGE": 1}
	if smem := RowStageSmem(l.with(c)); smem == 0 || smem > l.Target.MaxSmem {
		return nil
	}
	return c
}

// clusterStagedDefault stages the rows across a cluster of 2 to 8
// blocks of 1024 threads (STAGE=1, CLUSTER > 1, the fewest blocks whose
// pieces fit the target's shared memory, RowStagePiece) where the default
// c would read them from memory in three passes or more (streamedPasses):
// a row that c does not keep in registers and that is too long for a
// block's shared memory; else it returns nil. A cluster then reads each
// row once. On the H100 (testsuite/results/2026-12-06-h100-s34-cluster-stage/),
// softmax over 256 rows of 256000 f32 (1 MiB, three passes streamed)
// took 553.06 us streamed and 303.22 staged by clusters of 8; but a
// normalization over 128 rows of 2 MiB (two passes streamed: the mean
// with its squared deviations, then the outputs) 291.39 streamed and
// 408.67 staged by clusters of 16 of 1024 threads (311.94 of 512), and
// layer norm over the same rows 338.46 and 448.35. (By hand, clusters of
// 16 with one cluster barrier a row took 223.7 us:
// testsuite/exp/grid_resident.cu.)
func clusterStagedDefault(l *Launch, c Config) Config {
	if !l.Target.Clusters || c["STAGE"] == 1 || streamedPasses(l) < 3 {
		return nil
	}
	if _, _, cached := RowCache(l.with(c)); cached {
		return nil
	}
	t := min(1024, max(l.Target.MaxThreads, 1))
	whole := Config{"THREADS": t, "PREFETCH": 0, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1, "STAGE": 1}
	if smem := RowStageSmem(l.with(whole)); smem == 0 || smem <= l.Target.MaxSmem {
		return nil // a block could stage the row; stagedDefault chose not to
	}
	for k := int64(2); k <= 8; k *= 2 {
		s := Config{"THREADS": t, "PREFETCH": 0, "CLUSTER": k, "VEC": 1, "BLOCK_ROWS": 1, "STAGE": 1}
		if smem := RowStageSmem(l.with(s)); smem == 0 {
			return nil
		} else if smem <= l.Target.MaxSmem {
			return s
		}
	}
	return nil
}

// streamedPasses is the passes over its rows that a row-reduce launch
// reading them from memory makes: one a top reduction of its statements,
// less one for each pair that one pass computes (OnePass), and one for
// its outputs along the row.
func streamedPasses(l *Launch) int {
	stmts := append(slices.Clone(l.Fused), l.Stmt)
	n := 0
	for _, s := range stmts {
		n += len(ir.TopReductions(s.Value))
	}
	pairs, _ := OnePass(stmts, l.RowDims)
	n -= len(pairs.Online) + len(pairs.Centered)
	if len(RowOutputs(l)) > 0 {
		n++
	}
	return n
}

// prefetchFits reports whether a block of t threads prefetching keeps
// its rows in registers: the row is cached (RowCache), twice its chunks
// (the row computed and the next one loading) within MaxCached.
func prefetchFits(l *Launch, t int64) bool {
	trial := l.with(Config{"THREADS": t, "PREFETCH": 1, "CLUSTER": 1, "VEC": 1, "BLOCK_ROWS": 1})
	n, _, cached := RowCache(trial)
	return cached && 2*RowRegs(trial, n) <= MaxCached
}

// with is a copy of l under configuration c.
func (l *Launch) with(c Config) *Launch {
	trial := *l
	trial.Config = c
	return &trial
}

// shortRow is the longest row that the default shares among a group of
// threads rather than a block.
const shortRow = 256

// shortRowBytes: rows of narrow elements up to this many bytes are short
// too. On the H100, threshold_any_kb (4096 rows of 1024 bools) took 15.23
// us with a block of 128 threads a row, one byte a load, and 12.96 us
// tuned, its rows shared by groups of 32 threads, 4 bytes a load
// (testsuite/results/2026-11-27-h100-s19-tune/).
const shortRowBytes = 1024

// manyRows reports whether a row-reduce launch has rows enough (or not
// known) for two blocks a multiprocessor of a big GPU with perBlock rows
// a block.
func manyRows(l *Launch, perBlock int64) bool {
	rows, ok := Simplify(Rows(l)).(*ir.Const)
	return !ok || rows.I >= 2*bigGPU*perBlock
}

// rowVecDefault is 16 bytes of the launch's widest element type (8
// elements at most, the largest VEC in the space): the chunk of a row that
// one vector access moves (RowVec). Measured on the
// H100 (2026-11-26, testsuite/results/2026-11-26-h100-s7-rows/ and
// -sweep/): with clusters, log-softmax of 16 rows of 16384 f32 6.57 ->
// 5.70 us; with resident blocks prefetching, chunks made bf16 layernorm
// of 8192 x 4096 slower (77.47 -> 81.60 us), but with a block a row (512
// threads, no prefetching) they made it faster, 77.50 -> 67.62 us, and
// rmsnorm of the same shape 60.96 -> 54.53, sum_rows of 4096 x 4096 f32
// 34.85 -> 33.38, logsumexp 38.27 -> 35.46.
func rowVecDefault(l *Launch) int64 {
	return min(8, max(1, 16/widestElement(l))) // 8 at most: VEC's space
}

// widestElement is the size in bytes of the widest element a launch
// stores or reads from an input.
func widestElement(l *Launch) int64 {
	size := int64(l.Stmt.Target.DType.Size())
	for _, s := range l.Also {
		size = max(size, int64(s.Target.DType.Size()))
	}
	for _, s := range l.Stmts() {
		ir.Walk(s.Value, func(x ir.Expr) bool {
			if ld, ok := x.(*ir.Load); ok && ld.Tensor.Kind == ir.Input {
				size = max(size, int64(ld.Tensor.DType.Size()))
			}
			return true
		})
	}
	return size
}

// Grid is a block per row (per BLOCK_ROWS rows), or with prefetching,
// about as many blocks as the GPU holds at once with the doubled
// registers: half of 2048 threads a multiprocessor, at least one block,
// on bigGPU multiprocessors. BLOCKS_PER_SM: see occupancy (layernorm
// over rows of 4096 bf16 takes 40 registers a thread by default, so six
// blocks of 256 fit where eight would fill the multiprocessor).
func (rowReduce) Grid(l *Launch) Grid {
	threads := l.Config["THREADS"]
	if Prefetching(l) {
		return occupancy(l, Grid{Blocks: minBlocks(Rows(l), bigGPU*max(1, 1024/threads)), Threads: threads})
	}
	if c := l.Config["CLUSTER"]; c > 1 {
		return occupancy(l, Grid{Blocks: capBlocks(mul(Rows(l), ir.IntConst(c))), Threads: threads, Cluster: c, Smem: RowStageSmem(l)})
	}
	if r := RowsPerBlock(l); r > 1 {
		return occupancy(l, Grid{Blocks: capBlocks(Simplify(cdiv(Rows(l), r))), Threads: threads})
	}
	return occupancy(l, Grid{Blocks: capBlocks(Rows(l)), Threads: threads, Smem: RowStageSmem(l)})
}

// Rows is the number of rows of a row-reduce launch.
func Rows(l *Launch) ir.Expr {
	var extents []ir.Expr
	for _, ix := range l.Stmt.Index[:l.RowDims] {
		extents = append(extents, &ir.Binary{Op: ir.Sub, X: ix.Hi, Y: ix.Lo})
	}
	return Simplify(product(extents))
}

// Cols is the number of elements of a row that s, the statement of a
// row-reduce launch l or one it stores along the row (RowOutputs), writes.
func Cols(l *Launch, s *ir.Stmt) ir.Expr {
	var extents []ir.Expr
	for _, ix := range s.Index[l.RowDims:] {
		extents = append(extents, &ir.Binary{Op: ir.Sub, X: ix.Hi, Y: ix.Lo})
	}
	return Simplify(product(extents))
}

// RowOutputs are the statements a row-reduce launch stores along its
// rows, in the order it stores them: those it stores beside its own
// (Also), then its statement where that has columns.
func RowOutputs(l *Launch) []*ir.Stmt {
	out := slices.Clone(l.Also)
	if len(l.Stmt.Index) > l.RowDims {
		out = append(out, l.Stmt)
	}
	return out
}

// RowInputs lists, in order of first use, the tensors a row-reduce launch
// only reads (readOnly) that its row loops (loops, from RowCache or
// RowStage) read along the row: loaded by a statement of the launch at
// that statement's row and a loop's index as the last dimension. These
// are the rows a launch keeps in registers or stages: an input's, or an
// earlier launch's result, as the scores a softmax after a matrix product
// reads. The statements are l's own, not copies: a copy (ir.Substitute,
// as the backends make to give the fused members the final statement's
// row) has new reduction axes, which loops do not hold.
func RowInputs(l *Launch, loops []*ir.Index) []*ir.Tensor {
	var ts []*ir.Tensor
	passes := map[*ir.Tensor]int{} // the statements that read each, a pass or more each
	for _, s := range l.Stmts() {
		var reads []*ir.Tensor
		ir.Walk(s.Value, func(x ir.Expr) bool {
			ld, ok := x.(*ir.Load)
			if ok && readOnly(l, ld.Tensor) && rowLoad(s.Index[:l.RowDims], ld, loops) {
				if !slices.Contains(ts, ld.Tensor) {
					ts = append(ts, ld.Tensor)
				}
				if !slices.Contains(reads, ld.Tensor) {
					reads = append(reads, ld.Tensor)
					passes[ld.Tensor]++
				}
			}
			return true
		})
	}
	// An earlier launch's result is kept only where two statements read it
	// (a softmax's scores, read for the max, the sum and the outputs);
	// read once, it streams as it did. (Inputs read once are kept too: a
	// row's loads all in flight at once, as measured since.)
	return slices.DeleteFunc(ts, func(t *ir.Tensor) bool { return t.Kind != ir.Input && passes[t] < 2 })
}

// readOnly reports whether launch l reads t and writes none of it: an
// input, or what an earlier launch stored (a let in the workspace, an
// output), which no statement of l writes.
func readOnly(l *Launch, t *ir.Tensor) bool {
	return t.Kind == ir.Input || !slices.ContainsFunc(l.Stmts(), func(s *ir.Stmt) bool { return s.Target == t })
}

// rowLoad reports whether ld reads its tensor at row and one of loops'
// indices, as its last (contiguous) dimension.
func rowLoad(row []*ir.Index, ld *ir.Load, loops []*ir.Index) bool {
	if ld.Default != nil || len(ld.Index) != len(row)+1 {
		return false
	}
	for d, ix := range row {
		ref, ok := ld.Index[d].(*ir.IndexRef)
		if !ok || ref.Index != ix {
			return false
		}
	}
	ref, ok := ld.Index[len(row)].(*ir.IndexRef)
	return ok && slices.Contains(loops, ref.Index)
}

// RowStageSmem is the dynamic shared memory of a block of a launch that
// stages its rows (RowStage): each staged input's row (StageBytes), or
// with CLUSTER > 1 its piece of the row (StagePieceBytes), or 0.
func RowStageSmem(l *Launch) int64 {
	n, loops, ok := RowStage(l)
	if !ok {
		return 0
	}
	c := max(l.Config["CLUSTER"], 1)
	total := int64(0)
	for _, t := range RowInputs(l, loops) {
		if c > 1 {
			total += StagePieceBytes(t.DType, n, c)
		} else {
			total += StageBytes(t.DType, n)
		}
	}
	return total
}

// RowStagePiece is the points of a row of n that each block of a cluster
// of c stages (the last block's piece may be shorter): an equal share,
// rounded up to 16 points, so that every piece starts on a 16-byte chunk
// boundary of a row that starts on one (1-byte elements and wider).
// Block k takes points [k * piece, min(n, (k + 1) * piece)).
func RowStagePiece(n, c int64) int64 { return ((n+c-1)/c + 15) / 16 * 16 }

// StagePieceBytes is the shared memory that a block's piece of a staged
// row of n elements of t shared by a cluster of c blocks takes: the
// 16-byte chunks that hold its points (RowStagePiece), one more where the
// row starts inside a chunk.
func StagePieceBytes(t ir.DType, n, c int64) int64 {
	return (RowStagePiece(n, c)/StageChunk(t) + 1) * 16
}

// RowAliases maps each fused member's row indices to the final
// statement's, so that one set of row variables serves the whole launch.
func RowAliases(l *Launch) map[*ir.Index]ir.Expr {
	m := map[*ir.Index]ir.Expr{}
	for _, s := range l.Fused {
		for d := range l.RowDims {
			m[s.Index[d]] = &ir.IndexRef{Index: l.Stmt.Index[d]}
		}
	}
	return m
}
