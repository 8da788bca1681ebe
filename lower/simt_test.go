package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestSimtFitsStaticSmem: the CUDA-core matmul tile's default depth keeps
// its operand tiles within the static shared memory a block may declare,
// for every operand width (f64 operands at BK = 16 took 66 KB and did not
// compile; testsuite/corpus/compile-s1.kg is the differential tester's
// reproducer), and a --config that breaks the limit is refused.
func TestSimtFitsStaticSmem(t *testing.T) {
	src := `
kernel mm_f32<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel mm_mixed<M, N, K>(A: f32[M, K], B: f64[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel mm_f64<M, N, K>(A: f64[M, K], B: f64[K, N]) -> (C: f64[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
`
	prog, diags := frontend.CheckSource("simt.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sm80, err := runtime.ParseTarget("cuda:sm_80")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"mm_f32": 8, "mm_mixed": 8, "mm_f64": 8}
	for _, k := range prog.Kernels {
		p, err := lower.Build(k, nil, k.Name, sm80.Limits())
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if l.Template.Name() != "matmul-simt" {
			t.Fatalf("%s: template %s, want matmul-simt", k.Name, l.Template.Name())
		}
		m := lower.MatchMatmul(l.Stmt)
		if bk := l.Config["BK"]; bk != want[k.Name] || lower.SimtSmem(m, l.Config) > lower.MaxStaticSmem {
			t.Errorf("%s: BK = %d (%d bytes of shared memory), want BK = %d within %d bytes", k.Name, bk, lower.SimtSmem(m, l.Config), want[k.Name], lower.MaxStaticSmem)
		}
		// Two buffers of 16 rows of 132 elements of each operand.
		deep := lower.SimtSmem(m, lower.Config{"BK": 16, "BM": 128, "BN": 128})
		if hand := 2 * 16 * 132 * int64(m.A.Tensor.DType.Size()+m.B.Tensor.DType.Size()); deep != hand {
			t.Errorf("%s: BK=16 takes %d bytes of shared memory, want %d", k.Name, deep, hand)
		}
		_, err = lower.Override(p, lower.Config{"BK": 16}, sm80.Limits())
		if fits := deep <= lower.MaxStaticSmem; fits != (err == nil) {
			t.Errorf("%s: --config BK=16: %v (fits: %v)", k.Name, err, fits)
		}
	}
}

// TestSimtDefault: the CUDA-core tiles run two blocks a multiprocessor by
// default only where a thread's 128 registers were measured to suffice:
// specialized products of matrices in memory with accumulators of 4 bytes
// or less. Kernels of run-time sizes, f64 sums and gathered operands (a
// 3x3 convolution) keep one block; split-K's partial products (an
// implicit GEMM over strided operands) take two. The tile is 128 x 128
// unless a specialized product has fewer such tiles than half of the
// H100's 132 multiprocessors: then 128 x 64 where that gives more tiles,
// else 64 x 128 where that does; a matrix product with B stored by rows
// takes 64 x 128 too while its 128 x 128 tiles do not fill the 132 once
// (on CUDA targets; HIP's tile keeps 128 x 128); and 128 x 64 for
// operands in memory with at most 64 columns, whatever the tile count.
func TestSimtDefault(t *testing.T) {
	src := `
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel mmbt<M, N, K>(A: f32[M, K], B: f32[N, K]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[n, k])
}
kernel mm64<M, N, K>(A: f64[M, K], B: f64[K, N]) -> (C: f64[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel conv<N, C, H, W, F>(X: f32[N, C, H, W], Wt: f32[F, C, 3, 3]) -> (Y: f32[N, F, H, W]) {
  Y[n, f, h, w] = sum[c, kh in 0..3, kw in 0..3]((X[n, c, h + kh - 1, w + kw - 1] ?? 0) * Wt[f, c, kh, kw])
}
instance mm_2k = mm<M = 2048, N = 2048, K = 1024>
instance mm64_2k = mm64<M = 2048, N = 2048, K = 1024>
instance conv_kb = conv<N = 16, C = 64, H = 56, W = 56, F = 64>
instance conv_few = conv<N = 2, C = 64, H = 28, W = 28, F = 128>
instance conv_thin = conv<N = 1, C = 32, H = 64, W = 64, F = 32>
instance mm_long_k = mm<M = 256, N = 256, K = 131072>
instance mm_rect = mm<M = 1024, N = 2048, K = 4096>
instance mm_rect_bt = mmbt<M = 1024, N = 2048, K = 4096>
instance mm_fills = mm<M = 2048, N = 2048, K = 512>
instance mm_wide = mm<M = 64, N = 4096, K = 64>
instance mm_one = mm<M = 100, N = 100, K = 64>
instance mm_thin = mm<M = 16384, N = 64, K = 64>
`
	prog, diags := frontend.CheckSource("simt.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sm80, err := runtime.ParseTarget("cuda:sm_80")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"mm":         "matmul-simt BK=8, BLOCKS_PER_SM=1, BM=128, BN=128",
		"mm_2k":      "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=128",
		"mm64_2k":    "matmul-simt BK=8, BLOCKS_PER_SM=1, BM=128, BN=128",
		"conv_kb":    "igemm-simt BK=8, BLOCKS_PER_SM=1, BM=128, BN=128",  // 1568 x 1 tiles
		"conv_few":   "igemm-simt BK=8, BLOCKS_PER_SM=1, BM=128, BN=64",   // 13 x 1 of 128 x 128, 13 x 2 of 128 x 64
		"conv_thin":  "igemm-simt BK=8, BLOCKS_PER_SM=1, BM=128, BN=64",   // 32 filters x 4096 pixels: 1 x 32 of 128 x 128
		"mm_rect":    "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=64, BN=128",  // 8 x 16 of 128 x 128, B by rows
		"mm_rect_bt": "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=128", // 8 x 16, B by columns
		"mm_fills":   "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=128", // 16 x 16 fill the GPU
		"mm_wide":    "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=64",  // 1 x 32 of 128 x 128, 1 x 64 of 128 x 64
		"mm_one":     "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=64",  // 1 x 1 of 128 x 128, 1 x 2 of 128 x 64
		"mm_thin":    "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=64",  // 64 columns of strided operands, 128 tiles either way
		// 64 chunks of 2048 x 4 tiles of 128 x 128
		"mm_long_k": "igemm-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=128",
	} {
		var p *lower.Plan
		if in := prog.Instance(name); in != nil {
			p, err = lower.Build(in.Kernel, in.Env, name, sm80.Limits())
		} else {
			p, err = lower.Build(prog.Kernel(name), nil, name, sm80.Limits())
		}
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if got := l.Template.Name() + " " + l.Config.String(); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		// One block a multiprocessor asks nothing of the compiler.
		if g, want := l.Grid(), l.Config["BLOCKS_PER_SM"]; g.MinBlocks != want && (want != 1 || g.MinBlocks != 0) {
			t.Errorf("%s: %d blocks a multiprocessor asked of the compiler, want %d", name, g.MinBlocks, want)
		}
	}
	// HIP's tile keeps 128 x 128 for B by rows (on hip:nvidia it lost).
	hip, err := runtime.ParseTarget("hip:nvidia")
	if err != nil {
		t.Fatal(err)
	}
	in := prog.Instance("mm_rect")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, hip.Limits())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Launches[0].Template.Name()+" "+p.Launches[0].Config.String(), "matmul-simt BK=8, BLOCKS_PER_SM=2, BM=128, BN=128"; got != want {
		t.Errorf("mm_rect on hip:nvidia: %s, want %s", got, want)
	}
}

