package ir

import (
	"math"
	"strings"
	"testing"
)

// Small constructors, so that a test reads like the IR it builds.

func dim(name string) *Dim            { return &Dim{Name: name} }
func size(d *Dim) Expr                { return &DimRef{Dim: d} }
func idx(name string, hi Expr) *Index { return &Index{Name: name, Lo: IntConst(0), Hi: hi} }
func ref(ix *Index) Expr              { return &IndexRef{Index: ix} }
func lit(v int64) Expr                { return IntConst(v) }
func add(x, y Expr) Expr              { return &Binary{Op: Add, X: x, Y: y} }
func sub(x, y Expr) Expr              { return &Binary{Op: Sub, X: x, Y: y} }
func mul(x, y Expr) Expr              { return &Binary{Op: Mul, X: x, Y: y} }
func sum(body Expr, axes ...*Index) Expr {
	return &Reduce{Op: Sum, Axes: axes, Body: body, T: body.Type()}
}
func load(t *Tensor, ix ...Expr) *Load { return &Load{Tensor: t, Index: ix} }
func tensor(name string, kind TensorKind, dt DType, shape ...Expr) *Tensor {
	return &Tensor{Name: name, Kind: kind, DType: dt, Shape: shape}
}
func stmt(t *Tensor, value Expr, ix ...*Index) *Stmt {
	return &Stmt{Target: t, Index: ix, Value: value}
}

// matmulKernel is C[m, n] = sum[k](A[m, k] * B[k, n]).
func matmulKernel() (*Kernel, *Dim, *Dim, *Dim) {
	M, N, K := dim("M"), dim("N"), dim("K")
	A := tensor("A", Input, F32, size(M), size(K))
	B := tensor("B", Input, F32, size(K), size(N))
	C := tensor("C", Output, F32, size(M), size(N))
	m, n, k := idx("m", size(M)), idx("n", size(N)), idx("k", size(K))
	return &Kernel{
		Name: "matmul", Dims: []*Dim{M, N, K}, Inputs: []*Tensor{A, B}, Outputs: []*Tensor{C},
		Stmts: []*Stmt{stmt(C, sum(mul(load(A, ref(m), ref(k)), load(B, ref(k), ref(n))), k), m, n)},
	}, M, N, K
}

func TestClassify(t *testing.T) {
	R, D := dim("R"), dim("D")
	X := tensor("X", Input, F32, size(R), size(D))
	Y := tensor("Y", Output, F32, size(R))
	r, d := idx("r", size(R)), idx("d", size(D))
	col := tensor("col", Output, F32, size(D))
	r2, d2 := idx("r", size(R)), idx("d", size(D))
	H := dim("H")
	img := tensor("img", Input, F32, size(H))
	out := tensor("out", Output, F32, size(H))
	h, kh := idx("h", size(H)), idx("kh", lit(3))
	conv := stmt(out, sum(&Load{Tensor: img, Index: []Expr{sub(add(ref(h), ref(kh)), lit(1))}, Default: FloatConst(F32, 0)}, kh), h)
	i, j := idx("i", size(R)), idx("j", size(D))
	mm, _, _, _ := matmulKernel()
	cases := []struct {
		s    *Stmt
		want StmtKind
	}{
		{mm.Stmts[0], Contraction},
		{stmt(Y, sum(load(X, ref(r), ref(d)), d), r), InnerReduction},
		{stmt(col, sum(load(X, ref(r2), ref(d2)), r2), d2), OuterReduction},
		{conv, ConvLike},
		{stmt(tensor("Z", Output, F32, size(R), size(D)), add(load(X, ref(i), ref(j)), load(Y, ref(i))), i, j), Elementwise},
	}
	for _, c := range cases {
		if got := Classify(c.s); got != c.want {
			t.Errorf("Classify(%s) = %v, want %v", Format(c.s.Value), got, c.want)
		}
	}
}

