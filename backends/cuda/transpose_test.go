package cuda

import (
	"regexp"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestTransposeTilePad: a transpose's shared-memory tile has rows of an
// odd number of 4-byte words for the second pass's reads, so that its
// column falls in distinct banks: 65 elements where the points move in
// groups of 4 bytes (thread x reads the row of group x, 65 words apart;
// f32 moves a point at a time, a word), 66 for 2-byte and 68 for 1-byte
// elements that move one at a time (sizes no multiple of the group).
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
instance bf16_odd = t_bf16<M = 1023, N = 512>
instance u8_odd = t_u8<M = 1024, N = 510>
`
	want := map[string]string{
		"f32_1k": "float kg_tile[64][65]", "bf16_1k": "__nv_bfloat16 kg_tile[64][65]", "u8_1k": "uint8_t kg_tile[64][65]",
		"bf16_odd": "__nv_bfloat16 kg_tile[64][66]", "u8_odd": "uint8_t kg_tile[64][68]",
	}
	groups := map[string]int{"bf16_1k": 2, "u8_1k": 4}
	tile := regexp.MustCompile(`__shared__ (\w+ kg_tile\[\d+\]\[\d+\])`)
	group := regexp.MustCompile(`KgVec<\w+, (\d)> kg_x = `)
	seen := 0
	for _, p := range plansFor(t, "transpose.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		if p.Launches[0].Template.Name() != "transpose" {
			t.Fatalf("%s: template %s, want transpose", p.Name, p.Launches[0].Template.Name())
		}
		src := Emit([]*lower.Plan{p})
		if m := tile.FindStringSubmatch(src); m == nil || m[1] != want[p.Name] {
			t.Errorf("%s: tile %v, want %s", p.Name, m, want[p.Name])
		}
		got := 0
		if m := group.FindStringSubmatch(src); m != nil {
			got = int(m[1][0] - '0')
		}
		if got != groups[p.Name] {
			t.Errorf("%s: groups of %d points, want %d", p.Name, got, groups[p.Name])
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("%d instances planned, want %d", seen, len(want))
	}
}

// TestEmulatedTransposeGroups: transposes of 2-byte and 1-byte elements,
// moved in groups of 4 bytes where the sizes and pointers allow (kg_vec)
// and a point at a time where they do not, against the interpreter: tiles
// past the edge, tiles that divide both extents (no point checked
// against the edge), a statement that computes beyond the staged load (a
// cast, a second input), a batch, a configuration of one step a pass
// (TILE 32, ROWS 16) and, for the symbolic kernel, odd sizes on the
// point path.
func TestEmulatedTransposeGroups(t *testing.T) {
	const spec = `
kernel t_bf16<M, N>(X: bf16[M, N]) -> (Y: bf16[N, M]) {
  Y[j, i] = X[i, j]
}
kernel t_i8_f32<B, M, N>(X: i8[B, M, N], Z: f32[B, N, M]) -> (Y: f32[B, N, M]) {
  Y[b, j, i] = f32(X[b, i, j]) * 0.5 + Z[b, j, i]
}
kernel t_f16_scale<M, N>(X: f16[M, N]) -> (Y: f16[N, M]) {
  Y[j, i] = X[i, j] * 2.0
}
instance bf16_edges = t_bf16<M = 70, N = 130>
instance bf16_whole = t_bf16<M = 128, N = 64>
instance i8_batch = t_i8_f32<B = 2, M = 68, N = 36>
instance f16_odd = t_f16_scale<M = 33, N = 65>
`
	var plans []*lower.Plan
	for _, p := range plansFor(t, "groups.kg", spec, sm80) {
		if p.Name == "bf16_whole" && strings.Contains(Emit([]*lower.Plan{p}), "< kg_Q") {
			t.Errorf("bf16_whole: tiles divide both extents, yet points are checked against the edge")
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, []map[string]int64{{"M": 6, "N": 10, "B": 1}, {"M": 67, "N": 5, "B": 3}})
	// One step a pass: TILE 32, ROWS 16, groups of 2.
	for _, p := range plansFor(t, "groups.kg", spec, sm80) {
		if p.Name != "bf16_edges" {
			continue
		}
		if _, err := lower.Override(p, lower.Config{"TILE": 32, "ROWS": 16}, sm80); err != nil {
			t.Fatal(err)
		}
		if src := Emit([]*lower.Plan{p}); !strings.Contains(src, "kg_s < 1;") {
			t.Errorf("TILE 32, ROWS 16: want one step a pass:\n%s", src)
		}
		emulatePlans(t, []*lower.Plan{p}, nil)
	}
}
