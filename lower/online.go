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
// - K) S1 + n (mu - K)^2, summed across the row's threads (Triton; CUDA
// and HIP combine the threads' counts, means and squared deviations from
// their means in the sum's own reduction, backends/cuda/moments.go). A shift near
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
// (true). Where a pass remains it returns the CenteredSum pairs alone
// (false): they still save a pass, for a few additions a point (Triton's
// instance norm over 1024 rows of 65536 f32, streamed, 361.38 -> 272.16 us
// on the H100, testsuite/results/2026-11-27-h100-s16-centered-pass/). Each pair's first let must come
// before the statement of its second sum; both of one float type, f32 or
// f64, as the points are. A row's max or sum pairs with one sum at most,
// the first found.
//
// Where a pass would remain, the online pairs cost more arithmetic than
// the pass they save: on the H100 (testsuite/results/2026-11-26-h100-s15-online/),
// the online pass took Triton's softmax over 128 rows of 50257 f32 (then
// the probabilities' pass) from 62.91 to 103.23 us and CUDA's attention
// probabilities over rows of 512 from 188.26 to 200.35, but Triton's
// cross entropy over 512 rows of 32000 (its log-sum-exp then read once)
// from 49.92 to 30.56. (Triton's passes take the online pairs anyway,
// AllPairs, since their update takes one exponential a point.)
func OnePass(stmts []*ir.Stmt, rowDims int) (Passes, bool) {
	ps := AllPairs(stmts, rowDims)
	passes := -len(ps.Online) - len(ps.Centered)
	if len(stmts) > 0 && len(stmts[len(stmts)-1].Index) > rowDims {
		passes++
	}
	for _, s := range stmts {
		passes += len(ir.TopReductions(s.Value))
	}
	if passes != 1 || len(ps.Online)+len(ps.Centered) == 0 {
		// A pass remains: the centered pairs still save one, for a few
		// additions a point.
		return Passes{Centered: ps.Centered}, false
	}
	return ps, true
}

// AllPairs is every OnlineSum and CenteredSum pair among stmts (as
// OnePass finds them), whether or not a pass over the rows remains. A
// backend whose online update costs one exponential a point, the
// exponential the sum's own pass takes, saves the max's pass with them:
// on the H100 (testsuite/results/2026-12-07-h100-s43-softmax/), a Triton
// softmax over 128 rows of 50257 f32, a program a row, took 36.54 us in
// three passes (the max, the sum, the outputs) and 33.46 in two (the pair
// online, then the outputs), where the update with two exponentials a
// point had taken 62.91 -> 103.23 (s15-online).
func AllPairs(stmts []*ir.Stmt, rowDims int) Passes {
	return Passes{Online: onlineSums(stmts, rowDims), Centered: centeredSums(stmts, rowDims)}
}

// rowScope is where pairs are matched: the row's first rowDims indices,
// each statement's row indices mapped to the last statement's (rows: each
// statement may index the row with its own variables, and the points'
// expressions are compared at the last's), and the statement that reads
// the pair's first let (reader).
type rowScope struct {
	rowDims      int
	rows         map[*ir.Index]ir.Expr
	reader, last *ir.Stmt
}

// findPairs walks stmts for pairs of reductions: first, what firstOf finds
// in a statement's value, of the float type (f32 or f64) of its let and
// its points; then the first reduction of a later statement that
// matches as its partner. found records each pair; a first reduction
// pairs once at most.
func findPairs(stmts []*ir.Stmt, rowDims int, firstOf func(*ir.Stmt) *ir.Reduce,
	matches func(r, first *ir.Reduce, let *ir.Tensor, sc rowScope) bool, found func(first *ir.Reduce, let *ir.Tensor, second *ir.Reduce)) {
	if len(stmts) == 0 {
		return
	}
	sc := rowScope{rowDims: rowDims, rows: map[*ir.Index]ir.Expr{}, last: stmts[len(stmts)-1]}
	for _, s := range stmts[:len(stmts)-1] {
		for d := range rowDims {
			sc.rows[s.Index[d]] = &ir.IndexRef{Index: sc.last.Index[d]}
		}
	}
	for i, s := range stmts[:len(stmts)-1] {
		first := firstOf(s)
		if first == nil || (first.T != ir.F32 && first.T != ir.F64) || s.Target.DType != first.T || first.Body.Type() != first.T {
			continue
		}
	search:
		for _, t := range stmts[i+1:] {
			sc.reader = t
			for _, r := range ir.TopReductions(t.Value) {
				if matches(r, first, s.Target, sc) {
					found(first, s.Target, r)
					break search
				}
			}
		}
	}
}