func TestDepsAndInlinable(t *testing.T) {
	N := dim("N")
	X := tensor("X", Input, F32, size(N))
	sq := tensor("sq", Let, F32, size(N))
	tot := tensor("tot", Let, F32)
	Y := tensor("Y", Output, F32, size(N))
	i1, i2, j := idx("i", size(N)), idx("i", size(N)), idx("j", size(N))
	k := &Kernel{Name: "norm", Dims: []*Dim{N}, Inputs: []*Tensor{X}, Outputs: []*Tensor{Y}, Lets: []*Tensor{sq, tot},
		Stmts: []*Stmt{
			stmt(sq, mul(load(X, ref(i1)), load(X, ref(i1))), i1),
			stmt(tot, sum(load(sq, ref(j)), j)),
			stmt(Y, add(load(X, ref(i2)), load(tot)), i2),
		}}
	if errs := Verify(k); len(errs) > 0 {
		t.Fatal(errs)
	}
	got := Deps(k)
	want := [][]int{nil, {0}, {1}}
	for s := range want {
		if len(got[s]) != len(want[s]) || (len(want[s]) > 0 && got[s][0] != want[s][0]) {
			t.Errorf("Deps[%d] = %v, want %v", s, got[s], want[s])
		}
	}
	if ok, why := Inlinable(k, sq); !ok {
		t.Errorf("elementwise let not inlinable: %s", why)
	}
	if ok, why := Inlinable(k, tot); ok || !strings.Contains(why, "reduction") {
		t.Errorf("reduction let inlinable (%v): %s", ok, why)
	}
}

