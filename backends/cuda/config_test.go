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
	if _, err := lower.Override(p, lower.Config{"matmul.BK": 16}, sm80); err == nil || !strings.Contains(err.Error(), `no template "matmul" (have: matmul-wgmma, matmul-mma, matmul-simt,`) {
		t.Errorf("unknown template: %v", err)
	}
}

// sm90a are the sm_90a limits (NVIDIA's tables: 227 KiB of shared memory
// a block), with wgmma.
var sm90a = lower.Limits{MaxThreads: 1024, MaxSmem: 227 << 10, ThreadsPerSM: 2048, SmemPerSM: 228 << 10, Wgmma: true}

// TestWgmmaChosen: 16-bit products take matmul-wgmma only on a target
// with wgmma; f32 products never do. On sm_90a every example's default
// fits, and --config values that break the tile's constraints are refused.
func TestWgmmaChosen(t *testing.T) {
	const src = `kernel mm<M, N, K>(A: bf16[M, K], B: bf16[K, N], F: f32[M, K], G: f32[K, N]) -> (C: bf16[M, N], D: f32[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
  D[m, n] = sum[k](F[m, k] * G[k, n])
}
`
	for _, c := range []struct {
		lim  lower.Limits
		want []string
	}{{sm80, []string{"matmul-mma", "matmul-simt"}}, {sm90a, []string{"matmul-wgmma", "matmul-simt"}}} {
		var got []string
		for _, l := range plansFor(t, "mm.kg", src, c.lim)[0].Launches {
			got = append(got, l.Template.Name())
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("wgmma=%t: templates %v, want %v", c.lim.Wgmma, got, c.want)
		}
	}
	paths, _ := filepath.Glob("../../examples/*.kg")
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plansFor(t, path, string(text), sm90a) {
			for _, l := range p.Launches {
				if err := l.Check(sm90a); err != nil {
					t.Errorf("%s: default does not fit sm_90a: %v", path, err)
				}
			}
		}
	}
	for _, c := range []struct {
		config lower.Config
		want   string
	}{
		{lower.Config{"matmul-wgmma.BM": 256, "matmul-wgmma.BN": 128}, ""},
		{lower.Config{"matmul-wgmma.BM": 256, "matmul-wgmma.BN": 256}, "do not fit in registers"},
		{lower.Config{"matmul-wgmma.BM": 64, "matmul-wgmma.WGS": 2}, "multiple of 64 rows"},
		{lower.Config{"matmul-wgmma.BN": 256, "matmul-wgmma.STAGES": 5}, "bytes of shared memory a block"},
	} {
		p := plansFor(t, "mm.kg", src, sm90a)[0]
		_, err := lower.Override(p, c.config, sm90a)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.config, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.config, err, c.want)
		}
	}
}
