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
	want := map[string]int64{"mm_f32": 16, "mm_mixed": 8, "mm_f64": 8}
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
		if bk := l.Config["BK"]; bk != want[k.Name] || lower.SimtSmem(m, bk) > lower.MaxStaticSmem {
			t.Errorf("%s: BK = %d (%d bytes of shared memory), want BK = %d within %d bytes", k.Name, bk, lower.SimtSmem(m, bk), want[k.Name], lower.MaxStaticSmem)
		}
		_, err = lower.Override(p, lower.Config{"BK": 16}, sm80.Limits())
		if fits := lower.SimtSmem(m, 16) <= lower.MaxStaticSmem; fits != (err == nil) {
			t.Errorf("%s: --config BK=16: %v (fits: %v)", k.Name, err, fits)
		}
	}
}
