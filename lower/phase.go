package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// splitPhases rewrites a statement that is no matrix product as it
// stands, but whose output index o (from 0, a constant extent) is read
// only through floor divisions and moduli by one constant s > 1, into
// one that is: o becomes s * q + r, the target's dimension [n] becomes
// [n / s, s] (row-major, the same memory), and every division and
// modulus by a constant sheds the multiples of it that the substitution
// brings (quasiAffine). A transposed convolution after strideSums,
//
//	Y[n, f, ol] = sum[c, k](X[n, c, (ol + 1 - ((ol + 1) % 2 + 2 * k)) / 2] ?? 0 * Wt[c, f, (ol + 1) % 2 + 2 * k])
//
// reads its filter at a tap that depends on the output point ol, which no
// matrix product does; split into the output's phases r = ol % 2 it is
//
//	Y[n, f, q, r] = sum[c, k](X[n, c, q + -1 * k + (r + 1 - (r + 1) % 2) / 2] ?? 0 * Wt[c, f, (r + 1) % 2 + 2 * k])
//
// a product for each phase r (MatchIGemm's batch index) of the filter's
// taps of that phase with the input. Every point is computed as before,
// from the same terms in the same order. Only a target that no statement
// of the kernel reads and no other writes is split, only where the
// result is an implicit matrix product and the old statement was not,
// and only on specialized kernels (constant extents).
func splitPhases(k *ir.Kernel) {
	for _, s := range k.Stmts {
		if writers(k, s.Target) != 1 || slices.ContainsFunc(k.Stmts, func(r *ir.Stmt) bool { return uses(r, s.Target) }) || MatchMatmul(s) != nil || MatchIGemm(s) != nil {
			continue
		}
		splitPhase(k, s)
	}
}

// splitPhase splits every output index of s that phaseStride allows (a
// 2-D transposed convolution's rows and columns), and keeps the result if
// it is an implicit matrix product.
func splitPhase(k *ir.Kernel, s *ir.Stmt) {
	taken := names(k)
	index, value := slices.Clone(s.Index), s.Value
	shape := slices.Clone(s.Target.Shape)
	split := false
	for d := 0; d < len(index); d++ {
		o := index[d]
		st, ok := phaseStride(value, o)
		if !ok || !zeroLo(o) {
			continue
		}
		n, ok := constInt(Simplify(o.Hi))
		if !ok || n <= st || n%st != 0 {
			continue
		}
		q := &ir.Index{Name: fresh(taken, o.Name+"_q"), Span: o.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(n / st)}
		r := &ir.Index{Name: fresh(taken, o.Name+"_r"), Span: o.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(st)}
		at := &ir.Binary{Op: ir.Add, X: &ir.Binary{Op: ir.Mul, X: ir.IntConst(st), Y: &ir.IndexRef{Index: q, Span: o.Span}}, Y: &ir.IndexRef{Index: r, Span: o.Span}}
		v := ir.Rewrite(ir.Substitute(value, map[*ir.Index]ir.Expr{o: at}), quasiAffine)
		if inDivMod(v, q) {
			continue
		}
		index = slices.Concat(index[:d], []*ir.Index{q, r}, index[d+1:])
		shape = slices.Concat(shape[:d], []ir.Expr{ir.IntConst(n / st), ir.IntConst(st)}, shape[d+1:])
		value, split = v, true
		d++ // past r
	}
	if !split || MatchIGemm(&ir.Stmt{Target: s.Target, Index: index, Value: value, Span: s.Span}) == nil {
		return
	}
	s.Target.Shape, s.Index, s.Value = shape, index, value
}

// phaseStride is the one constant s > 1 that every floor division and
// modulus in v whose dividend reads o divides by, where o appears
// nowhere else in v; false if there is none or there are several.
func phaseStride(v ir.Expr, o *ir.Index) (int64, bool) {
	st := int64(0)
	ok := true
	var visit func(x ir.Expr, inside bool)
	visit = func(x ir.Expr, inside bool) {
		if !ok {
			return
		}
		if b, isBin := x.(*ir.Binary); isBin && (b.Op == ir.Div || b.Op == ir.Mod) && Mentions(b.X, o) {
			c, isConst := constInt(b.Y)
			if !isConst || c < 2 || (st != 0 && c != st) {
				ok = false
				return
			}
			st = c
			visit(b.X, true)
			return
		}
		if ref, isRef := x.(*ir.IndexRef); isRef && ref.Index == o && !inside {
			ok = false // read outside a division or modulus
			return
		}
		for _, c := range ir.Children(x) {
			visit(c, inside)
		}
	}
	visit(v, false)
	return st, ok && st != 0
}

