package lower

import (
	"maps"

	"kgen.dev/kgen/ir"
)

// OnlineSum is a row's maximum and a later sum of exponentials shifted by
// it over the same points, as a softmax, a log-softmax or a log-sum-exp
// computes them:
//
//	let mx[r] = max[d](B)
//	... sum[d'](exp(B' - mx[r])) ...   // B' is B over d'
//
// A row-reduce launch that streams its rows from memory computes the two
// in one pass rather than two: each thread keeps a running maximum m and
// the sum s of exp(B - m) over the points it has read, and where a point
// raises m, s is first rescaled by exp(m_old - m_new); the threads' pairs
// then combine the same way. The maximum is exactly the two-pass one;
// the sum differs in rounding only. A running maximum of -inf (every
// point so far -inf) is special: its points' terms exp(-inf - -inf) are
// NaN, which the two-pass sum has only where the whole row's maximum is
// -inf, so a finite maximum replaces s rather than rescaling it.
type OnlineSum struct {
	Max   *ir.Reduce // the max, the whole value of let Shift
	Shift *ir.Tensor // the let (or fused output) holding it
	Sum   *ir.Reduce // the sum of exp(B' - Shift[row])
}

// OnlineSums finds the OnlineSum pairs among stmts, a row-reduce launch's
// fused statements then its own (the last), whose first rowDims indices
// are the row's, where they leave the launch one pass over its rows: no
// other reduction, and no output along the row. The max's let must come
// before the statement of the sum; the max, the sum, the points and the
// shift all of one float type, f32 or f64. A row's max pairs with one sum
// at most, the first found.
//
// Where a pass would remain, the pairs cost more arithmetic than the pass
// they save: on the H100 (testsuite/results/2026-11-26-h100-s15-online/),
// the online pass took Triton's softmax over 128 rows of 50257 f32 (then
// the probabilities' pass) from 62.91 to 103.23 us and CUDA's attention
// probabilities over rows of 512 from 188.26 to 200.35, but Triton's
// cross entropy over 512 rows of 32000 (its log-sum-exp then read once)
// from 49.92 to 30.56.
func OnlineSums(stmts []*ir.Stmt, rowDims int) []OnlineSum {
	pairs := onlineSums(stmts, rowDims)
	passes := -len(pairs)
	if len(stmts) > 0 && len(stmts[len(stmts)-1].Index) > rowDims {
		passes++
	}
	for _, s := range stmts {
		passes += len(ir.TopReductions(s.Value))
	}
	if passes != 1 {
		return nil
	}
	return pairs
}

func onlineSums(stmts []*ir.Stmt, rowDims int) []OnlineSum {
	if len(stmts) == 0 {
		return nil
	}
	last := stmts[len(stmts)-1]
	// Each statement may index the row with its own variables: compare
	// the points' expressions at the last statement's.
	rows := map[*ir.Index]ir.Expr{}
	for _, s := range stmts[:len(stmts)-1] {
		for d := range rowDims {
			rows[s.Index[d]] = &ir.IndexRef{Index: last.Index[d]}
		}
	}
	var pairs []OnlineSum
	for i, s := range stmts[:len(stmts)-1] {
		mx, ok := s.Value.(*ir.Reduce)
		if !ok || mx.Op != ir.Max || (mx.T != ir.F32 && mx.T != ir.F64) || s.Target.DType != mx.T || mx.Body.Type() != mx.T {
			continue
		}
	search:
		for _, t := range stmts[i+1:] {
			for _, r := range ir.TopReductions(t.Value) {
				if shiftedSum(r, mx, s.Target, func(ix *ir.Index, d int) bool {
					return ix == t.Index[d] || ix == last.Index[d]
				}, rowDims, rows) {
					pairs = append(pairs, OnlineSum{Max: mx, Shift: s.Target, Sum: r})
					break search
				}
			}
		}
	}
	return pairs
}

// shiftedSum reports whether r is sum[d'](exp(B' - shift[row])) for mx =
// max[d](B): the same number of axes over the same ranges, B' equal to B
// once d' is d and both are at the row's indices (rows), of mx's type;
// row reports whether an index is the row's dth.
func shiftedSum(r, mx *ir.Reduce, shift *ir.Tensor, row func(*ir.Index, int) bool, rowDims int, rows map[*ir.Index]ir.Expr) bool {
	if r.Op != ir.Sum || r.T != mx.T || len(r.Axes) != len(mx.Axes) {
		return false
	}
	call, ok := r.Body.(*ir.Call)
	if !ok || call.Fn != ir.Exp || call.T != r.T || len(call.Args) != 1 {
		return false
	}
	diff, ok := call.Args[0].(*ir.Binary)
	if !ok || diff.Op != ir.Sub {
		return false
	}
	ld, ok := diff.Y.(*ir.Load)
	if !ok || ld.Tensor != shift || ld.Default != nil || len(ld.Index) != rowDims {
		return false
	}
	for d, x := range ld.Index {
		if ref, ok := x.(*ir.IndexRef); !ok || !row(ref.Index, d) {
			return false
		}
	}
	subst := maps.Clone(rows)
	for k, ax := range r.Axes {
		if !ir.Equal(ax.Lo, mx.Axes[k].Lo) || !ir.Equal(ax.Hi, mx.Axes[k].Hi) {
			return false
		}
		subst[ax] = &ir.IndexRef{Index: mx.Axes[k]}
	}
	return ir.Equal(ir.Substitute(diff.X, subst), ir.Substitute(mx.Body, rows))
}