// TestMatrixUnit: the unit that bounds a sum's products, by hand: tensor
// cores for widened 16-bit loads and tf32() operands, multiply-adds for
// other f32 sums (mixed 16-bit types, 16-bit times f32, plain f32), none
// for f64.
func TestMatrixUnit(t *testing.T) {
	src := `
kernel bf<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](f32(A[m, k]) * f32(B[k, n]))
}
kernel hf<M, N, K>(A: f16[M, K], B: f16[K, N]) -> (C: f16[M, N]) {
  C[m, n] = f16(sum[k](f32(A[m, k]) * f32(B[k, n])))
}
kernel tf<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](tf32(A[m, k]) * tf32(B[k, n]))
}
kernel mixed<M, N, K>(A: bf16[M, K], B: f16[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](f32(A[m, k]) * f32(B[k, n]))
}
kernel half<M, N, K>(A: bf16[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](f32(A[m, k]) * B[k, n])
}
kernel plain<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel dbl<M, N, K>(A: f64[M, K], B: f64[K, N]) -> (C: f64[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
`
	prog, diags := frontend.CheckSource("units.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := map[string]string{"bf": "bf16", "hf": "f16", "tf": "tf32", "mixed": "f32", "half": "f32", "plain": "f32", "dbl": ""}
	for _, k := range prog.Kernels {
		m := lower.MatchMatmul(k.Stmts[0])
		if m == nil {
			t.Fatalf("%s: not a matrix product", k.Name)
		}
		if got := lower.MatrixUnit(m.Reduce); got != want[k.Name] {
			t.Errorf("%s: unit %q, want %q", k.Name, got, want[k.Name])
		}
	}
}
