package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
)

// TestCollapseAxes: adjacent axes that only ever index two adjacent
// dimensions in full, in every access of those tensors, merge into one
// (and so do the dimensions), to a fixed point; an axis used anywhere
// else, over part of its dimension, out of order, or through a default
// keeps the loops apart, and a reduction's axes merge only if all can. The plans compute what the kernels do (the
// interpreter runs both, the plan's on the same data viewed at its
// shapes).
func TestCollapseAxes(t *testing.T) {
	prog, diags := frontend.CheckSource("c.kg", `
kernel inorm<N, C, H, W>(X: f32[N, C, H, W]) -> (Y: f32[N, C, H, W]) {
  let mu[n, c] = sum[h, w](X[n, c, h, w]) / (H * W)
  Y[n, c, h, w] = X[n, c, h, w] - mu[n, c]
}
kernel bias<R, D>(X: f32[R, D], B: f32[D]) -> (Y: f32[R, D]) {
  Y[r, d] = X[r, d] + B[d]
}
kernel partial<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d in 1..D](X[r, d])
}
kernel valued<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  Y[r, d] = X[r, d] * f32(d)
}
kernel swapped<R, D>(X: f32[D, R]) -> (Y: f32[R, D]) {
  Y[r, d] = X[d, r]
}
kernel gnorm<N, G, CG, H, W>(X: f32[N, C, H, W]) -> (Y: f32[N, G]) where C = G * CG {
  Y[n, g] = sum[j in 0..CG, h, w](X[n, g * CG + j, h, w])
}
kernel padded<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  Y[r, d] = (X[r, d] ?? 0) + 1.0
}
instance inorm_a = inorm<N = 2, C = 3, H = 5, W = 7>
instance bias_a = bias<R = 4, D = 6>
instance partial_a = partial<R = 4, D = 6>
instance valued_a = valued<R = 4, D = 6>
instance swapped_a = swapped<R = 4, D = 6>
instance padded_a = padded<R = 4, D = 6>
instance gnorm_a = gnorm<N = 2, G = 3, CG = 2, H = 5, W = 7>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, want := range map[string][]string{
		"inorm_a": {
			"let mu[n_c in 0..6]: f32 = sum<f32>[h_w in 0..35](X[n_c, h_w])",
			"Y[n_c2 in 0..6, h_w2 in 0..35] = X[n_c2, h_w2] - mu[n_c2]",
		},
		"bias_a":    {"Y[r in 0..4, d in 0..6] = X[r, d] + B[d]"},
		"partial_a": {"sum<f32>[d in 1..6](X[r, d])"},
		"valued_a":  {"Y[r in 0..4, d in 0..6] = X[r, d] * f32(d)"},
		"swapped_a": {"Y[r in 0..4, d in 0..6] = X[d, r]"},
		"padded_a":  {"Y[r in 0..4, d in 0..6] = (X[r, d] ?? 0.0) + 1.0"},
		// A sum whose axes cannot all merge (j is in g * CG + j) keeps
		// them all.
		"gnorm_a": {"sum<f32>[j in 0..2, h in 0..5, w in 0..7](X[n, g * 2 + j, h, w])"},
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		text := lower.Print(p)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: want %q in:\n%s", name, w, text)
			}
		}
		samePlan(t, in, p, 11, 1e-6)
	}
}
