package cuda

import (
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedColGroups: col-group launches (softmax and norms over an
// outer axis, one launch each) compute what the interpreter does, on the
// CPU: columns that are no whole number of vectors (13, 6, 10 and the
// collapsed 3 x 7), reduced axes that are no whole number of the block's
// rows of threads, points kept in registers and (TY=8 over 300 points,
// beyond MaxCached) read from memory each pass, f16 data with f32
// statistics and a weight along the columns.
func TestEmulatedColGroups(t *testing.T) {
	const spec = `
kernel softmax_dim1<NB, D, T>(X: f32[NB, D, T]) -> (Y: f32[NB, D, T]) {
  let mx[b, t] = max[d](X[b, d, t])
  let den[b, t] = sum[d](exp(X[b, d, t] - mx[b, t]))
  Y[b, d, t] = exp(X[b, d, t] - mx[b, t]) / den[b, t]
}

kernel rms_features<NB, F, H, W>(X: f32[NB, F, H, W]) -> (Y: f32[NB, F, H, W]) {
  let rms[b, i, j] = sqrt(sum[f](X[b, f, i, j] * X[b, f, i, j]) / F + 1e-5)
  Y[b, f, i, j] = X[b, f, i, j] / rms[b, i, j]
}

kernel norm_f16<B, D, T>(X: f16[B, D, T], g: f32[T]) -> (Y: f16[B, D, T]) {
  let mu[b, t] = sum[d](f32(X[b, d, t])) / D
  let var[b, t] = sum[d]((f32(X[b, d, t]) - mu[b, t]) * (f32(X[b, d, t]) - mu[b, t])) / D
  Y[b, d, t] = f16((f32(X[b, d, t]) - mu[b, t]) * rsqrt(var[b, t] + 1e-5) * g[t])
}

instance softmax_odd = softmax_dim1<NB = 3, D = 37, T = 13>
instance softmax_long = softmax_dim1<NB = 2, D = 300, T = 6>
instance softmax_uncached = softmax_dim1<NB = 2, D = 300, T = 6>
instance rms_odd = rms_features<NB = 2, F = 5, H = 3, W = 7>
instance norm_f16_odd = norm_f16<B = 2, D = 19, T = 10>
`
	var plans []*lower.Plan
	for _, p := range plansFor(t, "colgroups.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		l := p.Launches[0]
		if len(p.Launches) != 1 || l.Template.Name() != "col-group" {
			t.Fatalf("%s: %d launches, the first %s; want one col-group", p.Name, len(p.Launches), l.Template.Name())
		}
		if p.Name == "softmax_uncached" {
			if _, err := lower.Override(p, lower.Config{"col-group.TY": 8, "col-group.TX": 4}, sm80); err != nil {
				t.Fatal(err)
			}
		}
		if cached, want := lower.ColGroupCache(l) > 0, p.Name != "softmax_uncached"; cached != want {
			t.Errorf("%s (%s): points cached %t, want %t", p.Name, l.Config, cached, want)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}
