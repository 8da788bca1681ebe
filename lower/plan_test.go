package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

const spec = `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let e[r, d] = exp(X[r, d] - mx[r])
  let den[r] = sum[d](e[r, d])
  Y[r, d] = e[r, d] / den[r]
}

kernel centered<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let cs[d] = sum[r](X[r, d])
  let rm[r] = max[d](X[r, d])
  Y[r, d] = X[r, d] - cs[d] - rm[r]
}

kernel guarded<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = r > 0 ? max[d](X[r - 1, d]) : 0
}

kernel shifted<N>(X: f32[N]) -> (Y: f32[N]) {
  let t[i] = X[i] * 2
  Y[i] = (t[i - 1] ?? -1) + t[i]
}

instance sm = softmax<R = 3, D = 5>
`

func check(t *testing.T) *ir.Program {
	t.Helper()
	prog, diags := frontend.CheckSource("spec.kg", spec)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	return prog
}

// TestPlanSoftmax: the elementwise let e is inlined into both of its
// readers; the row reductions mx and den fuse with the output into one
// row-reduce launch that keeps them in registers: no workspace.
func TestPlanSoftmax(t *testing.T) {
	prog := check(t)
	p, err := lower.Build(prog.Kernel("softmax"), nil, "softmax", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Launches) != 1 || p.Launches[0].Name != "softmax" || p.Launches[0].Template.Name() != "row-reduce" {
		t.Fatalf("launches %v", p.Launches)
	}
	l := p.Launches[0]
	if len(l.Fused) != 2 || l.Fused[0].Target.Name != "mx" || l.Fused[1].Target.Name != "den" || l.RowDims != 1 {
		t.Errorf("fused %v, row dims %d; want mx, den and 1", l.Fused, l.RowDims)
	}
	if len(p.Workspace) != 0 {
		t.Errorf("workspace %v, want none", p.Workspace)
	}
	// The original kernel is untouched.
	if len(prog.Kernel("softmax").Lets) != 3 {
		t.Errorf("planning changed the checked kernel")
	}
}

