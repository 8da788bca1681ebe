package lower_test

import (
	"testing"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestContiguous: a load reads consecutive elements at consecutive points
// of the axes, row-major, only where every axis steps by the points of
// the axes after it: a row, a split row's chunk, a group's channels over
// [j, h, w]; not axes out of order, a stride of 2, a transposed read, a
// square, an axis the load does not read (a broadcast), or an axis after
// the first of unknown extent (the first's extent does not matter).
func TestContiguous(t *testing.T) {
	idx := func(name string, lo, hi ir.Expr) *ir.Index { return &ir.Index{Name: name, Lo: lo, Hi: hi} }
	c := ir.IntConst
	ref := func(ix *ir.Index) ir.Expr { return &ir.IndexRef{Index: ix} }
	add := func(x, y ir.Expr) ir.Expr { return &ir.Binary{Op: ir.Add, X: x, Y: y} }
	mul := func(x, y ir.Expr) ir.Expr { return &ir.Binary{Op: ir.Mul, X: x, Y: y} }
	tensor := func(name string, shape ...int64) *ir.Tensor {
		t := &ir.Tensor{Name: name, Kind: ir.Input, DType: ir.F32}
		for _, n := range shape {
			t.Shape = append(t.Shape, c(n))
		}
		return t
	}
	load := func(t *ir.Tensor, index ...ir.Expr) *ir.Load { return &ir.Load{Tensor: t, Index: index} }

	X := tensor("X", 16, 1024)
	S := &ir.Tensor{Name: "S", Kind: ir.Input, DType: ir.F32}
	G := tensor("G", 2, 64, 256, 256)
	W := tensor("W", 1024)
	D := &ir.Dim{Name: "D"}
	r, n, g := idx("r", c(0), c(16)), idx("n", c(0), c(2)), idx("g", c(0), c(8))
	d := idx("d", c(0), c(1024))
	half := idx("d2", c(0), c(512))
	chunk, part := idx("chunk", c(0), c(4)), idx("e", c(0), c(256))
	j, h, w := idx("j", c(0), c(8)), idx("h", c(0), c(256)), idx("w", c(0), c(256))
	rows := idx("q", c(0), c(16))
	unknown := idx("u", c(0), &ir.DimRef{Dim: D})
	S.Shape = []ir.Expr{c(4), &ir.DimRef{Dim: D}}
	a := idx("a", c(0), c(4))
	for _, tc := range []struct {
		what string
		l    *ir.Load
		axes []*ir.Index
		want bool
	}{
		{"a row", load(X, ref(r), ref(d)), []*ir.Index{d}, true},
		{"a split row's chunk", load(X, ref(r), add(mul(ref(chunk), c(256)), ref(part))), []*ir.Index{part}, true},
		{"a group's channels", load(G, ref(n), add(mul(ref(g), c(8)), ref(j)), ref(h), ref(w)), []*ir.Index{j, h, w}, true},
		{"axes out of order", load(G, ref(n), add(mul(ref(g), c(8)), ref(j)), ref(h), ref(w)), []*ir.Index{h, j, w}, false},
		{"a stride of 2", load(X, ref(r), mul(c(2), ref(half))), []*ir.Index{half}, false},
		{"a transposed read", load(X, ref(rows), ref(r)), []*ir.Index{rows}, false},
		{"a square", load(X, ref(r), mul(ref(part), ref(part))), []*ir.Index{part}, false},
		{"a broadcast axis", load(W, ref(d)), []*ir.Index{r, d}, false},
		{"a first axis of unknown extent", load(G, ref(n), ref(g), ref(unknown), ref(w)), []*ir.Index{unknown, w}, true},
		{"a last axis of unknown extent", load(S, ref(a), ref(unknown)), []*ir.Index{a, unknown}, false},
	} {
		if got := lower.Contiguous(tc.l, tc.axes); got != tc.want {
			t.Errorf("%s: Contiguous %v, want %v", tc.what, got, tc.want)
		}
	}
}
