package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestSplitK: a matrix product with too few output tiles over a long K is
// split into partial products over whole chunks of K (an implicit GEMM
// reading strided operands at the chunk's offset) and a column reduction
// with the epilogue; products that fill the GPU, whose K has no whole
// chunks of at least lower.MinSplitK, or whose sizes are not known are
// not. The split plan computes what the statement does (the interpreter
// runs both).
func TestSplitK(t *testing.T) {
	prog, diags := frontend.CheckSource("s.kg", `
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N], bias: f32[N]) -> (C: f32[M, N]) {
  C[m, n] = max(sum[k](A[m, k] * B[k, n]) + bias[n], 0.0)
}
instance large_k = mm<M = 256, N = 256, K = 131072>
instance square = mm<M = 4096, N = 4096, K = 4096>
instance odd_k = mm<M = 256, N = 256, K = 131071>
instance short_k = mm<M = 256, N = 256, K = 1024>
instance small = mm<M = 3, N = 5, K = 4096>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	want := map[string]string{
		"large_k": "large_k_0_C_part:igemm-simt large_k_1_C:col-reduce",
		"square":  "square:matmul-simt",
		"odd_k":   "odd_k:matmul-simt",
		"short_k": "short_k:matmul-simt",
		"small":   "small_0_C_part:igemm-simt small_1_C:col-reduce",
		"mm":      "mm:matmul-simt",
	}
	for name, w := range want {
		if got := templatesOf(t, prog, name); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	in := prog.Instance("large_k")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := lower.Print(p); !strings.Contains(s, "let C_part[chunk in 0..64, m in 0..256, n in 0..256]: f32 = sum<f32>[k in 0..2048](A[m, chunk * 2048 + k] * B[chunk * 2048 + k, n])") ||
		!strings.Contains(s, "C[m in 0..256, n in 0..256] = max(sum<f32>[chunk in 0..64](C_part[chunk, m, n]) + bias[n], 0.0)") {
		t.Errorf("large_k's split:\n%s", s)
	}
	if m := lower.MatchIGemm(p.Launches[0].Stmt); m == nil || !m.A.Strided || !m.B.Strided {
		t.Errorf("the partial product's operands are not strided matrices")
	} else if a, b := lower.Stride(m.A.Load, m.Batch[0]), lower.Stride(m.B.Load, m.Batch[0]); ir.Format(a) != "2048" || ir.Format(b) != "524288" {
		t.Errorf("chunk strides %s and %s, want 2048 (of A) and 2048 x 256 (of B)", ir.Format(a), ir.Format(b))
	}

	in = prog.Instance("small")
	p, err = lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	samePlan(t, in, p, 5, 1e-5)
}

// TestHoistReductions: a reduction that depends on only some of its
// statement's output indices becomes a let over those indices (a column
// sum a col-reduce launch, a row's sum fused into the statement's
// row-reduce launch, a block a row), one let for a reduction written
// twice; guarded reductions stay. The plans compute what the statements
// do (the interpreter runs both).
func TestHoistReductions(t *testing.T) {
	prog, diags := frontend.CheckSource("h.kg", `
kernel center_cols<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  Y[r, d] = X[r, d] - sum[j](X[j, d]) / R
}
kernel l1norm<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  Y[r, d] = X[r, d] / (sum[j](abs(X[r, j])) + sum[j](abs(X[r, j])))
}
kernel guarded<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  Y[r, d] = d > 0 ? sum[j](X[j, d - 1]) : X[r, d]
}
instance center_small = center_cols<R = 7, D = 5>
instance l1_small = l1norm<R = 4, D = 9>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	want := map[string]string{
		"center_cols": "center_cols_0_Y_red:col-reduce center_cols_1_Y:elementwise",
		"l1norm":      "l1norm:row-reduce",
		"guarded":     "guarded:generic",
	}
	for name, w := range want {
		if got := templatesOf(t, prog, name); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	p, err := lower.Build(prog.Kernel("l1norm"), nil, "l1norm", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := lower.Print(p); !strings.Contains(s, "let Y_red[r in 0..R]: f32 = sum<f32>[j in 0..D](abs(X[r, j]))") ||
		!strings.Contains(s, "Y[r in 0..R, d in 0..D] = X[r, d] / (Y_red[r] + Y_red[r])") || p.Launches[0].Grid().Blocks == nil ||
		!strings.Contains(ir.Format(p.Launches[0].Grid().Blocks), "min(R,") {
		t.Errorf("l1norm: want one let for both sums and a block a row:\n%s", s)
	}
	for _, name := range []string{"center_small", "l1_small"} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		samePlan(t, in, p, 2, 1e-12)
	}
}