// TestPlanWorkspace: a column sum cannot fuse with a row launch, so it is
// a col-reduce launch of its own that leaves its result in the workspace;
// the row maximum fuses with the output.
func TestPlanWorkspace(t *testing.T) {
	prog := check(t)
	p, err := lower.Build(prog.Kernel("centered"), nil, "centered", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p.Launches {
		names = append(names, l.Name+":"+l.Template.Name())
	}
	if got, want := strings.Join(names, " "), "centered_0_cs:col-reduce centered_1_Y:row-reduce"; got != want {
		t.Errorf("launches %s, want %s", got, want)
	}
	if len(p.Workspace) != 1 || p.Workspace[0].Tensor.Name != "cs" {
		t.Fatalf("workspace %v, want cs", p.Workspace)
	}
	env, _ := ir.Bind(p.Kernel, map[string]int64{"R": 100, "D": 7}, nil)
	total, _ := env.Int(p.WorkspaceBytes())
	if total != 28 { // 7 f32 column sums
		t.Errorf("workspace %d bytes, want 28", total)
	}
}

// TestGuardedReductionStaysGeneric: a reduction under a condition is not
// computed up front by a row-reduce launch, where it would read X[-1].
func TestGuardedReductionStaysGeneric(t *testing.T) {
	prog := check(t)
	p, err := lower.Build(prog.Kernel("guarded"), nil, "guarded", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Launches[0].Template.Name(); got != "generic" {
		t.Errorf("template %s, want generic", got)
	}
}

// TestInlinedKernelComputesTheSame runs the planned (inlined, folded)
// kernel and the checked one through the interpreter: inlining a let
// read through ?? must keep the default where the read is out of range.
func TestInlinedKernelComputesTheSame(t *testing.T) {
	prog := check(t)
	for _, name := range []string{"softmax", "centered", "shifted"} {
		k := prog.Kernel(name)
		p, err := lower.Build(k, nil, name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int64{"R": 4, "D": 6, "N": 9}
		dims := map[string]int64{}
		for _, d := range k.DeclaredDims() {
			dims[d.Name] = sizes[d.Name]
		}
		env, err := ir.Bind(k, dims, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := interp.RandomInputs(k, env, tensor.Normal, 7)
		want, err := interp.Run(k, env, in, interp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := runPlan(p, env, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for j := int64(0); j < want[i].Len(); j++ {
				if g, w := got[i].Float(j), want[i].Float(j); g != w {
					t.Errorf("%s: output %d element %d: planned %v, checked %v", name, i, j, g, w)
				}
			}
		}
	}
	// shifted at i = 0 reads t[-1]: the default -1, so Y[0] = -1 + 2 X[0].
}

// TestSpecializedPlanHasNoSizes: an instance's plan refers to no dim or
// param; its grid is a constant.
func TestSpecializedPlanHasNoSizes(t *testing.T) {
	prog := check(t)
	in := prog.Instance("sm")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Launches {
		ir.Walk(l.Stmt.Value, func(e ir.Expr) bool {
			switch e.(type) {
			case *ir.DimRef, *ir.ParamRef:
				t.Errorf("%s still reads %s", l.Name, ir.Format(e))
			}
			return true
		})
		g := l.Grid()
		if got := lower.SizeText(g.Blocks); got != "1" {
			t.Errorf("%s: blocks %s, want 1 (its 3 short rows in one block of groups)", l.Name, got)
		}
	}
	if len(p.Launches) != 1 || p.Launches[0].Name != "sm" {
		t.Errorf("entry points %v, want the one launch sm", p.Launches)
	}
	// p.Env sizes the source kernel's tensors, as callers that make inputs
	// for p.Source need (kgen test did not, and failed every instance).
	shape, err := p.Env.Shape(p.Source.Inputs[0])
	if err != nil || len(shape) != 2 || shape[0] != 3 || shape[1] != 5 {
		t.Errorf("p.Env.Shape(X) = %v, %v; want [3 5]", shape, err)
	}
}

// TestReferenceWidensSums: the reference kernels' float sums accumulate in
// f64 (as the interpreter's do) and round to the declared accumulation
// type after; max stays as it is.
func TestReferenceWidensSums(t *testing.T) {
	prog := check(t)
	p, err := lower.BuildReference(prog.Kernel("softmax"), "softmax__ref")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range p.Launches {
		ir.Walk(l.Stmt.Value, func(e ir.Expr) bool {
			if r, ok := e.(*ir.Reduce); ok {
				got = append(got, r.Op.String()+":"+r.T.String())
			}
			return true
		})
	}
	if want := "max:f32 sum:f64"; strings.Join(got, " ") != want {
		t.Errorf("reductions %q, want %q", strings.Join(got, " "), want)
	}
}

// TestTemplateChoice: statements take the template their shape calls for.
func TestTemplateChoice(t *testing.T) {
	const src = `
kernel tr<M, N>(X: f32[M, N], B: f32[N, M]) -> (Y: f32[N, M]) {
  Y[j, i] = X[i, j] * 2.0 + B[j, i]
}
kernel perm<A, B, C>(X: f32[A, B, C]) -> (Y: f32[A, C, B]) {
  Y[a, c, b] = X[a, b, c]
}
kernel same<M, N>(X: f32[M, N], v: f32[N]) -> (Y: f32[M, N]) {
  Y[i, j] = X[i, j] + v[j]
}
kernel bcast<M, N>(v: f32[M]) -> (Y: f32[M, N]) {
  Y[i, j] = v[i]
}
kernel shifted<M, N>(X: f32[M, N]) -> (Y: f32[N, M]) {
  Y[j, i] = X[i, (j + 1) % N]
}
`
	prog, diags := frontend.CheckSource("t.kg", src)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	want := map[string]string{"tr": "transpose", "perm": "transpose", "same": "elementwise", "bcast": "elementwise", "shifted": "elementwise"}
	for name, tmpl := range want {
		p, err := lower.Build(prog.Kernel(name), nil, name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Launches[0].Template.Name(); got != tmpl {
			t.Errorf("%s: template %s, want %s", name, got, tmpl)
		}
	}
}

// TestPrintWhere: a plan's statements say where it keeps each let's
// values: a row-reduce launch's fused lets "on chip", a let that a
// launch stores for later launches "in the workspace" (cross entropy's
// log-sum-exp, which the mean over rows reads).
func TestPrintWhere(t *testing.T) {
	prog, diags := frontend.CheckSource("where.kg", `
kernel cross_entropy<NB, NC>(X: f32[NB, NC], target: i64[NB]) -> (loss: f32) {
  let mx[b] = max[c](X[b, c])
  let lse[b] = mx[b] + log(sum[c](exp(X[b, c] - mx[b])))
  loss = sum[b](lse[b] - X[b, target[b]]) / NB
}
instance ce = cross_entropy<NB = 512, NC = 1000>
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	in := prog.Instance("ce")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	text := lower.Print(p)
	for _, want := range []string{
		"let mx[b in 0..512]: f32 = max<f32>[c in 0..1000](X[b, c])  // reduction(inner), on chip\n",
		"(exp(X[b, c] - mx[b])))  // reduction(inner), in the workspace\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan has no line with %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "materialized") || strings.Contains(text, "inlinable") {
		t.Errorf("the plan says what the kernel could do, not what it does:\n%s", text)
	}
}

// TestWindowVec: a generic statement takes VEC consecutive points a
// thread by default where its points share work (the measurements are at
// lower.windowVec and lower.rowVectorShape): 2, one group a step, for a
// window along the last index at stride 1 whose rows are whole vectors of
// 2 but not of 4 (read as rows of vectors), 2 (one a step) for taps picked
// by the last index modulo 2, 1 for a window at stride 2 along rows of an
// odd length and for a reduction that reads no window along the last
// index.
func TestWindowVec(t *testing.T) {
	const src = `
kernel dw<H, W; stride: i32 = 1>(X: f32[H, W], K: f32[3]) -> (Y: f32[H, OW]) where OW = (W - 3) / stride + 1 {
  Y[h, w] = sum[k in 0..3](X[h, w * stride + k] * K[k])
}
kernel up<L>(X: f32[L], K: f32[4]) -> (Y: f32[OL]) where OL = 2 * L + 2 {
  Y[o] = sum[k in 0..4]((o + 1 - k) % 2 == 0 ? (X[(o + 1 - k) / 2] ?? 0) * K[k] : 0)
}
kernel rowdot<M, N>(A: f32[M, N], v: f32[N]) -> (Y: f32[M, N]) {
  Y[i, j] = sum[k](A[i, k] * v[k]) + A[i, j]
}
instance dw1 = dw<H = 4, W = 64>
instance dw2 = dw<H = 4, W = 64, stride = 2>
instance up8 = up<L = 8>
instance rows = rowdot<M = 4, N = 8>
`
	prog, diags := frontend.CheckSource("t.kg", src)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	want := map[string]int64{"dw1": 2, "dw2": 1, "up8": 2, "rows": 1}
	unroll := map[string]int64{"dw1": 1, "dw2": 4, "up8": 1, "rows": 4}
	for _, inst := range prog.Instances {
		p, err := lower.Build(inst.Kernel, inst.Env, inst.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if l.Template.Name() != "generic" {
			t.Errorf("%s: template %s, want generic", inst.Name, l.Template.Name())
		}
		if got := l.Config["VEC"]; got != want[inst.Name] {
			t.Errorf("%s: VEC %d, want %d", inst.Name, got, want[inst.Name])
		}
		if got := l.Config["UNROLL"]; got != unroll[inst.Name] {
			t.Errorf("%s: UNROLL %d, want %d", inst.Name, got, unroll[inst.Name])
		}
	}
}

// TestDefaultsFitRows: the elementwise default takes 16-byte vectors
// only where they fit the rows (rows of 230 f32 take vectors of 2, of 9
// none); rows of narrow elements up to 1024 bytes are short rows, shared
// by groups of threads (BLOCK_ROWS > 1), while a block takes each row of
// 1024 f32.
func TestDefaultsFitRows(t *testing.T) {
	const src = `
kernel pad<H, W>(X: f32[H, W]) -> (Y: f32[H, OW]) where OW = W + 6 {
  Y[h, w] = X[h, w - 3] ?? 0.0
}
kernel any<R, D>(X: bool[R, D]) -> (Y: bool[R]) {
  Y[r] = max[d](X[r, d] ? 1 : 0) > 0
}
kernel sumrows<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance pad230 = pad<H = 64, W = 224>
instance pad9 = pad<H = 64, W = 3>
instance pad256 = pad<H = 64, W = 250>
instance any1024 = any<R = 4096, D = 1024>
instance sum1024 = sumrows<R = 4096, D = 1024>
`
	prog, diags := frontend.CheckSource("t.kg", src)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	want := map[string]string{"pad230": "VEC=2", "pad9": "VEC=1", "pad256": "VEC=4", "any1024": "BLOCK_ROWS=8", "sum1024": "BLOCK_ROWS=1"}
	for _, inst := range prog.Instances {
		p, err := lower.Build(inst.Kernel, inst.Env, inst.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[len(p.Launches)-1]
		if !strings.Contains(l.Config.String(), want[inst.Name]) {
			t.Errorf("%s: %s %s, want %s", inst.Name, l.Template.Name(), l.Config, want[inst.Name])
		}
	}
}
