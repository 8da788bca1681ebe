package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
)

// TestIEEEDotOperands: on a tile backend, an f32 product whose operands
// are f32 loads or loads that f32 holds exactly (here f16) multiplies in
// an ieee dot, with the f32 dot's tiles by default (it took 32 x 32 x 8
// register blocks before); a product of two widened 16-bit operands stays
// a tensor-core dot of their type.
func TestIEEEDotOperands(t *testing.T) {
	prog, diags := frontend.CheckSource("dots.kg", `
kernel pv<M, N, K>(P: f32[M, K], V: f16[K, N]) -> (O: f32[M, N]) {
  O[m, n] = sum[k](P[m, k] * f32(V[k, n]))
}
kernel hh<M, N, K>(P: f16[M, K], V: f16[K, N]) -> (O: f32[M, N]) {
  O[m, n] = sum[k](f32(P[m, k]) * f32(V[k, n]))
}
instance pv_big = pv<M = 16384, N = 64, K = 1024>
instance hh_big = hh<M = 16384, N = 64, K = 1024>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for _, tc := range []struct {
		name          string
		ieee, dot     bool
		blockK, warps int64
	}{
		{"pv_big", true, false, 32, 8},
		{"hh_big", false, true, 64, 8},
	} {
		in := prog.Instance(tc.name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{Tiles: true})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		c := lower.MatchContraction(l)
		if c == nil {
			t.Fatalf("%s: %s is no contraction", tc.name, l.Template.Name())
		}
		if c.IEEEDot != tc.ieee || c.Dot != tc.dot {
			t.Errorf("%s: IEEEDot %v, Dot %v; want %v, %v", tc.name, c.IEEEDot, c.Dot, tc.ieee, tc.dot)
		}
		if l.Config["BLOCK_K"] != tc.blockK || l.Config["num_warps"] != tc.warps {
			t.Errorf("%s: BLOCK_K %d, num_warps %d; want %d, %d", tc.name, l.Config["BLOCK_K"], l.Config["num_warps"], tc.blockK, tc.warps)
		}
	}
}

// TestDotFillsGPU: a dot whose default tiles leave most of a big GPU idle
// takes smaller ones (rows halved to 32, then columns to 16) until it has
// at least half as many tiles as the H100 has multiprocessors (66), with
// 4 warps under 128 x 64; a product with enough tiles keeps its own.
func TestDotFillsGPU(t *testing.T) {
	prog, diags := frontend.CheckSource("fill.kg", `
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
instance thin = mm<M = 1332, N = 32, K = 160>
instance wide = mm<M = 256, N = 2048, K = 64>
instance many = mm<M = 2048, N = 2048, K = 512>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, want := range map[string]string{
		// 11 tiles of 128 x 32; 21, 42, then 84 of 32 x 16.
		"thin": "BLOCK_K=32, BLOCK_M=32, BLOCK_N=16, GROUP_M=8, num_stages=3, num_warps=4",
		// 32 tiles of 128 x 128, 64 of 64 x 128, 128 of 32 x 128.
		"wide": "BLOCK_K=32, BLOCK_M=32, BLOCK_N=128, GROUP_M=8, num_stages=3, num_warps=4",
		// 256 tiles of 128 x 128.
		"many": "BLOCK_K=32, BLOCK_M=128, BLOCK_N=128, GROUP_M=8, num_stages=3, num_warps=8",
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{Tiles: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Launches[0].Config.String(); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}