func TestOutOfRange(t *testing.T) {
	N := dim("N")
	X := tensor("X", Input, F32, size(N))
	mk := func(value func(i *Index) Expr) *Kernel {
		Y := tensor("Y", Output, F32, size(N))
		i := idx("i", size(N))
		return &Kernel{Name: "shift", Dims: []*Dim{N}, Inputs: []*Tensor{X}, Outputs: []*Tensor{Y}, Stmts: []*Stmt{stmt(Y, value(i), i)}}
	}
	bind := func(k *Kernel) *Env {
		env, err := Bind(k, map[string]int64{"N": 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	// X[i + 1] reaches 10 at i = 9.
	k := mk(func(i *Index) Expr { return load(X, add(ref(i), lit(1))) })
	v := OutOfRange(k, bind(k))
	if len(v) != 1 || v[0].Lo != 1 || v[0].Hi != 10 || v[0].Extent != 10 {
		t.Errorf("X[i + 1]: got %+v, want one violation 1..10 against 10", v)
	}
	// With a default, or halved, or under a condition, it is fine.
	for name, value := range map[string]func(*Index) Expr{
		"default": func(i *Index) Expr {
			return &Load{Tensor: X, Index: []Expr{add(ref(i), lit(1))}, Default: FloatConst(F32, 0)}
		},
		"halved": func(i *Index) Expr { return load(X, &Binary{Op: Div, X: add(ref(i), lit(1)), Y: lit(2)}) },
		"guarded": func(i *Index) Expr {
			return &Select{Cond: &Binary{Op: Lt, X: ref(i), Y: lit(9)}, X: load(X, add(ref(i), lit(1))), Y: FloatConst(F32, 0)}
		},
	} {
		k := mk(value)
		if v := OutOfRange(k, bind(k)); len(v) != 0 {
			t.Errorf("%s: unexpected violations %+v", name, v)
		}
	}
}

func TestBindDerived(t *testing.T) {
	H, KH := dim("H"), dim("KH")
	stride := &Param{Name: "stride", Type: I32, Default: &Const{T: I32, I: 1}}
	// OH = (H + 2 - KH) / stride + 1
	OH := &Dim{Name: "OH", Def: add(&Binary{Op: Div, X: sub(add(size(H), lit(2)), size(KH)), Y: &Cast{X: &ParamRef{Param: stride}, T: I64}}, lit(1))}
	k := &Kernel{Name: "k", Dims: []*Dim{H, KH, OH}, Params: []*Param{stride}}
	env, err := Bind(k, map[string]int64{"H": 56, "KH": 3}, map[string]*Const{"stride": {T: I32, I: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Dims[OH]; got != 28 { // (56 + 2 - 3) / 2 + 1 = 27 + 1
		t.Errorf("OH = %d, want 28", got)
	}
	env, err = Bind(k, map[string]int64{"H": 56, "KH": 3}, nil)
	if err != nil || env.Dims[OH] != 56 {
		t.Errorf("default stride: OH = %v, %v; want 56", env, err)
	}
	if _, err := Bind(k, map[string]int64{"H": 56}, nil); err == nil || !strings.Contains(err.Error(), "KH") {
		t.Errorf("missing KH: %v", err)
	}
	if _, err := Bind(k, map[string]int64{"H": 56, "KH": 3, "W": 1}, nil); err == nil || !strings.Contains(err.Error(), `"W"`) {
		t.Errorf("unknown W: %v", err)
	}
	if _, err := Bind(k, map[string]int64{"H": 1, "KH": 9}, nil); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative OH: %v", err)
	}
}

func TestIntOpFloor(t *testing.T) {
	for _, c := range []struct {
		op         Op
		x, y, want int64
	}{
		{Div, -7, 2, -4}, {Mod, -7, 2, 1}, {Div, 7, -2, -4}, {Mod, 7, -2, -1}, {Div, 7, 2, 3}, {Mod, 6, 3, 0}, {Div, -6, 3, -2},
	} {
		if got, err := IntOp(c.op, c.x, c.y); err != nil || got != c.want {
			t.Errorf("%d %s %d = %d (%v), want %d", c.x, c.op, c.y, got, err, c.want)
		}
	}
	if _, err := IntOp(Div, 1, 0); err == nil {
		t.Errorf("division by zero gave no error")
	}
}

func TestVerifyCatches(t *testing.T) {
	k, _, _, _ := matmulKernel()
	if errs := Verify(k); len(errs) != 0 {
		t.Fatalf("matmul: %v", errs)
	}
	// Mixed operand types.
	k, _, _, _ = matmulKernel()
	s := k.Stmts[0]
	s.Value.(*Reduce).Body = mul(load(k.Inputs[0], s.Value.(*Reduce).Axes[0].Lo, s.Value.(*Reduce).Axes[0].Lo), IntConst(2))
	if errs := Verify(k); len(errs) == 0 {
		t.Errorf("f32 * i64 verified")
	}
	// An output never written.
	k, _, _, _ = matmulKernel()
	k.Stmts = nil
	if errs := Verify(k); len(errs) != 1 || !strings.Contains(errs[0].Error(), "never written") {
		t.Errorf("unwritten output: %v", errs)
	}
	// An index used outside its reduction.
	k, _, _, _ = matmulKernel()
	red := k.Stmts[0].Value.(*Reduce)
	k.Stmts[0].Value = load(k.Inputs[0], ref(k.Stmts[0].Index[0]), ref(red.Axes[0]))
	if errs := Verify(k); len(errs) == 0 {
		t.Errorf("escaped reduction index verified")
	}
}

func TestFold(t *testing.T) {
	N := dim("N")
	X := tensor("X", Input, I8, size(N))
	Y := tensor("Y", Output, I8, size(N))
	i := idx("i", add(size(N), mul(lit(2), lit(3))))
	cond := &Binary{Op: Lt, X: lit(1), Y: lit(2)}
	value := &Select{Cond: cond, X: &Cast{T: I8, X: &Cast{T: I64, X: load(X, ref(i))}}, Y: &Const{T: I8}}
	k := &Kernel{Name: "k", Dims: []*Dim{N}, Inputs: []*Tensor{X}, Outputs: []*Tensor{Y}, Stmts: []*Stmt{stmt(Y, value, i)}}
	if err := RunPasses(k, ""); err != nil {
		t.Fatal(err)
	}
	if got := Format(k.Stmts[0].Value); got != "X[i]" {
		t.Errorf("folded value = %s, want X[i]", got)
	}
	if got := Format(k.Stmts[0].Index[0].Hi); got != "N + 6" {
		t.Errorf("folded range = %s, want N + 6", got)
	}
}

// TestFoldPowSquare: pow(x, 2) folds to x * x, with x copied (the two
// operands are separate trees), and other exponents stay pow.
func TestFoldPowSquare(t *testing.T) {
	N := dim("N")
	X := tensor("X", Input, F64, size(N))
	Y := tensor("Y", Output, F64, size(N))
	Z := tensor("Z", Output, F64, size(N))
	i, j := idx("i", size(N)), idx("j", size(N))
	two := &Const{T: F64, F: 2}
	square := &Call{Fn: Pow, T: F64, Args: []Expr{&Call{Fn: Abs, T: F64, Args: []Expr{load(X, ref(i))}}, two}}
	cube := &Call{Fn: Pow, T: F64, Args: []Expr{load(X, ref(j)), &Const{T: F64, F: 3}}}
	k := &Kernel{Name: "k", Dims: []*Dim{N}, Inputs: []*Tensor{X}, Outputs: []*Tensor{Y, Z}, Stmts: []*Stmt{stmt(Y, square, i), stmt(Z, cube, j)}}
	if err := RunPasses(k, ""); err != nil {
		t.Fatal(err)
	}
	if got := Format(k.Stmts[0].Value); got != "abs(X[i]) * abs(X[i])" {
		t.Errorf("pow(abs(X[i]), 2) folded to %s, want abs(X[i]) * abs(X[i])", got)
	}
	if b, ok := k.Stmts[0].Value.(*Binary); !ok || b.X == b.Y {
		t.Errorf("the square's operands share one tree")
	}
	if got := Format(k.Stmts[1].Value); got != "pow(X[j], f64(3.0))" {
		t.Errorf("pow(X[j], 3) became %s", got)
	}
	// The premise, checked with Go's own pow: x * x is pow(x, 2) at the
	// special values and at values whose square rounds.
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e200, -1e-200, 3, 1.1, -0.7, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		if p, m := math.Pow(x, 2), x*x; math.Float64bits(p) != math.Float64bits(m) && !(math.IsNaN(p) && math.IsNaN(m)) {
			t.Errorf("pow(%g, 2) = %g, x * x = %g", x, p, m)
		}
	}
}

// TestFoldDivByPowerOfTwo: x / c folds to x * (1 / c) where c is ±2^k
// and 1 / c a normal number of c's type; other divisors stay.
func TestFoldDivByPowerOfTwo(t *testing.T) {
	N := dim("N")
	X := tensor("X", Input, F32, size(N))
	for _, c := range []struct {
		c    *Const
		want string
	}{
		{&Const{T: F32, F: 0.5}, "X[i] * 2.0"},
		{&Const{T: F32, F: 4096}, "X[i] * 0.00024414063"},
		{&Const{T: F32, F: -4}, "X[i] * -0.25"},
		{&Const{T: F32, F: 0.7}, "X[i] / 0.7"},
		{&Const{T: F32, F: 3}, "X[i] / 3.0"},
		{&Const{T: F32, F: 0}, "X[i] / 0.0"},
		{&Const{T: F32, F: math.Ldexp(1, 127)}, "X[i] / 1.7014118e+38"}, // 2^-127 is subnormal
		{&Const{T: F32, F: math.Ldexp(1, -126)}, "X[i] * 8.507059e+37"},
	} {
		Y := tensor("Y", Output, F32, size(N))
		i := idx("i", size(N))
		k := &Kernel{Name: "k", Dims: []*Dim{N}, Inputs: []*Tensor{X}, Outputs: []*Tensor{Y}, Stmts: []*Stmt{stmt(Y, &Binary{Op: Div, X: load(X, ref(i)), Y: c.c}, i)}}
		if err := RunPasses(k, ""); err != nil {
			t.Fatal(err)
		}
		if got := Format(k.Stmts[0].Value); got != c.want {
			t.Errorf("X[i] / %g: %s, want %s", c.c.F, got, c.want)
		}
	}
	// The premise, in float32 arithmetic: x / 2^k and x * 2^-k are the
	// same float, subnormal results, infinities, NaN and zeros included.
	xs := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-40, -3e-39, 1.5, -7.25e-20, 3.4e38}
	for u := uint32(1); u < 1<<32-1<<20; u += 1<<20 + 12345 {
		xs = append(xs, math.Float32frombits(u))
	}
	for k := -126; k <= 126; k++ {
		c := float32(math.Ldexp(1, k))
		r := 1 / c
		for _, x := range xs {
			q, m := x/c, x*r
			if math.Float32bits(q) != math.Float32bits(m) && !(q != q && m != m) {
				t.Fatalf("%g / 2^%d = %g, * 2^%d = %g", x, k, q, -k, m)
			}
		}
	}
}

// TestFoldIntegerIdentities: an integer x + 0, 0 + x and x - 0 fold to
// x, and a float of an integer widened exactly converts the integer
// itself (dequantize's f32(i64(Q) - 0) is f32(Q)); a float's x + 0.0, a
// widening that is not exact (u8 to i8) and a conversion of i64 stay.
func TestFoldIntegerIdentities(t *testing.T) {
	N := dim("N")
	Q := tensor("Q", Input, I8, size(N))
	U := tensor("U", Input, U8, size(N))
	L := tensor("L", Input, I64, size(N))
	F := tensor("F", Input, F32, size(N))
	zero := func() *Const { return &Const{T: I64} }
	wide := func(x Expr) Expr { return &Cast{T: I64, X: x} }
	for _, c := range []struct {
		value func(i *Index) Expr
		want  string
	}{
		{func(i *Index) Expr { return &Cast{T: F32, X: &Binary{Op: Sub, X: wide(load(Q, ref(i))), Y: zero()}} }, "f32(Q[i])"},
		{func(i *Index) Expr { return &Cast{T: F32, X: &Binary{Op: Add, X: zero(), Y: wide(load(Q, ref(i)))}} }, "f32(Q[i])"},
		{func(i *Index) Expr { return &Cast{T: F64, X: wide(load(U, ref(i)))} }, "f64(U[i])"},
		{func(i *Index) Expr { return &Cast{T: F32, X: &Cast{T: I8, X: load(U, ref(i))}} }, "f32(i8(U[i]))"},
		{func(i *Index) Expr { return &Cast{T: F32, X: load(L, ref(i))} }, "f32(L[i])"},
		{func(i *Index) Expr { return &Binary{Op: Sub, X: zero(), Y: load(L, ref(i))} }, "0 - L[i]"},
		{func(i *Index) Expr { return &Binary{Op: Add, X: load(F, ref(i)), Y: &Const{T: F32}} }, "F[i] + 0.0"},
	} {
		i := idx("i", size(N))
		v := c.value(i)
		Y := tensor("Y", Output, v.Type(), size(N))
		k := &Kernel{Name: "k", Dims: []*Dim{N}, Inputs: []*Tensor{Q, U, L, F}, Outputs: []*Tensor{Y}, Stmts: []*Stmt{stmt(Y, v, i)}}
		before := Format(k.Stmts[0].Value)
		if err := RunPasses(k, ""); err != nil {
			t.Fatal(err)
		}
		if got := Format(k.Stmts[0].Value); got != c.want {
			t.Errorf("%s folded to %s, want %s", before, got, c.want)
		}
	}
	// The premise: every i8 and u8 value is exact in i64 and converts to
	// the same float from either; u8 values above 127 are not i8 values.
	for v := -128; v < 256; v++ {
		if float32(int64(v)) != float32(v) || float64(int64(v)) != float64(v) {
			t.Fatalf("%d converts differently from i64", v)
		}
	}
	u := uint8(200)
	if float32(int8(u)) == float32(u) {
		t.Fatalf("u8 200 is an i8")
	}
}

func TestHashIgnoresNames(t *testing.T) {
	a, _, _, _ := matmulKernel()
	b, _, _, _ := matmulKernel()
	b.Name, b.Inputs[0].Name, b.Dims[0].Name, b.Stmts[0].Index[0].Name = "other", "P", "Rows", "row"
	if Hash(a) != Hash(b) {
		t.Errorf("renaming changed the hash:\n%s\n%s", CanonicalText(a), CanonicalText(b))
	}
	c, _, _, _ := matmulKernel()
	c.Stmts[0].Value.(*Reduce).Op = Max
	if Hash(a) == Hash(c) {
		t.Errorf("sum and max hash alike")
	}
}

func TestHashIgnoresTuneOnly(t *testing.T) {
	a, _, _, _ := matmulKernel()
	b, _, _, _ := matmulKernel()
	b.Attrs = append(b.Attrs, &Attr{Name: "tune", Args: []AttrArg{{Key: "BM", Values: []string{"64"}, List: true}}})
	if Hash(a) != Hash(b) {
		t.Errorf("@tune changed the hash:\n%s\n%s", CanonicalText(a), CanonicalText(b))
	}
	c, _, _, _ := matmulKernel()
	c.Attrs = append(c.Attrs, &Attr{Name: "acc", Args: []AttrArg{{Values: []string{"f64"}}}})
	if Hash(a) == Hash(c) {
		t.Errorf("@acc(f64) did not change the hash")
	}
}
