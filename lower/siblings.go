package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// siblings joins consecutive elementwise statements over the same points
// into one launch: the first is the launch's Stmt, the others its Also,
// computed at each point after it. Sibling outputs of one input (softplus
// and softsign of the same tensor, a quantized value and its remainder)
// then read the input once instead of once each: bf16 softplus and
// softsign of 4096 x 4096 moved 128 MiB in two launches where one moves
// 96 MiB. A statement joins the launch when neither it nor any member
// reads what another writes (so computing it earlier, at the first's
// place, changes nothing) and its points are the first's, range by
// range.
func siblings(groups []group, lim Limits) []group {
	var out []group
	for _, g := range groups {
		if n := len(out); n > 0 && siblingOK(out[n-1], g, lim) {
			out[n-1].also = append(out[n-1].also, g.final)
			continue
		}
		out = append(out, g)
	}
	return out
}

func siblingOK(a, b group, lim Limits) bool {
	if len(a.fused) > 0 || len(b.fused) > 0 || !elementwiseLaunch(a.final, lim) || !elementwiseLaunch(b.final, lim) {
		return false
	}
	s, t := a.final, b.final
	if len(s.Index) != len(t.Index) || len(s.Index) == 0 {
		return false
	}
	for d := range s.Index {
		if !sameExtent(s.Index[d], t.Index[d]) {
			return false
		}
	}
	members := append([]*ir.Stmt{s}, a.also...)
	for _, m := range members {
		if m.Target == t.Target || uses(t, m.Target) || uses(m, t.Target) {
			return false
		}
	}
	return true
}

// elementwiseLaunch reports whether s would be an elementwise launch of
// its own on a target with limits lim.
func elementwiseLaunch(s *ir.Stmt, lim Limits) bool {
	return choose(s, lim).Name() == "elementwise"
}

// sameExtent reports whether two indices run over the same range (the
// same bounds, simplified; symbolic sizes included).
func sameExtent(x, y *ir.Index) bool {
	return ir.Equal(Simplify(x.Lo), Simplify(y.Lo)) && ir.Equal(Simplify(x.Hi), Simplify(y.Hi))
}

// uses reports whether s reads t.
func uses(s *ir.Stmt, t *ir.Tensor) bool {
	return ir.Any(s.Value, func(x ir.Expr) bool { l, ok := x.(*ir.Load); return ok && l.Tensor == t })
}

// alsoAt rewrites the statements a launch computes beside final over
// final's first dims indices, keeping their others, so that one set of
// index variables serves the whole launch: an elementwise launch's
// siblings over all of final's indices, a row-reduce launch's statements
// stored along the row over its row indices and their own columns.
func alsoAt(final *ir.Stmt, dims int, also []*ir.Stmt) []*ir.Stmt {
	var out []*ir.Stmt
	for _, s := range also {
		subst := map[*ir.Index]ir.Expr{}
		for d := range dims {
			subst[s.Index[d]] = &ir.IndexRef{Index: final.Index[d]}
		}
		index := append(slices.Clone(final.Index[:dims]), s.Index[dims:]...)
		out = append(out, &ir.Stmt{Target: s.Target, Index: index, Value: ir.Substitute(s.Value, subst), Span: s.Span})
	}
	return out
}

// Stmts are every statement a launch computes, in the order it computes
// them: the fused lets, then the statement and its siblings (Also), or in
// a row-reduce launch the statements it stores along the row (Also) and
// then its own.
func (l *Launch) Stmts() []*ir.Stmt {
	if l.RowDims > 0 {
		return append(append(slices.Clone(l.Fused), l.Also...), l.Stmt)
	}
	return append(append(slices.Clone(l.Fused), l.Stmt), l.Also...)
}
