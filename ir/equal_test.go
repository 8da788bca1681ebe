package ir

import "testing"

func TestEqual(t *testing.T) {
	n, m := dim("N"), dim("M")
	x := tensor("X", Input, F32, size(m), size(n))
	y := tensor("Y", Input, F32, size(m), size(n))
	i := idx("i", size(m))
	// sum[a](X[i, a]) built with fresh axes each time, as fn inlining and
	// Clone make them.
	rowSum := func(tn *Tensor, hi Expr) Expr {
		a := idx("a", hi)
		return sum(load(tn, ref(i), ref(a)), a)
	}
	cases := []struct {
		name string
		a, b Expr
		want bool
	}{
		{"same sum, fresh axes", rowSum(x, size(n)), rowSum(x, size(n)), true},
		{"another tensor", rowSum(x, size(n)), rowSum(y, size(n)), false},
		{"another range", rowSum(x, size(n)), rowSum(x, size(m)), false},
		{"another op", rowSum(x, size(n)), &Reduce{Op: Max, Axes: []*Index{idx("a", size(n))}, Body: load(x, ref(i), lit(0)), T: F32}, false},
		{"free index differs", load(x, ref(i), lit(1)), load(x, ref(idx("i", size(m))), lit(1)), false},
		{"nested, bound", add(rowSum(x, size(n)), lit(1)), add(rowSum(x, size(n)), lit(1)), true},
		{"operands swapped", add(rowSum(x, size(n)), lit(1)), add(lit(1), rowSum(x, size(n))), false},
		{"float constants", FloatConst(F32, 0.5), FloatConst(F32, 0.5), true},
		{"signed zeros", FloatConst(F32, 0), FloatConst(F32, negZero()), false},
		{"constant types", FloatConst(F32, 1), FloatConst(F64, 1), false},
	}
	for _, c := range cases {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("%s: Equal(%s, %s) = %v, want %v", c.name, Format(c.a), Format(c.b), got, c.want)
		}
	}
	// sum[a](X[i, a] * sum[b](Y[a, b])): the inner sum reads the outer
	// axis, so two copies are equal only through the outer binding; read
	// at i instead, it is another expression.
	nested := func(innerReadsOuter bool) Expr {
		a, b := idx("a", size(n)), idx("b", size(n))
		row := ref(a)
		if !innerReadsOuter {
			row = ref(i)
		}
		return sum(mul(load(x, ref(i), ref(a)), sum(load(y, row, ref(b)), b)), a)
	}
	if !Equal(nested(true), nested(true)) {
		t.Error("nested sums reading the outer axis: not equal")
	}
	if Equal(nested(true), nested(false)) {
		t.Error("an inner sum reading the outer axis equals one reading i")
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestShareReductions(t *testing.T) {
	n, m := dim("N"), dim("M")
	x := tensor("X", Input, F32, size(m), size(n))
	out := tensor("Z", Output, F32, size(m))
	i := idx("i", size(m))
	rowSum := func(tn *Tensor) Expr {
		a := idx("a", size(n))
		return sum(load(tn, ref(i), ref(a)), a)
	}
	s := stmt(out, mul(rowSum(x), add(rowSum(x), &Reduce{Op: Max, Axes: []*Index{idx("a", size(n))}, Body: load(x, ref(i), lit(0)), T: F32})), i)
	k := &Kernel{Name: "k", Dims: []*Dim{m, n}, Inputs: []*Tensor{x}, Outputs: []*Tensor{out}, Stmts: []*Stmt{s}}
	ShareReductions(k)
	rs := TopReductions(s.Value)
	if len(rs) != 2 || rs[0].Op != Sum || rs[1].Op != Max {
		t.Fatalf("after ShareReductions, %s has top reductions %v; want one sum and one max", Format(s.Value), rs)
	}
	product := s.Value.(*Binary)
	if product.X != product.Y.(*Binary).X {
		t.Errorf("the two sums of %s are still two nodes", Format(s.Value))
	}
}
