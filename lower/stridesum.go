package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// strideSums replaces every sum whose terms a divisibility test picks
// along an axis, as a transposed convolution picks the taps that land on
// its output,
//
//	sum[k in lo..hi]((e - k) % s == 0 ? v : 0)    s > 1 a constant, e independent of the sum's axes
//
// by a sum over every s-th point of the axis, from the first at which the
// test holds:
//
//	sum[k' in 0..cdiv(hi - lo, s)](k < hi ? v : 0)    k = lo + (e - lo) % s + s * k'
//
// (for e + k or k + e the start is (-e - lo) % s; % is floor modulo, so
// the start is in 0..s). Where s divides hi - lo every point is in range
// and the test goes. The terms left out are the test's exact zeros, so
// the value is the same but for the sign of a zero (a sum of +0 and -0 is
// +0), as in oneHotSums; the ones kept are summed in the same order. A
// stride-2 transposed convolution of 4 taps then loops over 2 of them,
// without the floor modulo and the branch at each. Every load that the
// substitution makes depend on k reads with a default of zero, so that a
// backend that evaluates both sides of the select (Triton's tl.where)
// never reads out of range.
func strideSums(k *ir.Kernel) {
	for _, s := range k.Stmts {
		s.Value = ir.Rewrite(s.Value, strideSum)
	}
}

func strideSum(x ir.Expr) ir.Expr {
	if y := conjunctSums(x); y != nil {
		return y
	}
	return strideSum1(x)
}

// conjunctSums rewrites a sum whose terms several tests pick, a
// conjunction (sum[...](a && b ? v : 0), as a transposed convolution of
// two dimensions tests its rows' and its columns' taps) or selects within
// selects (a ? (b ? v : 0) : 0, as a range test that strideSum1 left),
// taking each test that strideSum1 can as the outermost in turn, the
// others inside it: the same terms, where the tests read indices alone
// (a test that reads memory keeps its place, guarded as it was). Nil if
// it takes none.
func conjunctSums(x ir.Expr) ir.Expr {
	r, ok := x.(*ir.Reduce)
	if !ok || r.Op != ir.Sum {
		return nil
	}
	sel, ok := r.Body.(*ir.Select)
	if !ok || !isZeroConst(sel.Y) {
		return nil
	}
	conds, v := conjuncts(r.Body)
	if len(conds) < 2 {
		return nil
	}
	zero := func() ir.Expr { return ir.Substitute(sel.Y, nil) }
	for i := range conds {
		body := v
		for j := len(conds) - 1; j >= 0; j-- {
			if j != i {
				body = &ir.Select{Cond: conds[j], X: body, Y: zero(), Span: sel.Span}
			}
		}
		body = &ir.Select{Cond: conds[i], X: body, Y: zero(), Span: sel.Span}
		y := strideSum1(ir.Substitute(&ir.Reduce{Op: r.Op, Axes: r.Axes, T: r.T, Span: r.Span, Body: body}, nil))
		if y == nil {
			continue
		}
		for {
			z := strideSum(y)
			if z == nil {
				return y
			}
			y = z
		}
	}
	return nil
}

// conjuncts splits a chain of selects with zero else branches, each test
// a conjunction of tests that read no memory, into those tests, in order,
// and the innermost value.
func conjuncts(e ir.Expr) ([]ir.Expr, ir.Expr) {
	sel, ok := e.(*ir.Select)
	if !ok || !isZeroConst(sel.Y) || ir.Any(sel.Cond, func(x ir.Expr) bool { _, ld := x.(*ir.Load); return ld }) {
		return nil, e
	}
	var split func(c ir.Expr) []ir.Expr
	split = func(c ir.Expr) []ir.Expr {
		if b, ok := c.(*ir.Binary); ok && b.Op == ir.And {
			return append(split(b.X), split(b.Y)...)
		}
		return []ir.Expr{c}
	}
	inner, v := conjuncts(sel.X)
	return append(split(sel.Cond), inner...), v
}

