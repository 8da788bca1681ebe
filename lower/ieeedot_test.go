package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
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

// TestDotChecks: Triton dot configurations whose accumulator or operand
// pipeline cannot fit are refused before anything compiles, with the
// figures computed by hand: f32 tiles of 64 x 128 x 128 at 4 stages take
// 3 buffers of (64 x 128 + 128 x 128) x 4 bytes = 294912 (over 232448);
// 128 x 256 x 64 at 3 stages 2 buffers of 98304 = 196608, which fits; a
// 256 x 256 accumulator over 2 warps takes 1024 registers a thread.
func TestDotChecks(t *testing.T) {
	prog, diags := frontend.CheckSource("fill.kg", `
kernel mm<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel pv<M, N, K>(P: f32[M, K], V: f16[K, N]) -> (O: f32[M, N]) {
  O[m, n] = sum[k](P[m, k] * f32(V[k, n]))
}
instance f = mm<M = 4096, N = 4096, K = 4096>
instance h = pv<M = 4096, N = 4096, K = 4096>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	tgt, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	lim := tgt.Limits()
	if lim.MaxSmem != 232448 {
		t.Fatalf("triton:sm_90: %d bytes of shared memory a block, want 232448", lim.MaxSmem)
	}
	for _, tc := range []struct {
		inst string
		cfg  lower.Config
		smem int64
		ok   bool
	}{
		{"f", lower.Config{"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "num_stages": 4, "num_warps": 8}, 294912, false},
		{"f", lower.Config{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3, "num_warps": 8}, 196608, true},
		{"f", lower.Config{"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32, "num_stages": 2, "num_warps": 2}, 65536, false},
		{"f", lower.Config{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "num_stages": 1, "num_warps": 4}, 49152, false},
		// A of f32 and B of f16: 3 x (128 x 64 x 4 + 64 x 256 x 2).
		{"h", lower.Config{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 4, "num_warps": 8}, 196608, true},
	} {
		in := prog.Instance(tc.inst)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
		if err != nil {
			t.Fatal(err)
		}
		cfg := lower.Config{"GROUP_M": 8}
		for k, v := range tc.cfg {
			cfg[k] = v
		}
		_, err = lower.Override(p, cfg, lim)
		if got := lower.TileDotSmem(p.Launches[0]); got != tc.smem {
			t.Errorf("%s %v: %d bytes, want %d", tc.inst, tc.cfg, got, tc.smem)
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s %v: %v, want accepted %v", tc.inst, tc.cfg, err, tc.ok)
		}
	}
}
