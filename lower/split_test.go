package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestSplitK: a matrix product with too few output tiles over a long K is
// split into partial products over whole chunks of K (an implicit GEMM
// reading strided operands at the chunk's offset) and a column reduction
// with the epilogue, also where the epilogue reads the sum twice (a
// GELU); products that fill the GPU, whose K has no whole chunks of at
// least lower.MinSplitK, or whose sizes are not known are not. The split
// plan computes what the statement does (the interpreter runs both).
func TestSplitK(t *testing.T) {
	prog, diags := frontend.CheckSource("s.kg", `
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N], bias: f32[N]) -> (C: f32[M, N]) {
  C[m, n] = max(sum[k](A[m, k] * B[k, n]) + bias[n], 0.0)
}
instance large_k = mm<M = 256, N = 256, K = 131072>
instance square = mm<M = 4096, N = 4096, K = 4096>
instance odd_k = mm<M = 256, N = 256, K = 131071>
kernel gelu<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = 0.5 * sum[k](A[m, k] * B[k, n]) * (1 + erf(sum[k](A[m, k] * B[k, n]) * 0.7071067811865476))
}
instance short_k = mm<M = 256, N = 256, K = 1024>
instance shortest_k = mm<M = 256, N = 256, K = 128>
instance small = mm<M = 3, N = 5, K = 4096>
instance linear_gelu = gelu<M = 128, N = 512, K = 1024>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	want := map[string]string{
		"large_k": "large_k_0_C_part:igemm-simt large_k_1_C:col-reduce",
		"square":  "square:matmul-simt",
		"odd_k":   "odd_k:matmul-simt",
		"short_k": "short_k_0_C_part:igemm-simt short_k_1_C:col-reduce",
		// K = 128 has no two chunks of 128.
		"shortest_k":  "shortest_k:matmul-simt",
		"linear_gelu": "linear_gelu_0_C_part:igemm-simt linear_gelu_1_C:col-reduce",
		"small":       "small_0_C_part:igemm-simt small_1_C:col-reduce",
		"mm":          "mm:matmul-simt",
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

	for _, name := range []string{"small", "linear_gelu"} {
		in = prog.Instance(name)
		p, err = lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		samePlan(t, in, p, 5, 1e-5)
	}
	// linear_gelu (p): 8 chunks of 128, 32 tiles of 128 x 128.
	if s := lower.Print(p); !strings.Contains(s, "let C_part[chunk in 0..8, m in 0..128, n in 0..512]: f32 = sum<f32>[k in 0..128](A[m, chunk * 128 + k] * B[chunk * 128 + k, n])") {
		t.Errorf("linear_gelu's split:\n%s", s)
	}
}

// TestSplitRows: a row reduction with too few outputs to fill the GPU (a
// total, a few rows) whose sizes are known is split into partial results
// over whole chunks of its reduction's first axis, a block a row of them,
// and a row reduction that combines them in order and applies the
// epilogue; many rows, a first axis without a divisor in range (a prime
// length), a reduction too short for two chunks, a let (which fuses with
// its readers) and run-time sizes are not split; nor, on a target with
// clusters, more than 4 rows. The split plans compute
// what the statements do (the interpreter runs both).
func TestSplitRows(t *testing.T) {
	prog, diags := frontend.CheckSource("r.kg", `
kernel mse<NB, D>(P: f32[NB, D], T: f32[NB, D]) -> (loss: f32) {
  loss = sum[b, d]((P[b, d] - T[b, d]) * (P[b, d] - T[b, d])) / (NB * D)
}
kernel total<N>(X: f32[N]) -> (Y: f32) {
  Y = max[i](X[i])
}
kernel rows<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
kernel normalize<N>(X: f32[N]) -> (Y: f32[N]) {
  let s = sum[i](abs(X[i]))
  Y[i] = X[i] / s
}
kernel ln<NB, N>(X: f32[NB, N]) -> (Y: f32[NB, N]) {
  let mean[b] = sum[i](X[b, i]) / N
  let var[b] = sum[i]((X[b, i] - mean[b]) * (X[b, i] - mean[b])) / N
  Y[b, i] = (X[b, i] - mean[b]) * rsqrt(var[b] + 1e-5)
}
instance mse_kb = mse<NB = 128, D = 4096>
instance total_1m = total<N = 1048576>
instance total_prime = total<N = 1000003>
instance total_short = total<N = 1000>
instance rows_few = rows<R = 4, D = 65536>
instance rows_many = rows<R = 4096, D = 4096>
instance rows_16 = rows<R = 16, D = 65536>
instance normalize_1m = normalize<N = 1048576>
instance normalize_64k = normalize<N = 65536>
instance ln_4x256k = ln<NB = 4, N = 262144>
instance ln_64x256k = ln<NB = 64, N = 262144>
instance ln_16x256k = ln<NB = 16, N = 262144>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	want := map[string]string{
		"mse_kb":      "mse_kb_0_loss_part:row-reduce mse_kb_1_loss:row-reduce",
		"total_1m":    "total_1m_0_Y_part:row-reduce total_1m_1_Y:row-reduce",
		"total_prime": "total_prime:row-reduce",
		"total_short": "total_short:row-reduce",
		"rows_few":    "rows_few_0_Y_part:row-reduce rows_few_1_Y:col-reduce",
		"rows_many":   "rows_many:row-reduce",
		"rows_16":     "rows_16_0_Y_part:row-reduce rows_16_1_Y:col-reduce",
		// A let of few long rows is split too, and the statement that
		// reads it runs on its own, over every element; a let of rows
		// shorter than MinSplitLetRow, or of rows enough for a block
		// each, fuses into its reader's launch, a block a row.
		"normalize_1m":  "normalize_1m_0_s_part:row-reduce normalize_1m_1_s:row-reduce normalize_1m_2_Y:elementwise",
		"normalize_64k": "normalize_64k:row-reduce",
		// A mean and its variance split together: each chunk's mean and
		// squared deviations in one launch (splitCentered), combined
		// after.
		"ln_4x256k":  "ln_4x256k_0_var_part:row-reduce ln_4x256k_1_mean:col-reduce ln_4x256k_2_var:col-reduce ln_4x256k_3_Y:elementwise",
		"ln_64x256k": "ln_64x256k:row-reduce",
		"mse":        "mse:row-reduce",
	}
	for name, w := range want {
		if got := templatesOf(t, prog, name); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	// On sm_90 a row-reduce launch spreads a few rows over clusters of up
	// to 8 blocks: only outputs of at most 4 rows are split, but lets of
	// long rows as on any target (a layer norm's statistics over 16 rows
	// of 4 M f32 on the H100: 848 us fused on clusters, 806 unfused, 629
	// split, testsuite/results/2026-11-26-h100-s10-split-lets/).
	sm90, err := runtime.ParseTarget("cuda:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"mse_kb": 2, "rows_few": 2, "rows_16": 1, "normalize_1m": 3, "ln_4x256k": 4, "ln_16x256k": 4, "ln_64x256k": 1} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90.Limits())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Launches) != want {
			t.Errorf("%s on sm_90: %d launches, want %d", name, len(p.Launches), want)
		}
	}
	for name, part := range map[string]string{
		"mse_kb":   "let loss_part[chunk in 0..256]: f32 = sum<f32>[b_d in 0..2048]((P[chunk * 2048 + b_d]", // [b, d] collapsed
		"total_1m": "let Y_part[chunk in 0..256]: f32 = max<f32>[i in 0..4096](X[chunk * 4096 + i])",
		"rows_few": "let Y_part[chunk in 0..64, r in 0..4]: f32 = sum<f32>[d in 0..1024](X[r, chunk * 1024 + d])",
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if s := lower.Print(p); !strings.Contains(s, part) {
			t.Errorf("%s's split, want %q:\n%s", name, part, s)
		}
	}
	for _, name := range []string{"mse_kb", "rows_few", "normalize_1m", "ln_4x256k"} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		samePlan(t, in, p, 5, 1e-5)
	}
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
