package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// Clone is ir.Clone: plans rewrite their own copy of a kernel.
func Clone(k *ir.Kernel) *ir.Kernel { return ir.Clone(k) }

// rebind carries an Env over to a clone of its kernel, by name.
func rebind(env *ir.Env, k *ir.Kernel) *ir.Env {
	n := &ir.Env{Kernel: k, Dims: map[*ir.Dim]int64{}, Params: map[*ir.Param]*ir.Const{}}
	for d, v := range env.Dims {
		for _, nd := range k.Dims {
			if nd.Name == d.Name {
				n.Dims[nd] = v
			}
		}
	}
	for p, v := range env.Params {
		for _, np := range k.Params {
			if np.Name == p.Name {
				n.Params[np] = v
			}
		}
	}
	return n
}

// Specialize replaces every dim and param of k by its value in env, so that
// an instance's kernel is compiled with constant sizes.
func Specialize(k *ir.Kernel, env *ir.Env) {
	f := func(e ir.Expr) ir.Expr {
		switch e := e.(type) {
		case *ir.DimRef:
			return &ir.Const{T: ir.I64, I: env.Dims[e.Dim], Span: e.Span}
		case *ir.ParamRef:
			c := *env.Params[e.Param]
			c.Span = e.Span
			return &c
		}
		return nil
	}
	for _, d := range k.Dims {
		if d.Def != nil {
			d.Def = ir.Rewrite(d.Def, f)
		}
	}
	for _, t := range k.Tensors() {
		for i, e := range t.Shape {
			t.Shape[i] = ir.Rewrite(e, f)
		}
	}
	for _, s := range k.Stmts {
		for _, ix := range s.Index {
			ix.Lo, ix.Hi = ir.Rewrite(ix.Lo, f), ir.Rewrite(ix.Hi, f)
		}
		s.Value = ir.Rewrite(s.Value, f)
	}
}

// InlineLets replaces each read of an inlinable (elementwise) let by the
// let's expression at the read's indices, and drops the let: recomputing
// it costs less than a round trip through global memory. A read with a
// default becomes a bounds test that picks the expression or the default.
// A let that a matrix product reads as an operand stays a let where its
// expression would make the product's body no product of two loads (an
// attention's probabilities exp(s - mx) times V): the product's tiles
// then read it as a matrix, where inlined it would be recomputed for
// every output column by the generic template.
func InlineLets(k *ir.Kernel) {
	for _, t := range slices.Clone(k.Lets) {
		if ok, _ := ir.Inlinable(k, t); !ok || operandOfProduct(k, t) {
			continue
		}
		w := k.Writer(t)
		inline := inliner(w, t)
		for _, s := range k.Stmts {
			if s != w {
				s.Value = ir.Rewrite(s.Value, inline)
			}
		}
		k.Stmts = slices.DeleteFunc(k.Stmts, func(s *ir.Stmt) bool { return s == w })
		k.Lets = slices.DeleteFunc(k.Lets, func(l *ir.Tensor) bool { return l == t })
	}
}

// operandOfProduct reports whether a statement of k that reads let t is
// a matrix product or an implicit one with t as it is, and would not be
// with t inlined.
func operandOfProduct(k *ir.Kernel, t *ir.Tensor) bool {
	w := k.Writer(t)
	inline := inliner(w, t)
	for _, s := range k.Stmts {
		if s == w || !uses(s, t) {
			continue
		}
		if MatchMatmul(s) == nil && MatchIGemm(s) == nil {
			continue
		}
		// A copy: Rewrite edits in place.
		value := ir.Rewrite(ir.Substitute(s.Value, nil), inline)
		inlined := &ir.Stmt{Target: s.Target, Index: s.Index, Span: s.Span, Value: value}
		if MatchMatmul(inlined) == nil && MatchIGemm(inlined) == nil {
			return true
		}
	}
	return false
}

// inliner is the rewrite that replaces each read of let t, written by w,
// by w's value at the read's indices.
func inliner(w *ir.Stmt, t *ir.Tensor) func(ir.Expr) ir.Expr {
	return func(e ir.Expr) ir.Expr {
		l, ok := e.(*ir.Load)
		if !ok || l.Tensor != t {
			return nil
		}
		subst := map[*ir.Index]ir.Expr{}
		for i, ix := range w.Index {
			subst[ix] = l.Index[i]
		}
		v := ir.Substitute(w.Value, subst)
		if l.Default == nil {
			return v
		}
		return &ir.Select{Cond: inBounds(l.Index, t.Shape), X: v, Y: l.Default, Span: l.Span}
	}
}

