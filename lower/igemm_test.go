package lower_test

import (
	"fmt"
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

const convSpec = `
kernel conv2d<N, C, H, W, F, KH, KW; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, H, W], Wt: f32[F, C, KH, KW]) -> (Y: f32[N, F, OH, OW])
    where OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1 {
  Y[n, f, oh, ow] = sum[c, kh, kw]((X[n, c, oh * stride + kh - pad, ow * stride + kw - pad] ?? 0) * Wt[f, c, kh, kw])
}

kernel conv_nhwc<N, H, W, C, F>(X: bf16[N, H, W, C], Wt: bf16[F, 3, 3, C]) -> (Y: bf16[N, H, W, F]) @acc(f32) {
  Y[n, oh, ow, f] = sum[kh in 0..3, kw in 0..3, c]((X[n, oh + kh - 1, ow + kw - 1, c] ?? 0) * Wt[f, kh, kw, c])
}

kernel conv1x1<N, C, H, W, F>(X: f32[N, C, H, W], Wt: f32[F, C], bias: f32[F]) -> (Y: f32[N, F, H, W]) {
  Y[n, f, h, w] = relu(bias[f] + sum[c](X[n, c, h, w] * Wt[f, c]))
}

kernel grouped<N, G, C, H, W, F>(X: f32[N, G, C, H, W], Wt: f32[G, F, C, 3, 3]) -> (Y: f32[N, G, F, H, W]) {
  Y[n, g, f, oh, ow] = sum[c, kh in 0..3, kw in 0..3]((X[n, g, c, oh + kh - 1, ow + kw - 1] ?? 0) * Wt[g, f, c, kh, kw])
}

kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}

kernel matmul_bf16<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}

kernel bmm<BS, M, N, K>(A: f32[BS, M, K], B: f32[BS, K, N]) -> (C: f32[BS, M, N]) {
  C[b, m, n] = sum[k](A[b, m, k] * B[b, k, n])
}

kernel depthwise<N, C, H, W>(X: f32[N, C, H, W], Wt: f32[C, 3, 3]) -> (Y: f32[N, C, H, W]) {
  Y[n, c, oh, ow] = sum[kh in 0..3, kw in 0..3]((X[n, c, oh + kh - 1, ow + kw - 1] ?? 0) * Wt[c, kh, kw])
}

kernel conv_transpose1d<N, C, L, F, KL; stride: i32 = 2>(X: f32[N, C, L], Wt: f32[C, F, KL]) -> (Y: f32[N, F, OL])
    where OL = (L - 1) * stride + KL {
  Y[n, f, ol] = sum[c, k]((ol - k) % stride == 0 ? (X[n, c, (ol - k) / stride] ?? 0) * Wt[c, f, k] : 0)
}

kernel upsampled<N, C, L, F>(X: f32[N, C, L], Wt: f32[F, C, 3]) -> (Y: f32[N, F, L]) {
  Y[n, f, l] = sum[c, k in 0..3]((X[n, c, (l + k) / 2] ?? 0) * Wt[f, c, k])
}

kernel indirect<M, N, K, V>(idx: i64[M], E: f32[V, K], Wt: f32[N, K]) -> (Y: f32[M, N]) {
  Y[m, n] = sum[k]((E[idx[m], k] ?? 0) * Wt[n, k])
}

kernel maxpool<N, C, H, W>(X: f32[N, C, H, W]) -> (Y: f32[N, C, OH, OW])
    where OH = H / 2, OW = W / 2 {
  Y[n, c, oh, ow] = max[kh in 0..2, kw in 0..2](X[n, c, oh * 2 + kh, ow * 2 + kw])
}

kernel guarded<N, C, L, F>(X: f32[N, C, L], Wt: f32[F, C, 3]) -> (Y: f32[N, F, L]) {
  Y[n, f, l] = l > 0 ? sum[c, k in 0..3]((X[n, c, l + k - 1] ?? 0) * Wt[f, c, k]) : 0
}

instance conv_s2 = conv2d<N = 2, C = 3, H = 9, W = 9, F = 4, KH = 3, KW = 3, stride = 2, pad = 1>
instance conv_valid = conv2d<N = 2, C = 3, H = 9, W = 9, F = 4, KH = 3, KW = 3>
`

func plans(t *testing.T) map[string]*lower.Plan {
	t.Helper()
	prog, diags := frontend.CheckSource("conv.kg", convSpec)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	ps := map[string]*lower.Plan{}
	for _, k := range prog.Kernels {
		p, err := lower.Build(k, nil, k.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ps[k.Name] = p
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ps[in.Name] = p
	}
	return ps
}

// TestIGemmChoice: statements that are implicit matrix products (affine
// loads, one sum of a product, rows and columns on both sides) take an
// igemm template; matrix products keep the matmul templates; the rest
// (non-affine or indirect indices, guarded sums, max) stay generic, and
// a depthwise convolution (one input channel a filter) of 3 x 3 taps
// goes point by point (fewer than lower.MinWindowTaps).
func TestIGemmChoice(t *testing.T) {
	ps := plans(t)
	want := map[string]string{
		"conv2d":           "igemm-simt",
		"conv_s2":          "igemm-simt",
		"conv_nhwc":        "igemm-mma",
		"conv1x1":          "igemm-simt",
		"grouped":          "igemm-simt",
		"matmul":           "matmul-simt",
		"matmul_bf16":      "matmul-mma",
		"bmm":              "matmul-simt",
		"depthwise":        "generic",
		"conv_transpose1d": "generic",
		"upsampled":        "generic",
		"indirect":         "generic",
		"maxpool":          "generic",
		"guarded":          "generic",
	}
	for name, tmpl := range want {
		p := ps[name]
		if len(p.Launches) != 1 {
			t.Fatalf("%s: %d launches", name, len(p.Launches))
		}
		if got := p.Launches[0].Template.Name(); got != tmpl {
			t.Errorf("%s: template %s, want %s", name, got, tmpl)
		}
	}
}

// TestIGemmOperands: which operand is gathered and which strided, the
// product's rows, columns and K, and the layouts chosen.
func TestIGemmOperands(t *testing.T) {
	ps := plans(t)
	names := func(ix []*ir.Index) string {
		var s []string
		for _, x := range ix {
			s = append(s, x.Name)
		}
		return strings.Join(s, ",")
	}
	desc := func(o *lower.Operand) string {
		d := fmt.Sprintf("%s rows=%s kmajor=%t", o.Load.Tensor.Name, names(o.Rows), o.KMajor)
		if o.Strided {
			d += " ld=" + ir.Format(lower.Simplify(o.Ld))
		}
		return d
	}
	cases := []struct{ kernel, a, b, batch, k string }{
		// NCHW: the input's last index is the output's last: it is B.
		{"conv2d", "Wt rows=f kmajor=true ld=KW * KH * C", "X rows=n,oh,ow kmajor=false", "", "c,kh,kw"},
		// NHWC: the filter reads the output's last index.
		{"conv_nhwc", "X rows=n,oh,ow kmajor=true", "Wt rows=f kmajor=true ld=C * 3 * 3", "", "kh,kw,c"},
		{"conv1x1", "Wt rows=f kmajor=true ld=C", "X rows=n,h,w kmajor=false", "", "c"},
		{"grouped", "Wt rows=f kmajor=true ld=9 * C", "X rows=n,oh,ow kmajor=false", "g", "c,kh,kw"},
	}
	for _, c := range cases {
		g := lower.MatchIGemm(ps[c.kernel].Launches[0].Stmt)
		if g == nil {
			t.Errorf("%s: not an implicit GEMM", c.kernel)
			continue
		}
		if got := desc(g.A); got != c.a {
			t.Errorf("%s: A is %q, want %q", c.kernel, got, c.a)
		}
		if got := desc(g.B); got != c.b {
			t.Errorf("%s: B is %q, want %q", c.kernel, got, c.b)
		}
		if names(g.Batch) != c.batch || names(g.K) != c.k {
			t.Errorf("%s: batch %s, K %s; want %s and %s", c.kernel, names(g.Batch), names(g.K), c.batch, c.k)
		}
	}
}

// TestIGemmChecks: a gathered load tests only the dimensions whose index
// can leave the tensor: never a plain index over the whole dimension; at
// constant sizes, only where interval arithmetic finds a way out. Each
// claim that a dimension needs no test is checked point by point.
func TestIGemmChecks(t *testing.T) {
	ps := plans(t)
	cases := []struct {
		plan string
		want []bool // X's dimensions tested
	}{
		{"conv2d", []bool{false, false, true, true}},
		{"conv_s2", []bool{false, false, true, true}},
		{"conv_valid", []bool{false, false, false, false}},
	}
	for _, c := range cases {
		p := ps[c.plan]
		g := lower.MatchIGemm(p.Launches[0].Stmt)
		x := g.B
		if fmt.Sprint(x.Checked) != fmt.Sprint(c.want) {
			t.Errorf("%s: checked %v, want %v", c.plan, x.Checked, c.want)
		}
		if p.Env == nil {
			continue
		}
		// Every point of the product reads X inside the dimensions left
		// untested.
		env := p.Bind(p.Env)
		indices := append(append([]*ir.Index(nil), x.Rows...), g.K...)
		point := map[*ir.Index]ir.Expr{}
		var visit func(i int)
		visit = func(i int) {
			if i == len(indices) {
				for d, e := range x.Load.Index {
					v, err := env.Int(ir.Substitute(e, point))
					n, _ := env.Int(x.Load.Tensor.Shape[d])
					if err != nil {
						t.Fatal(err)
					}
					if !x.Checked[d] && (v < 0 || v >= n) {
						t.Fatalf("%s: dimension %d untested, but %s = %d at %v", c.plan, d, ir.Format(e), v, point)
					}
				}
				return
			}
			hi, _ := env.Int(indices[i].Hi)
			for v := int64(0); v < hi; v++ {
				point[indices[i]] = ir.IntConst(v)
				visit(i + 1)
			}
		}
		visit(0)
	}
}
