package interp

import (
	"testing"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// Tiny IR constructors, so that tests state kernels the way the checker
// would produce them (every conversion explicit).

func kernel(name string) *ir.Kernel { return &ir.Kernel{Name: name} }

func dim(k *ir.Kernel, name string) *ir.Dim {
	d := &ir.Dim{Name: name}
	k.Dims = append(k.Dims, d)
	return d
}

func derived(k *ir.Kernel, name string, def ir.Expr) *ir.Dim {
	d := &ir.Dim{Name: name, Def: def}
	k.Dims = append(k.Dims, d)
	return d
}

func param(k *ir.Kernel, name string, dt ir.DType, def *ir.Const) *ir.Param {
	p := &ir.Param{Name: name, Type: dt, Default: def}
	k.Params = append(k.Params, p)
	return p
}

func tens(name string, kind ir.TensorKind, dt ir.DType, shape []ir.Expr) *ir.Tensor {
	return &ir.Tensor{Name: name, Kind: kind, DType: dt, Shape: shape}
}

func input(k *ir.Kernel, name string, dt ir.DType, shape ...ir.Expr) *ir.Tensor {
	t := tens(name, ir.Input, dt, shape)
	k.Inputs = append(k.Inputs, t)
	return t
}

func output(k *ir.Kernel, name string, dt ir.DType, shape ...ir.Expr) *ir.Tensor {
	t := tens(name, ir.Output, dt, shape)
	k.Outputs = append(k.Outputs, t)
	return t
}

func let(k *ir.Kernel, name string, dt ir.DType, shape ...ir.Expr) *ir.Tensor {
	t := tens(name, ir.Let, dt, shape)
	k.Lets = append(k.Lets, t)
	return t
}

// idx makes a loop index over [lo, hi).
func idx(name string, lo, hi ir.Expr) *ir.Index { return &ir.Index{Name: name, Lo: lo, Hi: hi} }

// over makes the indices of a statement writing t: one per dimension, over
// [0, extent).
func over(t *ir.Tensor, names ...string) []*ir.Index {
	ix := make([]*ir.Index, len(names))
	for i, n := range names {
		ix[i] = idx(n, ic(0), t.Shape[i])
	}
	return ix
}

func stmt(k *ir.Kernel, t *ir.Tensor, ix []*ir.Index, v ir.Expr) {
	k.Stmts = append(k.Stmts, &ir.Stmt{Target: t, Index: ix, Value: v})
}

func ic(v int64) ir.Expr                 { return ir.IntConst(v) }
func fc(v float64) ir.Expr               { return ir.FloatConst(ir.F32, v) }
func fc64(v float64) ir.Expr             { return ir.FloatConst(ir.F64, v) }
func dr(d *ir.Dim) ir.Expr               { return &ir.DimRef{Dim: d} }
func pr(p *ir.Param) ir.Expr             { return &ir.ParamRef{Param: p} }
func ref(i *ir.Index) ir.Expr            { return &ir.IndexRef{Index: i} }
func cast(t ir.DType, x ir.Expr) ir.Expr { return &ir.Cast{X: x, T: t} }

func load(t *ir.Tensor, ix ...ir.Expr) *ir.Load { return &ir.Load{Tensor: t, Index: ix} }

func loadOr(t *ir.Tensor, def ir.Expr, ix ...ir.Expr) *ir.Load {
	return &ir.Load{Tensor: t, Index: ix, Default: def}
}

func bin(op ir.Op, x, y ir.Expr) ir.Expr { return &ir.Binary{Op: op, X: x, Y: y} }
func add(x, y ir.Expr) ir.Expr           { return bin(ir.Add, x, y) }
func sub(x, y ir.Expr) ir.Expr           { return bin(ir.Sub, x, y) }
func mul(x, y ir.Expr) ir.Expr           { return bin(ir.Mul, x, y) }
func div(x, y ir.Expr) ir.Expr           { return bin(ir.Div, x, y) }
func mod(x, y ir.Expr) ir.Expr           { return bin(ir.Mod, x, y) }
func lt(x, y ir.Expr) ir.Expr            { return bin(ir.Lt, x, y) }

func sel(c, x, y ir.Expr) ir.Expr { return &ir.Select{Cond: c, X: x, Y: y} }

func call(fn ir.Builtin, t ir.DType, args ...ir.Expr) ir.Expr {
	return &ir.Call{Fn: fn, T: t, Args: args}
}

func reduce(op ir.ReduceOp, t ir.DType, axes []*ir.Index, body ir.Expr) ir.Expr {
	return &ir.Reduce{Op: op, T: t, Axes: axes, Body: body}
}

func sum(t ir.DType, axes []*ir.Index, body ir.Expr) ir.Expr {
	return reduce(ir.Sum, t, axes, body)
}

func axes(ix ...*ir.Index) []*ir.Index { return ix }

// verified fails the test if k does not pass the IR verifier, so that the
// kernels tested are ones the checker could produce.
func verified(t testing.TB, k *ir.Kernel) *ir.Kernel {
	t.Helper()
	for _, err := range ir.Verify(k) {
		t.Errorf("IR does not verify: %v", err)
	}
	if t.Failed() {
		t.FailNow()
	}
	return k
}

func bind(t testing.TB, k *ir.Kernel, dims map[string]int64, params map[string]*ir.Const) *ir.Env {
	t.Helper()
	env, err := ir.Bind(k, dims, params)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func run(t testing.TB, k *ir.Kernel, env *ir.Env, ins ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	outs, err := Run(k, env, ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// fromFloats makes a tensor holding vs, rounded to dt.
func fromFloats(dt ir.DType, shape []int64, vs ...float64) *tensor.Tensor {
	t := tensor.New(dt, shape)
	if int64(len(vs)) != t.Len() {
		panic("fromFloats: wrong number of values")
	}
	for i, v := range vs {
		t.SetFloat(int64(i), v)
	}
	return t
}

func fromInts(dt ir.DType, shape []int64, vs ...int64) *tensor.Tensor {
	t := tensor.New(dt, shape)
	if int64(len(vs)) != t.Len() {
		panic("fromInts: wrong number of values")
	}
	for i, v := range vs {
		t.SetInt(int64(i), v)
	}
	return t
}

func floats(t *tensor.Tensor) []float64 {
	vs := make([]float64, t.Len())
	for i := range vs {
		vs[i] = t.Float(int64(i))
	}
	return vs
}

func ints(t *tensor.Tensor) []int64 {
	vs := make([]int64, t.Len())
	for i := range vs {
		vs[i] = t.Int(int64(i))
	}
	return vs
}
