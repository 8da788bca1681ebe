package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// hoistReductions gives a reduction that depends on only some of its
// statement's output indices a let of its own, so that it is computed
// once per point of those indices rather than once per output point:
//
//	Y[r, d] = X[r, d] - sum[j](X[j, d]) / R
//
// becomes
//
//	let Y_red[d] = sum[j](X[j, d])
//	Y[r, d] = X[r, d] - Y_red[d] / R
//
// (a col-reduce launch, then an elementwise one, where the statement was
// a point a thread each summing a whole column). A row's sum under a
// row-wise statement becomes a let too, which row-reduce fuses back into
// the statement's launch, a block a row (inline, it was a block an output
// point). Equal reductions share one let. Reductions under a guard stay:
// hoisted, they would be evaluated where the guard keeps them from being
// read.
func hoistReductions(k *ir.Kernel) {
	for i := 0; i < len(k.Stmts); i++ {
		s := k.Stmts[i]
		if !unguarded(s.Value) || !allZeroLo(s.Index) {
			continue
		}
		type hoisted struct {
			r *ir.Reduce
			t *ir.Tensor
		}
		var done []hoisted
		for _, r := range ir.TopReductions(s.Value) {
			var free []*ir.Index
			for _, ix := range s.Index {
				if Mentions(r, ix) {
					free = append(free, ix)
				}
			}
			if len(free) == len(s.Index) {
				continue
			}
			// A reduction written twice reads the first one's let (equal
			// reductions read the same indices).
			if j := slices.IndexFunc(done, func(h hoisted) bool { return ir.Equal(h.r, r) }); j >= 0 {
				replace(s, r, &ir.Load{Tensor: done[j].t, Index: Refs(free), Span: r.Span})
				continue
			}
			index, shape, subst := copies(free)
			t := &ir.Tensor{Name: fresh(names(k), s.Target.Name+"_red"), Span: r.Span, Kind: ir.Let, DType: r.T, Shape: shape}
			insertLet(k, i, &ir.Stmt{Target: t, Index: index, Span: s.Span, Value: ir.Substitute(r, subst)})
			i++
			replace(s, r, &ir.Load{Tensor: t, Index: Refs(free), Span: r.Span})
			done = append(done, hoisted{r, t})
		}
	}
}
