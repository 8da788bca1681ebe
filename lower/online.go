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

// CenteredSum is a row's sum and a later sum of squared deviations from a
// let computed from it, as a mean and a variance are:
//
//	let mu[r] = f(sum[d](B))                           // f: mu's value, any expression of the sum
//	... sum[d']((B' - mu[r]) * (B' - mu[r])) ...       // B' is B over d'
//
// A row-reduce launch that streams its rows computes the two in one pass:
// each thread keeps the sum of its points x and, shifted by its first
// point K, the sum S1 of x - K, the sum S2 of (x - K)^2 and their count n;
// once mu is known, the thread's squared deviations from it are S2 - 2 (mu
// - K) S1 + n (mu - K)^2, summed across the row's threads. A shift near
// the points keeps the three terms of the size of the deviations, so
// that little cancels (the shifted-data algorithm); the sum itself is the
// two-pass one up to its order.
type CenteredSum struct {
	Sum     *ir.Reduce // sum[d](B), in the value of let Mean
	Mean    *ir.Tensor // the let (or fused output) computed from it
	Squares *ir.Reduce // the sum of (B' - Mean[row])^2
}

// Passes are the pairs of reductions that one pass over a row-reduce
// launch's rows computes together (OnePass).
type Passes struct {
	Online   []OnlineSum
	Centered []CenteredSum
}

// OnePass finds the OnlineSum and CenteredSum pairs among stmts, a
// row-reduce launch's fused statements then its own (the last), whose
// first rowDims indices are the row's, where they leave the launch one
// pass over its rows: no other reduction, and no output along the row
// (else it returns no pairs, false). Each pair's first let must come
// before the statement of its second sum; both of one float type, f32 or
// f64, as the points are. A row's max or sum pairs with one sum at most,
// the first found.
//
// Where a pass would remain, the pairs cost more arithmetic than the pass
// they save: on the H100 (testsuite/results/2026-11-26-h100-s15-online/),
// the online pass took Triton's softmax over 128 rows of 50257 f32 (then
// the probabilities' pass) from 62.91 to 103.23 us and CUDA's attention
// probabilities over rows of 512 from 188.26 to 200.35, but Triton's
// cross entropy over 512 rows of 32000 (its log-sum-exp then read once)
// from 49.92 to 30.56.
func OnePass(stmts []*ir.Stmt, rowDims int) (Passes, bool) {
	ps := Passes{Online: onlineSums(stmts, rowDims), Centered: centeredSums(stmts, rowDims)}
	passes := -len(ps.Online) - len(ps.Centered)
	if len(stmts) > 0 && len(stmts[len(stmts)-1].Index) > rowDims {
		passes++
	}
	for _, s := range stmts {
		passes += len(ir.TopReductions(s.Value))
	}
	if passes != 1 || len(ps.Online)+len(ps.Centered) == 0 {
		return Passes{}, false
	}
	return ps, true
}

// rowsAtLast maps the row indices of every statement of stmts but the
// last to the last's: each statement may index the row with its own
// variables, and the points' expressions are compared at the last's.
func rowsAtLast(stmts []*ir.Stmt, rowDims int) map[*ir.Index]ir.Expr {
	last := stmts[len(stmts)-1]
	rows := map[*ir.Index]ir.Expr{}
	for _, s := range stmts[:len(stmts)-1] {
		for d := range rowDims {
			rows[s.Index[d]] = &ir.IndexRef{Index: last.Index[d]}
		}
	}
	return rows
}

// centeredSums finds the CenteredSum pairs among stmts (see OnePass).
func centeredSums(stmts []*ir.Stmt, rowDims int) []CenteredSum {
	if len(stmts) == 0 {
		return nil
	}
	last := stmts[len(stmts)-1]
	rows := rowsAtLast(stmts, rowDims)
	var pairs []CenteredSum
	for i, s := range stmts[:len(stmts)-1] {
		rs := ir.TopReductions(s.Value)
		if len(rs) != 1 {
			continue
		}
		sum := rs[0]
		if sum.Op != ir.Sum || (sum.T != ir.F32 && sum.T != ir.F64) || s.Target.DType != sum.T || sum.Body.Type() != sum.T {
			continue
		}
	search:
		for _, t := range stmts[i+1:] {
			for _, r := range ir.TopReductions(t.Value) {
				if squaredDeviations(r, sum, s.Target, func(ix *ir.Index, d int) bool {
					return ix == t.Index[d] || ix == last.Index[d]
				}, rowDims, rows) {
					pairs = append(pairs, CenteredSum{Sum: sum, Mean: s.Target, Squares: r})
					break search
				}
			}
		}
	}
	return pairs
}

// squaredDeviations reports whether r is sum[d']((B' - mean[row]) * (B'
// - mean[row])) for sum = sum[d](B), as shiftedSum matches its pattern.
func squaredDeviations(r, sum *ir.Reduce, mean *ir.Tensor, row func(*ir.Index, int) bool, rowDims int, rows map[*ir.Index]ir.Expr) bool {
	if r.Op != ir.Sum || r.T != sum.T || len(r.Axes) != len(sum.Axes) {
		return false
	}
	sq, ok := r.Body.(*ir.Binary)
	if !ok || sq.Op != ir.Mul || !ir.Equal(sq.X, sq.Y) {
		return false
	}
	diff, ok := sq.X.(*ir.Binary)
	if !ok || diff.Op != ir.Sub || diff.Type() != r.T {
		return false
	}
	return atRow(diff.Y, mean, row, rowDims) && samePoints(diff.X, r, sum, rows)
}

// atRow reports whether x reads t at the row's indices.
func atRow(x ir.Expr, t *ir.Tensor, row func(*ir.Index, int) bool, rowDims int) bool {
	ld, ok := x.(*ir.Load)
	if !ok || ld.Tensor != t || ld.Default != nil || len(ld.Index) != rowDims {
		return false
	}
	for d, x := range ld.Index {
		if ref, ok := x.(*ir.IndexRef); !ok || !row(ref.Index, d) {
			return false
		}
	}
	return true
}

// samePoints reports whether x, over r's axes, is the body of reduction
// first over its own: the same number of axes over the same ranges, x
// equal to first's body once r's axes are first's and both are at the
// row's indices (rows).
func samePoints(x ir.Expr, r, first *ir.Reduce, rows map[*ir.Index]ir.Expr) bool {
	if len(r.Axes) != len(first.Axes) {
		return false
	}
	subst := maps.Clone(rows)
	for k, ax := range r.Axes {
		if !ir.Equal(ax.Lo, first.Axes[k].Lo) || !ir.Equal(ax.Hi, first.Axes[k].Hi) {
			return false
		}
		subst[ax] = &ir.IndexRef{Index: first.Axes[k]}
	}
	return ir.Equal(ir.Substitute(x, subst), ir.Substitute(first.Body, rows))
}

// onlineSums finds the OnlineSum pairs among stmts (see OnePass).
func onlineSums(stmts []*ir.Stmt, rowDims int) []OnlineSum {
	if len(stmts) == 0 {
		return nil
	}
	last := stmts[len(stmts)-1]
	rows := rowsAtLast(stmts, rowDims)
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
// max[d](B): the same points (samePoints), of mx's type; row reports
// whether an index is the row's dth.
func shiftedSum(r, mx *ir.Reduce, shift *ir.Tensor, row func(*ir.Index, int) bool, rowDims int, rows map[*ir.Index]ir.Expr) bool {
	if r.Op != ir.Sum || r.T != mx.T {
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
	return atRow(diff.Y, shift, row, rowDims) && samePoints(diff.X, r, mx, rows)
}
