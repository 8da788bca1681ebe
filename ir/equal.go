package ir

import "math"

// TopReductions lists the distinct reductions of e that no other
// reduction contains, in evaluation order. A reduction that appears more
// than once (see ShareReductions) is listed once: it is computed once.
func TopReductions(e Expr) []*Reduce {
	var rs []*Reduce
	Walk(e, func(x Expr) bool {
		if r, ok := x.(*Reduce); ok {
			if !containsReduce(rs, r) {
				rs = append(rs, r)
			}
			return false
		}
		return true
	})
	return rs
}

func containsReduce(rs []*Reduce, r *Reduce) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// Equal reports whether a and b compute the same value: the same tree of
// operations on the same tensors, dims, params and indices, positions
// aside. The axes of reductions are bound variables: sum[k](X[k]) equals
// sum[j](X[j]) when k and j range alike.
func Equal(a, b Expr) bool { return equal(a, b, nil) }

// equal compares a and b, where bound maps each reduction axis of a that
// is in scope to b's axis in the same place.
func equal(a, b Expr, bound map[*Index]*Index) bool {
	switch x := a.(type) {
	case *Const:
		y, ok := b.(*Const)
		return ok && x.T == y.T && x.I == y.I &&
			(x.F == y.F && math.Signbit(x.F) == math.Signbit(y.F) || math.IsNaN(x.F) && math.IsNaN(y.F))
	case *IndexRef:
		y, ok := b.(*IndexRef)
		if !ok {
			return false
		}
		if to, isBound := bound[x.Index]; isBound {
			return to == y.Index
		}
		return x.Index == y.Index
	case *DimRef:
		y, ok := b.(*DimRef)
		return ok && x.Dim == y.Dim
	case *ParamRef:
		y, ok := b.(*ParamRef)
		return ok && x.Param == y.Param
	case *Load:
		y, ok := b.(*Load)
		if !ok || x.Tensor != y.Tensor || (x.Default == nil) != (y.Default == nil) ||
			x.Default != nil && !equal(x.Default, y.Default, bound) {
			return false
		}
		return equalAll(x.Index, y.Index, bound)
	case *Unary:
		y, ok := b.(*Unary)
		return ok && x.Op == y.Op && equal(x.X, y.X, bound)
	case *Binary:
		y, ok := b.(*Binary)
		return ok && x.Op == y.Op && equal(x.X, y.X, bound) && equal(x.Y, y.Y, bound)
	case *Select:
		y, ok := b.(*Select)
		return ok && equal(x.Cond, y.Cond, bound) && equal(x.X, y.X, bound) && equal(x.Y, y.Y, bound)
	case *Call:
		y, ok := b.(*Call)
		return ok && x.Fn == y.Fn && x.T == y.T && equalAll(x.Args, y.Args, bound)
	case *Cast:
		y, ok := b.(*Cast)
		return ok && x.T == y.T && equal(x.X, y.X, bound)
	case *Reduce:
		y, ok := b.(*Reduce)
		if !ok || x.Op != y.Op || x.T != y.T || len(x.Axes) != len(y.Axes) {
			return false
		}
		inner := make(map[*Index]*Index, len(bound)+len(x.Axes))
		for k, v := range bound {
			inner[k] = v
		}
		for i, ax := range x.Axes {
			// An axis's range may read the axes before it.
			if !equal(ax.Lo, y.Axes[i].Lo, inner) || !equal(ax.Hi, y.Axes[i].Hi, inner) {
				return false
			}
			inner[ax] = y.Axes[i]
		}
		return equal(x.Body, y.Body, inner)
	}
	return false
}

func equalAll(xs, ys []Expr, bound map[*Index]*Index) bool {
	if len(xs) != len(ys) {
		return false
	}
	for i := range xs {
		if !equal(xs[i], ys[i], bound) {
			return false
		}
	}
	return true
}

// ShareReductions makes the equal reductions within each statement one
// node, so that a template computes each once: the same sum written
// twice, or a fn whose parameter appears twice (gelu(x) = 0.5 * x *
// (1 + erf(x * c))) applied to a sum. A matrix product under such an
// epilogue is then recognized as one. The statements' trees become DAGs:
// run it after every pass that rewrites them in place.
func ShareReductions(k *Kernel) {
	for _, s := range k.Stmts {
		var seen []*Reduce
		s.Value = Rewrite(s.Value, func(e Expr) Expr {
			r, ok := e.(*Reduce)
			if !ok {
				return nil
			}
			for _, c := range seen {
				if c != r && Equal(r, c) {
					return c
				}
			}
			seen = append(seen, r)
			return nil
		})
	}
}

// EqualUnder is Equal where each index of a that bound maps is taken for
// its image in b: the same value at the same point of two loops that run
// over different indices alike.
func EqualUnder(a, b Expr, bound map[*Index]*Index) bool { return equal(a, b, bound) }
