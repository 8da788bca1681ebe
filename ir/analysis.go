package ir

import (
	"fmt"
	"slices"
)

// StmtKind classifies a statement by the loop structure a backend template
// needs for it.
type StmtKind uint8

const (
	// Elementwise: no reduction; each output point reads its inputs at
	// (possibly broadcast, transposed or computed) indices.
	Elementwise StmtKind = iota
	// InnerReduction: one reduction whose axes index the innermost
	// dimensions of every tensor it reads (a row reduction).
	InnerReduction
	// OuterReduction: one reduction over outer dimensions (a column
	// reduction).
	OuterReduction
	// Contraction: a sum over products of tensors that share the
	// reduction axes (matmul, batched matmul, einsum).
	Contraction
	// ConvLike: a reduction that reads through compound indices such as
	// oh*stride + kh - pad (convolution, pooling).
	ConvLike
	// Generic: anything else (nested or several reductions).
	Generic
)

var stmtKindNames = [...]string{"elementwise", "reduction(inner)", "reduction(outer)", "contraction", "conv-like", "generic"}

func (k StmtKind) String() string { return stmtKindNames[k] }

// Classify returns the kind of s.
func Classify(s *Stmt) StmtKind {
	var reds []*Reduce
	Walk(s.Value, func(e Expr) bool {
		if r, ok := e.(*Reduce); ok {
			reds = append(reds, r)
			return false
		}
		return true
	})
	if len(reds) == 0 {
		return Elementwise
	}
	if len(reds) > 1 {
		return Generic
	}
	r := reds[0]
	axes := map[*Index]bool{}
	for _, ax := range r.Axes {
		axes[ax] = true
	}
	nested, compound, inner := false, false, true
	var axisLoads []*Load
	Walk(r.Body, func(e Expr) bool {
		switch e := e.(type) {
		case *Reduce:
			nested = true
		case *Load:
			usesAxis := false
			for _, ix := range e.Index {
				if _, plain := ix.(*IndexRef); !plain && usesIndex(ix) {
					compound = true
				}
				if usesAnyOf(ix, axes) {
					usesAxis = true
				}
			}
			if usesAxis {
				axisLoads = append(axisLoads, e)
				// The reduction axes must be a suffix of the index list.
				seenOther := false
				for i := len(e.Index) - 1; i >= 0; i-- {
					if usesAnyOf(e.Index[i], axes) {
						if seenOther {
							inner = false
						}
					} else {
						seenOther = true
					}
				}
			}
		}
		return true
	})
	switch {
	case nested:
		return Generic
	case compound:
		return ConvLike
	case r.Op == Sum && isProduct(r.Body) && distinctReads(axisLoads):
		return Contraction
	case inner:
		return InnerReduction
	}
	return OuterReduction
}

// distinctReads reports whether loads read at least two different
// tensors, or one tensor at two different places: a square such as
// (x - m) * (x - m) reduces a row, it does not contract two operands.
func distinctReads(loads []*Load) bool {
	for _, l := range loads[min(1, len(loads)):] {
		if l.Tensor != loads[0].Tensor || Format(l) != Format(loads[0]) {
			return true
		}
	}
	return false
}

func isProduct(e Expr) bool {
	for {
		switch x := e.(type) {
		case *Cast:
			e = x.X
			continue
		case *Unary:
			e = x.X
			continue
		case *Binary:
			return x.Op == Mul
		}
		return false
	}
}

func usesIndex(e Expr) bool {
	return Any(e, func(e Expr) bool { _, ok := e.(*IndexRef); return ok })
}

func usesAnyOf(e Expr, set map[*Index]bool) bool {
	found := false
	Walk(e, func(e Expr) bool {
		if r, ok := e.(*IndexRef); ok && set[r.Index] {
			found = true
		}
		return !found
	})
	return found
}

// Loads returns every read of t in k, in statement order.
func Loads(k *Kernel, t *Tensor) []*Load {
	var loads []*Load
	for _, s := range k.Stmts {
		Walk(s.Value, func(e Expr) bool {
			if l, ok := e.(*Load); ok && l.Tensor == t {
				loads = append(loads, l)
			}
			return true
		})
	}
	return loads
}

