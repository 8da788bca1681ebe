package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// sm80 are the sm_80 limits (the smallest of kgen's CUDA targets), written
// out from NVIDIA's tables rather than read from runtime's.
var sm80 = lower.Limits{MaxThreads: 1024, MaxSmem: 163 << 10, ThreadsPerSM: 2048, SmemPerSM: 164 << 10}

// TestDefaultsFit: every launch of every example, kernel or instance, runs
// its heuristic default within sm_80's limits and its template's own
// constraints.
func TestDefaultsFit(t *testing.T) {
	paths, _ := filepath.Glob("../../examples/*.kg")
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plansOf(t, path, string(text)) {
			for _, l := range p.Launches {
				if err := l.Check(sm80); err != nil {
					t.Errorf("%s: default does not fit: %v", path, err)
				}
			}
		}
	}
}

// TestOverrideChecks: --config values outside a template's space, or that
// break its constraints or the target's limits, are refused with a reason.
func TestOverrideChecks(t *testing.T) {
	const src = `kernel mm<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
`
	cases := []struct {
		config lower.Config
		want   string // in the error; "" for none
	}{
		{lower.Config{"BM": 256, "BN": 128, "WARPS_M": 4, "WARPS_N": 2}, ""},
		{lower.Config{"BM": 96}, "not in template matmul-mma's space"},
		{lower.Config{"BM": 64, "BN": 64, "WARPS_M": 4, "WARPS_N": 4}, "whole 8-element chunks"},
		{lower.Config{"BM": 64, "BN": 64, "WARPS_M": 1, "WARPS_N": 1}, ""},
		{lower.Config{"BM": 256, "BN": 256, "BK": 64, "STAGES": 5}, "bytes of shared memory a block"},
		{lower.Config{"BM": 128, "BN": 128, "BK": 64, "STAGES": 4, "BLOCKS_PER_SM": 2}, "do not fit on one multiprocessor"},
	}
	for _, c := range cases {
		p := plansOf(t, "mm.kg", src)[0]
		_, err := lower.Override(p, c.config, sm80)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.config, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.config, err, c.want)
		}
	}
}

// TestOverrideScoped: TEMPLATE.NAME keys reach only that template's
// launches, so one --config can tune a file that mixes templates.
func TestOverrideScoped(t *testing.T) {
	const src = `kernel both<M, N, K>(A: bf16[M, K], B: bf16[K, N], F: f32[M, K], G: f32[K, N]) -> (C: bf16[M, N], D: f32[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
  D[m, n] = sum[k](F[m, k] * G[k, n])
}
`
	p := plansOf(t, "both.kg", src)[0]
	if _, err := lower.Override(p, lower.Config{"matmul-simt.BK": 8, "matmul-mma.BK": 64}, sm80); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range p.Launches {
		got[l.Template.Name()] = l.Config["BK"]
	}
	if got["matmul-mma"] != 64 || got["matmul-simt"] != 8 {
		t.Errorf("BK by template %v, want matmul-mma 64, matmul-simt 8", got)
	}
	if _, err := lower.Override(p, lower.Config{"BK": 16}, sm80); err == nil || !strings.Contains(err.Error(), "not in template matmul-mma's space") {
		t.Errorf("plain BK=16 on both templates: %v", err)
	}
	if _, err := lower.Override(p, lower.Config{"matmul.BK": 16}, sm80); err == nil || !strings.Contains(err.Error(), `no template "matmul" (have: matmul-mma, matmul-simt,`) {
		t.Errorf("unknown template: %v", err)
	}
}

// TestOverrideColReduce: col-reduce's parameters are checked against its
// space, its whole-warp and shared-memory constraints and the target's
// threads per block; an accepted configuration reaches the launch.
func TestOverrideColReduce(t *testing.T) {
	const src = `kernel sq<R, D>(X: f64[R, D]) -> (Y: f64[D]) {
  Y[d] = sum[r](X[r, d] * X[r, d])
}
`
	cases := []struct {
		config lower.Config
		want   string // in the error; "" for none
	}{
		{lower.Config{"TX": 4, "TY": 64, "VEC": 2, "UNROLL": 8}, ""},
		{lower.Config{"col-reduce.TX": 1, "col-reduce.TY": 32}, ""},
		{lower.Config{"VEC": 16}, "not in template col-reduce's space"},
		{lower.Config{"TX": 4, "TY": 4}, "not a whole number of warps"},
		{lower.Config{"TX": 32, "TY": 32, "VEC": 8}, "bytes of shared memory; at most 49152"},
		{lower.Config{"TX": 256, "TY": 8, "VEC": 1}, "threads a block; the target allows 1024"},
	}
	for _, c := range cases {
		p := plansOf(t, "sq.kg", src)[0]
		_, err := lower.Override(p, c.config, sm80)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.config, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.config, err, c.want)
		case c.want == "":
			for k, v := range c.config {
				k = strings.TrimPrefix(k, "col-reduce.")
				if got := p.Launches[0].Config[k]; got != v {
					t.Errorf("%v: the launch has %s=%d", c.config, k, got)
				}
			}
		}
	}
}
