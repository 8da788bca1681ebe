package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
)

// TestSplitPhases: a transposed convolution whose taps the stride divides
// splits into its output's phases, each an implicit GEMM (the target's
// last dimension viewed as [OL / stride, stride]; a 2-D one's last two
// each so); the plans compute what
// the kernels do (the interpreter runs both). No split where the output's
// length is no multiple of the stride, where strideSums left a bounds test
// (taps the stride does not divide), where another statement reads the
// output, or at run-time sizes.
func TestSplitPhases(t *testing.T) {
	prog, diags := frontend.CheckSource("p.kg", `
kernel convt<N, C, L, F, KL; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, L], Wt: f32[C, F, KL]) -> (Y: f32[N, F, OL])
    where OL = (L - 1) * stride - 2 * pad + KL {
  Y[n, f, ol] = sum[c, k]((ol + pad - k) % stride == 0 ? (X[n, c, (ol + pad - k) / stride] ?? 0) * Wt[c, f, k] : 0)
}
kernel convt_read<N, C, L, F, KL; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, L], Wt: f32[C, F, KL]) -> (Y: f32[N, F, OL], Z: f32[N, F, OL])
    where OL = (L - 1) * stride - 2 * pad + KL {
  Y[n, f, ol] = sum[c, k]((ol + pad - k) % stride == 0 ? (X[n, c, (ol + pad - k) / stride] ?? 0) * Wt[c, f, k] : 0)
  Z[n, f, ol] = Y[n, f, ol] * 2.0
}
kernel convt2d<N, C, H, W, F, K; stride: i32 = 2, pad: i32 = 1>(X: f32[N, C, H, W], Wt: f32[C, F, K, K]) -> (Y: f32[N, F, OH, OW])
    where OH = (H - 1) * stride - 2 * pad + K, OW = (W - 1) * stride - 2 * pad + K {
  Y[n, f, oh, ow] = sum[c, kh, kw]((oh + pad - kh) % stride == 0 && (ow + pad - kw) % stride == 0 ? (X[n, c, (oh + pad - kh) / stride, (ow + pad - kw) / stride] ?? 0) * Wt[c, f, kh, kw] : 0)
}
instance up2 = convt<N = 2, C = 3, L = 7, F = 4, KL = 4, stride = 2, pad = 1>
instance up3 = convt<N = 1, C = 2, L = 6, F = 3, KL = 6, stride = 3>
instance odd_length = convt<N = 1, C = 2, L = 6, F = 3, KL = 6, stride = 3, pad = 1>
instance odd_taps = convt<N = 1, C = 2, L = 6, F = 3, KL = 4, stride = 3, pad = 2>
instance up2d = convt2d<N = 1, C = 2, H = 3, W = 4, F = 2, K = 4>
instance read = convt_read<N = 2, C = 3, L = 7, F = 4, KL = 4, stride = 2, pad = 1>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, want := range map[string]string{
		"up2":        "Y[n in 0..2, f in 0..4, ol_q in 0..7, ol_r in 0..2] = sum<f32>[c in 0..3, k in 0..2]((X[n, c, ol_q + -1 * k + (ol_r + 1 - (ol_r + 1) % 2) / 2] ?? 0.0) * Wt[c, f, (ol_r + 1) % 2 + 2 * k])",
		"up3":        "Y[n in 0..1, f in 0..3, ol_q in 0..7, ol_r in 0..3] = sum<f32>[c in 0..2, k in 0..2]((X[n, c, ol_q + -1 * k + (ol_r - ol_r % 3) / 3] ?? 0.0) * Wt[c, f, ol_r % 3 + 3 * k])",
		"up2d":       "Y[n in 0..1, f in 0..2, oh_q in 0..3, oh_r in 0..2, ow_q in 0..4, ow_r in 0..2] = sum<f32>[c in 0..2, kh in 0..2, kw in 0..2]",
		"odd_length": "Y[n in 0..1, f in 0..3, ol in 0..19]",
		"odd_taps":   "Y[n in 0..1, f in 0..3, ol in 0..15]",
		"read":       "Y[n in 0..2, f in 0..4, ol in 0..14]",
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		text := lower.Print(p)
		if !strings.Contains(text, want) {
			t.Errorf("%s: want %q in:\n%s", name, want, text)
		}
		split := strings.Contains(want, "_r in")
		if got := strings.HasPrefix(p.Launches[0].Template.Name(), "igemm-"); got != split {
			t.Errorf("%s: template %s", name, p.Launches[0].Template.Name())
		}
		samePlan(t, in, p, 7, 1e-5)
	}
	k := prog.Kernel("convt")
	p, err := lower.Build(k, nil, "convt", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if text := lower.Print(p); strings.Contains(text, "ol_r") {
		t.Errorf("split at run-time sizes:\n%s", text)
	}
}
