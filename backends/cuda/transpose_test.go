package cuda

import (
	"regexp"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestTransposeTilePad: a transpose's shared-memory tile has rows of an
// odd number of 4-byte words, so that the second pass's column falls in
// distinct banks: one element of padding for 4-byte types, two for 2-byte
// and four for 1-byte ones.
func TestTransposeTilePad(t *testing.T) {
	const spec = `
kernel t_f32<M, N>(X: f32[M, N]) -> (Y: f32[N, M]) {
  Y[j, i] = X[i, j]
}
kernel t_bf16<M, N>(X: bf16[M, N]) -> (Y: bf16[N, M]) {
  Y[j, i] = X[i, j]
}
kernel t_u8<M, N>(X: u8[M, N]) -> (Y: u8[N, M]) {
  Y[j, i] = X[i, j]
}
instance f32_1k = t_f32<M = 1024, N = 512>
instance bf16_1k = t_bf16<M = 1024, N = 512>
instance u8_1k = t_u8<M = 1024, N = 512>
`
	want := map[string]string{"f32_1k": "float kg_tile[64][65]", "bf16_1k": "__nv_bfloat16 kg_tile[64][66]", "u8_1k": "uint8_t kg_tile[64][68]"}
	tile := regexp.MustCompile(`__shared__ (\w+ kg_tile\[\d+\]\[\d+\])`)
	seen := 0
	for _, p := range plansFor(t, "transpose.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		if p.Launches[0].Template.Name() != "transpose" {
			t.Fatalf("%s: template %s, want transpose", p.Name, p.Launches[0].Template.Name())
		}
		m := tile.FindStringSubmatch(Emit([]*lower.Plan{p}))
		if m == nil || m[1] != want[p.Name] {
			t.Errorf("%s: tile %v, want %s", p.Name, m, want[p.Name])
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("%d instances planned, want %d", seen, len(want))
	}
}
