package lower_test

import (
	"math"
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

const colSpec = `
kernel sum_cols<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = sum[r](X[r, d])
}

kernel mean_dim1<NB, R, D>(X: bf16[NB, R, D], bias: f32[D]) -> (Y: bf16[NB, D]) {
  Y[b, d] = sum[r](X[b, r, d]) / R + bias[d]
}

kernel max_cols<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = max[r](X[r, d])
}

kernel vecmat<M, K>(x: f32[M], A: f32[M, K]) -> (y: f32[K]) {
  y[k] = sum[m](x[m] * A[m, k])
}

kernel sum_rows<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}

kernel sum_all<R, D>(X: f32[R, D]) -> (total: f32) {
  total = sum[r, d](X[r, d])
}

kernel conv1x1<N, C, F, W>(X: f32[N, C, W], Wt: f32[F, C]) -> (Y: f32[N, F, W]) {
  Y[n, f, w] = sum[c](X[n, c, w] * Wt[f, c])
}

kernel shared_matrix<NB, M, K>(X: f32[M, K], w: f32[NB, M]) -> (Y: f32[NB, K]) {
  Y[b, k] = sum[m](exp(X[m, k]) * w[b, m])
}

kernel middle<R, D, E>(X: f32[R, D, E]) -> (Y: f32[D]) {
  Y[d] = sum[r, e](X[r, d, e])
}

kernel guarded<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = d > 0 ? sum[r](X[r, d - 1]) : 0
}

kernel two<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = sum[r](X[r, d]) + max[r](X[r, d])
}

kernel clash<R, D>(X: f32[R, D], Y_part: f32[D]) -> (Y: f32[D]) {
  Y[d] = sum[chunk](X[chunk, d]) + Y_part[d]
}

instance sum_cols_4k = sum_cols<R = 4096, D = 4096>
instance mean_tall = mean_dim1<NB = 1, R = 65536, D = 16>
instance max_tall = max_cols<R = 5001, D = 6>
instance clash_tall = clash<R = 3000, D = 2>
instance vecmat_4k = vecmat<M = 4096, K = 4096>
`

func checkCols(t *testing.T) *ir.Program {
	t.Helper()
	prog, diags := frontend.CheckSource("cols.kg", colSpec)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	return prog
}

// templatesOf plans k (symbolic) or instance name and lists each launch
// as NAME:TEMPLATE.
func templatesOf(t *testing.T, prog *ir.Program, name string) string {
	t.Helper()
	var p *lower.Plan
	var err error
	if in := prog.Instance(name); in != nil {
		p, err = lower.Build(in.Kernel, in.Env, name, lower.Limits{})
	} else {
		p, err = lower.Build(prog.Kernel(name), nil, name, lower.Limits{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return launchTemplates(p)
}

// launchTemplates lists p's launches as NAME:TEMPLATE.
func launchTemplates(p *lower.Plan) string {
	var out []string
	for _, l := range p.Launches {
		out = append(out, l.Name+":"+l.Template.Name())
	}
	return strings.Join(out, " ")
}

// TestColReduceChosen: reductions over outer axes whose columns are
// contiguous, each input element read by one output point, take
// col-reduce; row reductions, matrix products in disguise (an operand read
// again for every value of an output index), columns that are not the
// inner dimension, guarded and multiple reductions do not.
func TestColReduceChosen(t *testing.T) {
	prog := checkCols(t)
	cases := []struct{ name, want string }{
		{"sum_cols", "sum_cols:col-reduce"},
		{"mean_dim1", "mean_dim1:col-reduce"},
		{"max_cols", "max_cols:col-reduce"},
		{"vecmat", "vecmat:col-reduce"},
		{"sum_cols_4k", "sum_cols_4k:col-reduce"},
		{"vecmat_4k", "vecmat_4k:col-reduce"},
		{"sum_rows", "sum_rows:row-reduce"},
		{"sum_all", "sum_all:row-reduce"},
		{"conv1x1", "conv1x1:igemm-simt"}, // a matrix product in disguise
		{"shared_matrix", "shared_matrix:generic"},
		{"middle", "middle:generic"},
		{"guarded", "guarded:generic"},
		{"two", "two:generic"},
	}
	for _, c := range cases {
		if got := templatesOf(t, prog, c.name); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestColReduceSplit: an instance with too few columns to fill the GPU
// and a long reduction is planned as two col-reduce launches through a
// workspace let of partial results; the planned kernel computes what the
// checked one does (exactly for max, to rounding for sums, in the
// interpreter's float64). Kernels with symbolic sizes and instances with
// enough columns are not split, and the new names avoid the kernel's.
func TestColReduceSplit(t *testing.T) {
	prog := checkCols(t)
	for name, want := range map[string]string{
		"mean_tall":   "mean_tall_0_Y_part:col-reduce mean_tall_1_Y:col-reduce",
		"max_tall":    "max_tall_0_Y_part:col-reduce max_tall_1_Y:col-reduce",
		"clash_tall":  "clash_tall_0_Y_part2:col-reduce clash_tall_1_Y:col-reduce",
		"sum_cols_4k": "sum_cols_4k:col-reduce",
		"mean_dim1":   "mean_dim1:col-reduce",
	} {
		if got := templatesOf(t, prog, name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"mean_tall", "max_tall", "clash_tall"} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if name == "clash_tall" && !strings.Contains(lower.Print(p), "let Y_part2[chunk2 in 0..") {
			t.Errorf("clash_tall: the partials clash with the kernel's names:\n%s", lower.Print(p))
		}
		samePlan(t, in, p, 3, 1e-12)
	}
}

// samePlan runs instance in's kernel and plan p's (a rewrite of it) in
// the interpreter on the same inputs (normal, seed) and reports elements
// of the first output further apart than tol, relative.
func samePlan(t *testing.T, in *ir.Instance, p *lower.Plan, seed uint64, tol float64) {
	t.Helper()
	inputs, err := interp.RandomInputs(in.Kernel, in.Env, tensor.Normal, seed)
	if err != nil {
		t.Fatal(err)
	}
	samePlanOn(t, in, p, inputs, tol)
}

// samePlanOn is samePlan on the given inputs.
func samePlanOn(t *testing.T, in *ir.Instance, p *lower.Plan, inputs []*tensor.Tensor, tol float64) {
	t.Helper()
	want, err := interp.Run(in.Kernel, in.Env, inputs, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := runPlan(p, in.Env, inputs)
	if err != nil {
		t.Fatalf("%s: %v", in.Name, err)
	}
	for j := int64(0); j < want[0].Len(); j++ {
		if g, w := got[0].Float(j), want[0].Float(j); math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: element %d: plan %v, kernel %v", in.Name, j, g, w)
		}
	}
}

// runPlan runs a plan's own kernel in the interpreter on the inputs of
// its source kernel, each viewed at the plan's shape (the same row-major
// data: collapseAxes may merge dimensions).
func runPlan(p *lower.Plan, env *ir.Env, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	penv := p.Bind(env)
	var in []*tensor.Tensor
	for i, x := range inputs {
		shape, err := penv.Shape(p.Kernel.Inputs[i])
		if err != nil {
			return nil, err
		}
		y := *x
		y.Shape = shape
		in = append(in, &y)
	}
	return interp.Run(p.Kernel, penv, in, interp.Options{})
}
