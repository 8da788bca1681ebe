package cuda

import (
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedStoredMembers: lets that a row-reduce launch fuses and a
// later launch also reads are stored by the fused launch (lower's
// readAfter), on the CPU: a group norm's mean, fused with the variance
// that reads it and read again by the normalization's elementwise
// launch; and statistics that reduce along a row through compound
// indices (a group's channels, g * CG + j) or as products (a cosine's dot
// product beside its norms), which fuse as row members.
// A mean left unstored leaves the normalization reading the workspace's
// NaN poison.
func TestEmulatedStoredMembers(t *testing.T) {
	const spec = `
kernel groupnorm<N, G, CG, H, W; eps: f32 = 1e-5>(X: f32[N, C, H, W], gamma: f32[C], beta: f32[C]) -> (Y: f32[N, C, H, W])
    where C = G * CG {
  let mu[n, g in 0..G] = sum[j in 0..CG, h, w](X[n, g * CG + j, h, w]) / (CG * H * W)
  let sig2[n, g in 0..G] = sum[j in 0..CG, h, w]((X[n, g * CG + j, h, w] - mu[n, g]) * (X[n, g * CG + j, h, w] - mu[n, g])) / (CG * H * W)
  Y[n, c, h, w] = (X[n, c, h, w] - mu[n, c / CG]) * rsqrt(sig2[n, c / CG] + eps) * gamma[c] + beta[c]
}

kernel cosine<NB, D; eps: f32 = 1e-8>(X: f32[NB, D], Y: f32[NB, D]) -> (L: f32[NB]) {
  let dotp[b] = sum[d](X[b, d] * Y[b, d])
  let nx[b] = sqrt(sum[d](X[b, d] * X[b, d]))
  let ny[b] = sqrt(sum[d](Y[b, d] * Y[b, d]))
  L[b] = 1 - dotp[b] / max(nx[b] * ny[b], eps)
}

instance gn_small = groupnorm<N = 2, G = 3, CG = 2, H = 12, W = 13>
instance cos_small = cosine<NB = 5, D = 300>
`
	var plans []*lower.Plan
	for _, p := range plansFor(t, "stored.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		var names []string
		for _, l := range p.Launches {
			names = append(names, l.Template.Name())
		}
		if p.Name == "cos_small" {
			if len(p.Launches) != 1 || names[0] != "row-reduce" || len(p.Launches[0].Fused) != 3 {
				t.Fatalf("%s: launches %v; want one row-reduce with the dot product and the norms fused", p.Name, names)
			}
			plans = append(plans, p)
			continue
		}
		if len(p.Launches) != 2 || names[0] != "row-reduce" || len(p.Launches[0].Fused) != 1 || p.Slot(p.Launches[0].Fused[0].Target) == nil {
			t.Fatalf("%s: launches %v; want a row-reduce with the mean fused and stored, then the normalization", p.Name, names)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}