// inBounds is the bool expression 0 <= idx[d] < shape[d] for every d.
func inBounds(idx, shape []ir.Expr) ir.Expr {
	var cond ir.Expr
	for d, e := range idx {
		c := &ir.Binary{Op: ir.And,
			X: &ir.Binary{Op: ir.Ge, X: e, Y: ir.IntConst(0)},
			Y: &ir.Binary{Op: ir.Lt, X: e, Y: shape[d]}}
		if cond == nil {
			cond = c
		} else {
			cond = &ir.Binary{Op: ir.And, X: cond, Y: c}
		}
	}
	if cond == nil {
		return &ir.Const{T: ir.Bool, I: 1}
	}
	return cond
}

func add(x, y ir.Expr) ir.Expr { return &ir.Binary{Op: ir.Add, X: x, Y: y} }
func mul(x, y ir.Expr) ir.Expr { return &ir.Binary{Op: ir.Mul, X: x, Y: y} }

func product(es []ir.Expr) ir.Expr {
	var p ir.Expr = ir.IntConst(1)
	for _, e := range es {
		p = mul(p, e)
	}
	return p
}

// alignUp rounds x up to a multiple of a (a power of two).
func alignUp(x ir.Expr, a int64) ir.Expr {
	return mul(&ir.Binary{Op: ir.Div, X: add(x, ir.IntConst(a-1)), Y: ir.IntConst(a)}, ir.IntConst(a))
}

func cdiv(x ir.Expr, d int64) ir.Expr {
	return &ir.Binary{Op: ir.Div, X: add(x, ir.IntConst(d-1)), Y: ir.IntConst(d)}
}

func sortedKeys(c Config) []string {
	var ks []string
	for k := range c {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Simplify folds the constant parts of a size expression, so that the
// manifest and the emitted code read `M * N` rather than `1 * M * N`.
func Simplify(e ir.Expr) ir.Expr {
	return ir.Rewrite(ir.Substitute(e, nil), func(e ir.Expr) ir.Expr {
		if c, ok := e.(*ir.Call); ok && (c.Fn == ir.MinFn || c.Fn == ir.MaxFn) {
			x, xc := c.Args[0].(*ir.Const)
			y, yc := c.Args[1].(*ir.Const)
			if xc && yc && x.T == ir.I64 && y.T == ir.I64 {
				if c.Fn == ir.MinFn {
					return ir.IntConst(min(x.I, y.I))
				}
				return ir.IntConst(max(x.I, y.I))
			}
			return nil
		}
		b, ok := e.(*ir.Binary)
		if !ok {
			return nil
		}
		x, xc := b.X.(*ir.Const)
		y, yc := b.Y.(*ir.Const)
		switch {
		case xc && yc:
			if v, err := ir.IntOp(b.Op, x.I, y.I); err == nil {
				return ir.IntConst(v)
			}
		case b.Op == ir.Mul && xc && x.I == 1:
			return b.Y
		case (b.Op == ir.Mul || b.Op == ir.Div) && yc && y.I == 1:
			return b.X
		case b.Op == ir.Add && xc && x.I == 0:
			return b.Y
		case (b.Op == ir.Add || b.Op == ir.Sub) && yc && y.I == 0:
			return b.X
		}
		return nil
	})
}

// widenAccumulators makes every float sum and product of k accumulate in
// f64, rounding the result to the accumulation type it had.
func widenAccumulators(k *ir.Kernel) {
	for _, s := range k.Stmts {
		s.Value = ir.Rewrite(s.Value, func(e ir.Expr) ir.Expr {
			r, ok := e.(*ir.Reduce)
			if !ok || !r.T.IsFloat() || r.T == ir.F64 || (r.Op != ir.Sum && r.Op != ir.Prod) {
				return nil
			}
			t := r.T
			r.Body, r.T = &ir.Cast{X: r.Body, T: ir.F64, Span: r.Span}, ir.F64
			return &ir.Cast{X: r, T: t, Span: r.Span}
		})
	}
}
