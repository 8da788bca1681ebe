package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// oneHotSums replaces every sum that picks one term of an axis, as a
// cross entropy picks each row's target logit,
//
//	sum[c](c == e ? v : 0)          e independent of the sum's axes
//
// by the term itself, guarded:
//
//	(lo <= e && e < hi) ? v[c := e] : 0
//
// with the sum's other axes, if any, still summed. The terms the
// comparison rules out are exact zeros, so the value is the same but for
// the sign of a zero (a sum of +0 and -0 is +0). Every load of v that the
// substitution makes depend on e reads with a default of zero, so that a
// backend that evaluates both sides of the select (Triton's tl.where)
// never reads out of range when e is. The sum read a whole row to pick
// one element: cross_entropy_vocab's picked logits read 512 x 32000 f32
// (65 MB) for 512 values.
func oneHotSums(k *ir.Kernel) {
	for _, s := range k.Stmts {
		s.Value = ir.Rewrite(s.Value, oneHot)
	}
}

func oneHot(x ir.Expr) ir.Expr {
	r, sel, cmp, ok := pickedSum(x)
	if !ok {
		return nil
	}
	for _, a := range r.Axes {
		var e ir.Expr
		if ref, ok := cmp.X.(*ir.IndexRef); ok && ref.Index == a {
			e = cmp.Y
		} else if ref, ok := cmp.Y.(*ir.IndexRef); ok && ref.Index == a {
			e = cmp.X
		} else {
			continue
		}
		if e.Type() != ir.I64 || slices.ContainsFunc(r.Axes, func(ix *ir.Index) bool { return Mentions(e, ix) }) {
			continue
		}
		term := ir.Substitute(sel.X, map[*ir.Index]ir.Expr{a: e})
		term = defaultZero(term, func(ld *ir.Load) bool { return mentionsExpr(ld, e) })
		inRange := &ir.Binary{Op: ir.And, X: &ir.Binary{Op: ir.Le, X: a.Lo, Y: e}, Y: &ir.Binary{Op: ir.Lt, X: e, Y: a.Hi}}
		var v ir.Expr = &ir.Select{Cond: inRange, X: term, Y: sel.Y, Span: sel.Span}
		if v.Type() != r.T {
			v = &ir.Cast{X: v, T: r.T, Span: r.Span}
		}
		rest := slices.DeleteFunc(slices.Clone(r.Axes), func(ix *ir.Index) bool { return ix == a })
		if len(rest) == 0 {
			return v
		}
		return &ir.Reduce{Op: ir.Sum, Axes: rest, Body: v, T: r.T, Span: r.Span}
	}
	return nil
}

// pickedSum matches a sum whose terms a comparison picks,
// sum[...](x == y ? v : 0), and returns the sum, its select and the
// comparison.
func pickedSum(x ir.Expr) (r *ir.Reduce, sel *ir.Select, cmp *ir.Binary, ok bool) {
	if r, ok = x.(*ir.Reduce); !ok || r.Op != ir.Sum {
		return nil, nil, nil, false
	}
	if sel, ok = r.Body.(*ir.Select); !ok || !isZeroConst(sel.Y) {
		return nil, nil, nil, false
	}
	if cmp, ok = sel.Cond.(*ir.Binary); !ok || cmp.Op != ir.Eq {
		return nil, nil, nil, false
	}
	return r, sel, cmp, true
}

// defaultZero gives every load of term that reads picks a default of
// zero, so that a backend that evaluates both sides of a select (Triton's
// tl.where) never reads out of range where the select's test rules the
// term out.
func defaultZero(term ir.Expr, reads func(*ir.Load) bool) ir.Expr {
	return ir.Rewrite(term, func(y ir.Expr) ir.Expr {
		if ld, ok := y.(*ir.Load); ok && ld.Default == nil && reads(ld) {
			ld.Default = &ir.Const{T: ld.Tensor.DType, Span: ld.Span}
		}
		return nil
	})
}

// isZeroConst reports whether x is the constant zero.
func isZeroConst(x ir.Expr) bool {
	c, ok := x.(*ir.Const)
	return ok && c.F == 0 && c.I == 0
}

// mentionsExpr reports whether one of ld's indices contains e: an
// expression that prints as e does (ir.Substitute puts a copy there).
func mentionsExpr(ld *ir.Load, e ir.Expr) bool {
	text := ir.Format(e)
	return slices.ContainsFunc(ld.Index, func(ix ir.Expr) bool {
		return ir.Any(ix, func(y ir.Expr) bool { return ir.Format(y) == text })
	})
}
