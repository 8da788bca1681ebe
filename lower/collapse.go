package lower

import (
	"slices"

	"kgen.dev/kgen/ir"
)

// collapseAxes merges two adjacent axes of a loop (a statement's indices
// or a reduction's) into one wherever they only ever appear together, as
// the two adjacent dimensions they run over in full, in every access of
// every tensor they index; those tensors' two dimensions merge too (a
// row-major tensor is the same memory either way). An instance norm's
// statistics over [h, w] of X[n, c, h, w] become a sum over one axis of
// H * W elements of X[n, c, hw]: rows that the templates can keep in
// registers and read with vector loads, without dividing an index into h
// and w. It runs to a fixed point, so [n, c] may merge next, and only on
// specialized kernels (constant extents).
//
// A reduction's axes merge only where all of them can become one: where
// every use of each is in one run of all of them, in order, in a load's
// index. Merging part of them left group norm's sums over [j, h, w] of
// X[n, g * CG + j, h, w] as sums over [j, hw], no easier for any
// template, and nvcc then compiled them slower: 507 -> 732 us on the
// H100 (testsuite/results/2026-11-26-h100-s11-collapse/bench/).
func collapseAxes(k *ir.Kernel) {
	for collapseOnce(k) {
	}
}

// axisLists are the loops of a kernel: each statement's indices and each
// reduction's axes, with where each index sits.
type axisLists struct {
	lists  []*[]*ir.Index
	reduce []bool               // whether the list is a reduction's
	where  map[*ir.Index][2]int // list, position
}

// access is one access of a tensor: a load, or a statement's target at
// its own indices.
type access struct {
	t    *ir.Tensor
	load *ir.Load // nil for a target
	stmt *ir.Stmt
}

func (a access) index() []ir.Expr {
	if a.load != nil {
		return a.load.Index
	}
	return Refs(a.stmt.Index)
}

type axisPair struct{ a, b *ir.Index }

func collapseOnce(k *ir.Kernel) bool {
	al := axisLists{where: map[*ir.Index][2]int{}}
	add := func(l *[]*ir.Index, reduce bool) {
		for p, ix := range *l {
			al.where[ix] = [2]int{len(al.lists), p}
		}
		al.lists = append(al.lists, l)
		al.reduce = append(al.reduce, reduce)
	}
	var accesses []access
	refs := map[*ir.Index]int{}
	count := func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) bool {
			if r, ok := x.(*ir.IndexRef); ok {
				refs[r.Index]++
			}
			return true
		})
	}
	for _, s := range k.Stmts {
		add(&s.Index, false)
		accesses = append(accesses, access{t: s.Target, stmt: s})
		for _, ix := range s.Index {
			refs[ix]++ // the target's own use
			count(ix.Lo)
			count(ix.Hi)
		}
		count(s.Value)
		ir.Walk(s.Value, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.Reduce:
				add(&x.Axes, true)
				for _, ix := range x.Axes {
					count(ix.Lo)
					count(ix.Hi)
				}
			case *ir.Load:
				accesses = append(accesses, access{t: x.Tensor, load: x})
			}
			return true
		})
	}
	// Whether each reduction's axes can all become one (wholeRun), once.
	whole := make([]bool, len(al.lists))
	for i, l := range al.lists {
		whole[i] = al.reduce[i] && wholeRun(*l, accesses, refs)
	}
	// pairAt is the pair of adjacent axes of one loop that an access reads
	// at dimensions d and d+1, each over its dimension in full.
	pairAt := func(acc access, d int) (axisPair, bool) {
		idx := acc.index()
		if d+1 >= len(idx) || (acc.load != nil && acc.load.Default != nil) {
			return axisPair{}, false
		}
		ra, ok1 := idx[d].(*ir.IndexRef)
		rb, ok2 := idx[d+1].(*ir.IndexRef)
		if !ok1 || !ok2 {
			return axisPair{}, false
		}
		wa, okA := al.where[ra.Index]
		wb, okB := al.where[rb.Index]
		if !okA || !okB || wa[0] != wb[0] || wb[1] != wa[1]+1 || !fullRange(ra.Index, acc.t.Shape[d]) || !fullRange(rb.Index, acc.t.Shape[d+1]) {
			return axisPair{}, false
		}
		if al.reduce[wa[0]] && !whole[wa[0]] {
			return axisPair{}, false
		}
		return axisPair{ra.Index, rb.Index}, true
	}
	for _, l := range al.lists {
		for p := 0; p+1 < len(*l); p++ {
			pairs, dims, ok := component(axisPair{(*l)[p], (*l)[p+1]}, accesses, refs, pairAt)
			if ok {
				merge(k, al, pairs, dims, accesses)
				return true
			}
		}
	}
	return false
}