// quasiAffine rewrites a floor division or modulus of an integer
// expression by a constant s > 0, (e + s * m * ix) / s or % s, where e is
// the rest of the dividend and ix an index it reads only as such a term:
// (e + s * m * ix) / s = e / s + m * ix and (e + s * m * ix) % s = e % s,
// exactly, for floor division. Other nodes stay (nil).
func quasiAffine(x ir.Expr) ir.Expr {
	b, ok := x.(*ir.Binary)
	if !ok || (b.Op != ir.Div && b.Op != ir.Mod) || b.X.Type() != ir.I64 {
		return nil
	}
	s, ok := constInt(b.Y)
	if !ok || s < 1 {
		return nil
	}
	rest := b.X
	var out ir.Expr
	for _, ix := range indicesOf(b.X) {
		c, ok := linearIn(rest, ix)
		if !ok || c == 0 || c%s != 0 {
			continue
		}
		rest = ir.Substitute(rest, map[*ir.Index]ir.Expr{ix: ir.IntConst(0)})
		if b.Op == ir.Div {
			term := ir.Expr(&ir.IndexRef{Index: ix})
			if c/s != 1 {
				term = &ir.Binary{Op: ir.Mul, X: ir.IntConst(c / s), Y: term}
			}
			if out == nil {
				out = term
			} else {
				out = &ir.Binary{Op: ir.Add, X: out, Y: term}
			}
		}
	}
	if rest == b.X {
		return nil
	}
	rest = Simplify(rest)
	v := Simplify(&ir.Binary{Op: b.Op, X: rest, Y: b.Y})
	if out == nil {
		return v
	}
	if isZeroConst(v) {
		return out
	}
	return &ir.Binary{Op: ir.Add, X: out, Y: v}
}

// indicesOf lists the indices e reads, in order of first appearance.
func indicesOf(e ir.Expr) []*ir.Index {
	var out []*ir.Index
	ir.Walk(e, func(x ir.Expr) bool {
		if ref, ok := x.(*ir.IndexRef); ok && !slices.Contains(out, ref.Index) {
			out = append(out, ref.Index)
		}
		return true
	})
	return out
}

// linearIn is the constant integer coefficient of ix in e, where e is a
// sum and difference of terms and ix appears only as a term or a term
// times constants; false where ix appears otherwise (in a division, a
// load, a product with an index).
func linearIn(e ir.Expr, ix *ir.Index) (int64, bool) {
	if !Mentions(e, ix) {
		return 0, true
	}
	switch x := e.(type) {
	case *ir.IndexRef:
		return 1, true
	case *ir.Unary:
		if x.Op == ir.Neg {
			c, ok := linearIn(x.X, ix)
			return -c, ok
		}
	case *ir.Binary:
		cx, okx := linearIn(x.X, ix)
		cy, oky := linearIn(x.Y, ix)
		if !okx || !oky {
			return 0, false
		}
		switch x.Op {
		case ir.Add:
			return cx + cy, true
		case ir.Sub:
			return cx - cy, true
		case ir.Mul:
			if k, ok := constInt(x.X); ok && cx == 0 {
				return k * cy, true
			}
			if k, ok := constInt(x.Y); ok && cy == 0 {
				return cx * k, true
			}
		}
	}
	return 0, false
}

// inDivMod reports whether v reads ix inside a floor division or modulus.
func inDivMod(v ir.Expr, ix *ir.Index) bool {
	found := false
	ir.Walk(v, func(x ir.Expr) bool {
		if b, ok := x.(*ir.Binary); ok && (b.Op == ir.Div || b.Op == ir.Mod) && Mentions(b.X, ix) {
			found = true
		}
		return !found
	})
	return found
}

// writers counts the statements of k that store to t.
func writers(k *ir.Kernel, t *ir.Tensor) int {
	n := 0
	for _, s := range k.Stmts {
		if s.Target == t {
			n++
		}
	}
	return n
}
