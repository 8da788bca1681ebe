package cuda

import (
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestRowValuesHoisted: a row-reduce launch computes a costly value of
// the row alone (a layer norm's rsqrt(var + eps)) once a row, before its
// outputs' loop, whether the row is kept in a block's registers (ln_1k),
// a cluster's (ln_64k), or staged in a block's or a cluster's shared
// memory (both with STAGE=1), or streamed (layernorm_w); a value that
// varies along the row (a softmax's exp(x - max) / den) and one under a
// select's branch stay in the loop.
// TestEmulatedStagedRows and TestEmulatedExamples check the outputs.
func TestRowValuesHoisted(t *testing.T) {
	sm90 := sm90a
	sm90.Wgmma = false
	plans := plansFor(t, "rowvalues.kg", `
kernel layernorm_w<R, D>(X: f32[R, D], g: f32[D]) -> (Y: f32[R, D]) {
  let mu[r] = sum[d](X[r, d]) / D
  let var[r] = sum[d]((X[r, d] - mu[r]) * (X[r, d] - mu[r])) / D
  Y[r, d] = (X[r, d] - mu[r]) * rsqrt(var[r] + 1e-5) * g[d]
}
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}
kernel guarded<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let ss[r] = sum[d](X[r, d] * X[r, d])
  Y[r, d] = d < 3 ? X[r, d] * rsqrt(ss[r] + 1e-5) : X[r, d]
}
instance ln_1k = layernorm_w<R = 8, D = 1024>
instance ln_64k = layernorm_w<R = 8, D = 65536>
instance softmax_1k = softmax<R = 8, D = 1024>
instance guarded_1k = guarded<R = 8, D = 1024>
`, sm90)
	want := map[string]int{"layernorm_w": 1, "ln_1k": 1, "ln_64k": 1, "softmax": 0, "softmax_1k": 0, "guarded": 0, "guarded_1k": 0}
	for _, p := range plans {
		configs := []lower.Config{nil}
		if strings.HasPrefix(p.Name, "ln_") {
			configs = append(configs, lower.Config{"STAGE": 1, "PREFETCH": 0, "THREADS": 256})
		}
		for _, c := range configs {
			if c != nil {
				if _, err := lower.Override(p, c, sm90); err != nil {
					t.Fatalf("%s: %v", p.Name, err)
				}
			}
			src := body(Emit([]*lower.Plan{p}))
			hoisted := strings.Count(src, "// of the row alone")
			if hoisted != want[p.Name] {
				t.Errorf("%s (%v): %d row values, want %d:\n%s", p.Name, c, hoisted, want[p.Name], src)
			}
			once := strings.Count(src, "kg_rsqrt(") == 1 && strings.Contains(src, "const float kg_rv0 = kg_rsqrt(kg_v_var + 1e-05f);") && strings.Contains(src, "* kg_rv0")
			if want[p.Name] == 1 && !once {
				t.Errorf("%s (%v): rsqrt(var + eps) not computed once a row and read as kg_rv0:\n%s", p.Name, c, src)
			}
		}
	}
}