// strideSum1 is strideSum of a sum picked by one test.
func strideSum1(x ir.Expr) ir.Expr {
	r, sel, eq, ok := pickedSum(x)
	if !ok {
		return nil
	}
	mod, ok := eq.X.(*ir.Binary)
	if !ok || mod.Op != ir.Mod || !isZeroConst(eq.Y) {
		return nil
	}
	s, ok := constInt(mod.Y)
	if !ok || s < 2 || mod.X.Type() != ir.I64 {
		return nil
	}
	onAxes := func(e ir.Expr) bool {
		return slices.ContainsFunc(r.Axes, func(ix *ir.Index) bool { return Mentions(e, ix) })
	}
	for i, a := range r.Axes {
		e, neg, ok := strideTerm(mod.X, a)
		bounds := slices.ContainsFunc(r.Axes, func(ix *ir.Index) bool { return Mentions(ix.Lo, a) || Mentions(ix.Hi, a) })
		if !ok || onAxes(e) || onAxes(a.Lo) || onAxes(a.Hi) || bounds {
			continue
		}
		// k = lo + floormod(±e - lo, s) + s * k'
		if neg {
			e = negate(e)
		}
		step := &ir.Index{Name: a.Name, Span: a.Span, Lo: ir.IntConst(0),
			Hi: Simplify(cdiv(&ir.Binary{Op: ir.Sub, X: a.Hi, Y: a.Lo}, s))}
		start := &ir.Binary{Op: ir.Mod, X: plus(e, a.Lo, ir.Sub), Y: ir.IntConst(s)}
		at := plus(plus(start, a.Lo, ir.Add), mul(ir.IntConst(s), &ir.IndexRef{Index: step, Span: a.Span}), ir.Add)
		term := ir.Substitute(sel.X, map[*ir.Index]ir.Expr{a: at})
		var v ir.Expr = term
		if n, ok := constInt(Simplify(&ir.Binary{Op: ir.Sub, X: a.Hi, Y: a.Lo})); !ok || n%s != 0 {
			term = defaultZero(term, func(ld *ir.Load) bool {
				return slices.ContainsFunc(ld.Index, func(ix ir.Expr) bool { return Mentions(ix, step) })
			})
			v = &ir.Select{Cond: &ir.Binary{Op: ir.Lt, X: at, Y: a.Hi}, X: term, Y: sel.Y, Span: sel.Span}
		}
		axes := slices.Clone(r.Axes)
		axes[i] = step
		return &ir.Reduce{Op: ir.Sum, Axes: axes, Body: v, T: r.T, Span: r.Span}
	}
	return nil
}

// plus is x op y (Add or Sub), without the constant 0 as an operand.
func plus(x, y ir.Expr, op ir.Op) ir.Expr {
	switch {
	case isZeroConst(y):
		return x
	case isZeroConst(x) && op == ir.Add:
		return y
	}
	return &ir.Binary{Op: op, X: x, Y: y}
}

// negate is -x, as 0 - x, and y for 0 - y.
func negate(x ir.Expr) ir.Expr {
	if b, ok := x.(*ir.Binary); ok && b.Op == ir.Sub && isZeroConst(b.X) {
		return b.Y
	}
	return &ir.Binary{Op: ir.Sub, X: ir.IntConst(0), Y: x}
}

// strideTerm splits x, a sum and difference of terms one of which is the
// axis a, into the other terms, e, and whether the axis is added (x = e +
// a: the test holds where a = -e modulo the stride) rather than
// subtracted (x = e - a: where a = e). ok is false where a is not such a
// term of x.
func strideTerm(x ir.Expr, a *ir.Index) (e ir.Expr, neg, ok bool) {
	if ref, isRef := x.(*ir.IndexRef); isRef && ref.Index == a {
		return ir.IntConst(0), true, true
	}
	b, isBin := x.(*ir.Binary)
	if !isBin || (b.Op != ir.Add && b.Op != ir.Sub) {
		return nil, false, false
	}
	if e, neg, ok := strideTerm(b.X, a); ok {
		return plus(e, b.Y, b.Op), neg, true
	}
	if e, neg, ok := strideTerm(b.Y, a); ok {
		if b.Op == ir.Sub {
			neg = !neg
		}
		return plus(b.X, e, b.Op), neg, true
	}
	return nil, false, false
}

// constInt is the value of an integer constant, seen through casts
// between integer types (a specialized i32 param widened to i64).
func constInt(x ir.Expr) (int64, bool) {
	switch x := x.(type) {
	case *ir.Const:
		return x.I, x.T.IsInt()
	case *ir.Cast:
		if x.T.IsInt() {
			return constInt(x.X)
		}
	}
	return 0, false
}
