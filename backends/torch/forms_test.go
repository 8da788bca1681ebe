package torch_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/backends/torch"
	"kgen.dev/kgen/frontend"
)

// TestProductForms: a sum over a product of tensors is a torch.einsum
// where it is a matrix product (a factor lacks an axis of another: a
// matrix-vector or matrix product), and the product multiplied then
// summed where every factor has the same axes (a sum of squares), as a
// user writes it and as torch.compile fuses it. What each computes is
// checked by TestProgramsMatchInterpreter.
func TestProductForms(t *testing.T) {
	prog, diags := frontend.CheckSource("f.kg", `
kernel squares<R, D>(X: f32[R, D]) -> (S: f32[R]) {
  S[r] = sum[d](X[r, d] * X[r, d])
}
kernel gemv<R, D>(A: f32[R, D], x: f32[D]) -> (y: f32[R]) {
  y[r] = sum[d](A[r, d] * x[d])
}
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for _, c := range []struct {
		kernel string
		einsum bool
	}{{"squares", false}, {"gemv", true}, {"mm", true}} {
		src := torch.Emit(prog.Kernels)
		body := src[strings.Index(src, "def "+c.kernel+"("):]
		if i := strings.Index(body[1:], "\ndef "); i >= 0 {
			body = body[:i+1]
		}
		if got := strings.Contains(body, "torch.einsum("); got != c.einsum {
			t.Errorf("%s: einsum %v, want %v:\n%s", c.kernel, got, c.einsum, body)
		}
	}
}