// wholeRun reports whether every use of the axes of list is in one run of
// all of them, in order, in an access's index.
func wholeRun(list []*ir.Index, accesses []access, refs map[*ir.Index]int) bool {
	runs := 0
	for _, acc := range accesses {
		idx := acc.index()
		for d := 0; d+len(list) <= len(idx); d++ {
			run := true
			for i, ax := range list {
				if r, ok := idx[d+i].(*ir.IndexRef); !ok || r.Index != ax {
					run = false
					break
				}
			}
			if run {
				runs++
			}
		}
	}
	for _, ax := range list {
		if refs[ax] != runs {
			return false
		}
	}
	return runs > 0
}

// component finds the pairs of axes and the tensors' dimensions that must
// merge together with seed: every tensor a pair indexes merges at that
// dimension in all its accesses, whose pairs merge in turn. It fails when
// an axis appears other than in its pair, or an access of a merging
// tensor does not read a pair there.
func component(seed axisPair, accesses []access, refs map[*ir.Index]int, pairAt func(access, int) (axisPair, bool)) ([]axisPair, map[*ir.Tensor]int, bool) {
	pairs := []axisPair{seed}
	dims := map[*ir.Tensor]int{}
	for i := 0; i < len(pairs); i++ {
		p := pairs[i]
		matched := 0
		var found []*ir.Tensor
		for _, acc := range accesses {
			idx := acc.index()
			for d := 0; d+1 < len(idx); d++ {
				if q, ok := pairAt(acc, d); ok && q == p {
					matched++
					if prev, seen := dims[acc.t]; seen && prev != d {
						return nil, nil, false
					}
					if _, seen := dims[acc.t]; !seen {
						dims[acc.t] = d
						found = append(found, acc.t)
					}
				}
			}
		}
		if matched == 0 || refs[p.a] != matched || refs[p.b] != matched {
			return nil, nil, false
		}
		for _, t := range found {
			for _, acc := range accesses {
				if acc.t != t {
					continue
				}
				q, ok := pairAt(acc, dims[t])
				if !ok {
					return nil, nil, false
				}
				if !slices.Contains(pairs, q) {
					pairs = append(pairs, q)
				}
			}
		}
	}
	return pairs, dims, true
}

// merge applies a component: each pair becomes one axis of their
// extents' product, each tensor's two dimensions one.
func merge(k *ir.Kernel, al axisLists, pairs []axisPair, dims map[*ir.Tensor]int, accesses []access) {
	merged := map[axisPair]*ir.Index{}
	taken := names(k)
	for _, p := range pairs {
		ea, eb := constOf(p.a.Hi), constOf(p.b.Hi)
		m := &ir.Index{Name: fresh(taken, p.a.Name+"_"+p.b.Name), Span: p.a.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(ea * eb)}
		merged[p] = m
		w := al.where[p.a]
		l := al.lists[w[0]]
		*l = slices.Concat((*l)[:w[1]], []*ir.Index{m}, (*l)[w[1]+2:])
	}
	for _, acc := range accesses {
		d, ok := dims[acc.t]
		if !ok || acc.load == nil {
			continue // a target follows its statement's indices
		}
		ra := acc.load.Index[d].(*ir.IndexRef)
		rb := acc.load.Index[d+1].(*ir.IndexRef)
		m := merged[axisPair{ra.Index, rb.Index}]
		acc.load.Index = slices.Concat(acc.load.Index[:d], []ir.Expr{&ir.IndexRef{Index: m, Span: ra.Span}}, acc.load.Index[d+2:])
	}
	for t, d := range dims {
		n := constOf(t.Shape[d]) * constOf(t.Shape[d+1])
		t.Shape = slices.Concat(t.Shape[:d], []ir.Expr{ir.IntConst(n)}, t.Shape[d+2:])
	}
}

// fullRange reports whether ix runs over [0, extent) of constants.
func fullRange(ix *ir.Index, extent ir.Expr) bool {
	lo, ok1 := Simplify(ix.Lo).(*ir.Const)
	hi, ok2 := Simplify(ix.Hi).(*ir.Const)
	e, ok3 := Simplify(extent).(*ir.Const)
	return ok1 && ok2 && ok3 && lo.I == 0 && hi.I == e.I && e.I > 0
}

// constOf is the value of a constant integer expression.
func constOf(e ir.Expr) int64 { return Simplify(e).(*ir.Const).I }