// centeredSums finds the CenteredSum pairs among stmts (see OnePass).
func centeredSums(stmts []*ir.Stmt, rowDims int) (pairs []CenteredSum) {
	sumOf := func(s *ir.Stmt) *ir.Reduce {
		if rs := ir.TopReductions(s.Value); len(rs) == 1 && rs[0].Op == ir.Sum {
			return rs[0]
		}
		return nil
	}
	findPairs(stmts, rowDims, sumOf, squaredDeviations, func(sum *ir.Reduce, mean *ir.Tensor, sq *ir.Reduce) {
		pairs = append(pairs, CenteredSum{Sum: sum, Mean: mean, Squares: sq})
	})
	return pairs
}

// onlineSums finds the OnlineSum pairs among stmts (see OnePass).
func onlineSums(stmts []*ir.Stmt, rowDims int) (pairs []OnlineSum) {
	maxOf := func(s *ir.Stmt) *ir.Reduce {
		if mx, ok := s.Value.(*ir.Reduce); ok && mx.Op == ir.Max {
			return mx
		}
		return nil
	}
	findPairs(stmts, rowDims, maxOf, shiftedSum, func(mx *ir.Reduce, shift *ir.Tensor, sum *ir.Reduce) {
		pairs = append(pairs, OnlineSum{Max: mx, Shift: shift, Sum: sum})
	})
	return pairs
}

// squaredDeviations reports whether r is sum[d']((B' - mean[row]) * (B'
// - mean[row])) for sum = sum[d](B): the same points (samePoints), of
// sum's type.
func squaredDeviations(r, sum *ir.Reduce, mean *ir.Tensor, sc rowScope) bool {
	if r.Op != ir.Sum || r.T != sum.T {
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
	return sc.atRow(diff.Y, mean) && sc.samePoints(diff.X, r, sum)
}

// shiftedSum reports whether r is sum[d'](exp(B' - shift[row])) for mx =
// max[d](B): the same points (samePoints), of mx's type.
func shiftedSum(r, mx *ir.Reduce, shift *ir.Tensor, sc rowScope) bool {
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
	return sc.atRow(diff.Y, shift) && sc.samePoints(diff.X, r, mx)
}

// atRow reports whether x reads t at the row's indices: the reader's or
// the last statement's.
func (sc rowScope) atRow(x ir.Expr, t *ir.Tensor) bool {
	ld, ok := x.(*ir.Load)
	if !ok || ld.Tensor != t || ld.Default != nil || len(ld.Index) != sc.rowDims {
		return false
	}
	for d, x := range ld.Index {
		if ref, ok := x.(*ir.IndexRef); !ok || (ref.Index != sc.reader.Index[d] && ref.Index != sc.last.Index[d]) {
			return false
		}
	}
	return true
}

// samePoints reports whether x, over r's axes, is the body of reduction
// first over its own: the same number of axes over the same ranges, x
// equal to first's body once r's axes are first's and both are at the
// row's indices.
func (sc rowScope) samePoints(x ir.Expr, r, first *ir.Reduce) bool {
	if len(r.Axes) != len(first.Axes) {
		return false
	}
	subst := maps.Clone(sc.rows)
	for k, ax := range r.Axes {
		if !ir.Equal(ax.Lo, first.Axes[k].Lo) || !ir.Equal(ax.Hi, first.Axes[k].Hi) {
			return false
		}
		subst[ax] = &ir.IndexRef{Index: first.Axes[k]}
	}
	return ir.Equal(ir.Substitute(x, subst), ir.Substitute(first.Body, sc.rows))
}