// Deps returns, for each statement of k, the indices of the earlier
// statements whose results it reads.
func Deps(k *Kernel) [][]int {
	writer := map[*Tensor]int{}
	deps := make([][]int, len(k.Stmts))
	for i, s := range k.Stmts {
		seen := map[int]bool{}
		Walk(s.Value, func(e Expr) bool {
			if l, ok := e.(*Load); ok {
				if w, ok := writer[l.Tensor]; ok && !seen[w] {
					seen[w] = true
					deps[i] = append(deps[i], w)
				}
			}
			return true
		})
		writer[s.Target] = i
	}
	return deps
}

// Inlinable reports whether let t can be recomputed at each of its uses
// instead of being materialized, and why.
func Inlinable(k *Kernel, t *Tensor) (bool, string) {
	s := k.Writer(t)
	if s == nil {
		return false, "it is never written"
	}
	uses := len(Loads(k, t))
	if kind := Classify(s); kind != Elementwise {
		if readAtOwnPoints(k, t) {
			return true, fmt.Sprintf("it is a %s that one statement without reductions of its own reads only at its own points; its %d use(s) there share one reduction", kind, uses)
		}
		return false, fmt.Sprintf("it is a %s; recomputing it at each of its %d uses would repeat the reduction", kind, uses)
	}
	return true, fmt.Sprintf("it is elementwise; %d use(s) recompute it", uses)
}

// readAtOwnPoints reports whether let t's only reader is one statement
// that has no reduction of its own, reads no other let that has one, and
// reads t outside any reduction, without a default, at one list of
// distinct bare indices that are all of the statement's own: a statement
// point reads one point of t, and no other point reads it. Inlined there,
// t's value is computed once a point, its copies being equal
// (ShareReductions makes them one node): silu(z) of a product z is one
// product with its epilogue.
func readAtOwnPoints(k *Kernel, t *Tensor) bool {
	var reader *Stmt
	var at []Expr
	for _, s := range k.Stmts {
		ok, reads := true, false
		var walk func(e Expr, reduced bool)
		walk = func(e Expr, reduced bool) {
			switch e := e.(type) {
			case *Reduce:
				ok = false
				return
			case *Load:
				if e.Tensor == t {
					reads = true
					if reduced || e.Default != nil || (at != nil && !equalExprs(at, e.Index)) {
						ok = false
					}
					at = e.Index
				} else if e.Tensor.Kind == Let && e.Tensor != s.Target {
					if w := k.Writer(e.Tensor); w != nil && Classify(w) != Elementwise {
						ok = false
					}
				}
			}
			for _, c := range Children(e) {
				walk(c, reduced)
			}
		}
		walk(s.Value, false)
		if !reads {
			continue
		}
		if reader != nil || !ok || s == k.Writer(t) {
			return false
		}
		reader = s
	}
	if reader == nil || len(at) != len(reader.Index) {
		return false
	}
	seen := map[*Index]bool{}
	for _, x := range at {
		ref, ok := x.(*IndexRef)
		if !ok || seen[ref.Index] || !slices.Contains(reader.Index, ref.Index) {
			return false
		}
		seen[ref.Index] = true
	}
	return true
}

// equalExprs reports whether two index lists are equal, element by
// element.
func equalExprs(a, b []Expr) bool {
	return slices.EqualFunc(a, b, func(x, y Expr) bool { return Equal(x, y) })
}

// Work estimates the scalar operations a kernel performs at env: for each
// statement, its points times the points of the reductions under it. The
// interpreter and runners use it to refuse sizes that would take hours.
func Work(k *Kernel, env *Env) float64 {
	extent := func(ix *Index) float64 {
		lo, err1 := env.Int(ix.Lo)
		hi, err2 := env.Int(ix.Hi)
		if err1 != nil || err2 != nil || hi <= lo {
			return 0
		}
		return float64(hi - lo)
	}
	var reduceWork func(e Expr) float64
	reduceWork = func(e Expr) float64 {
		w := 1.0
		for _, c := range Children(e) {
			w += reduceWork(c)
		}
		if r, ok := e.(*Reduce); ok {
			n := 1.0
			for _, ax := range r.Axes {
				n *= extent(ax)
			}
			w *= n
		}
		return w
	}
	total := 0.0
	for _, s := range k.Stmts {
		points := 1.0
		for _, ix := range s.Index {
			points *= extent(ix)
		}
		total += points * reduceWork(s.Value)
	}
	return total
}
