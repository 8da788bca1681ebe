package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPeakOf: a unit's ceiling is its fastest instruction's rate.
func TestPeakOf(t *testing.T) {
	peaks := []Peak{
		{Unit: "f32", Instr: "fma.rn.f32", TFLOPs: 64},
		{Unit: "bf16", Instr: "mma.sync.m16n8k16", TFLOPs: 650},
		{Unit: "bf16", Instr: "wgmma.m64n256k16", TFLOPs: 920},
		{Unit: "tf32", Instr: "mma.sync.m16n8k8", TFLOPs: 330},
	}
	for unit, want := range map[string]float64{"bf16": 920, "f32": 64, "tf32": 330, "f16": 0, "": 0} {
		if got := PeakOf(peaks, unit); got != want {
			t.Errorf("PeakOf(%q) = %g, want %g", unit, got, want)
		}
	}
}

// TestPeakProbesCompile compiles peak.cu as MeasurePeaks does, for sm_80
// and sm_90 with nvcc, and for sm_90a with wgmma by KGEN_NVCC_SM90A's
// (skipped when there is none and KGEN_REQUIRE_TOOLCHAINS is unset), and
// checks each probe of peakProbes that the build has: it is there, it
// does not spill, and its launch fills whole waves, perSM being a
// multiple of the blocks an SM holds at its registers and shared memory.
func TestPeakProbesCompile(t *testing.T) {
	n := requireNVCC(t)
	builds := []struct {
		nvcc *NVCC
		arch string
	}{{n, "sm_80"}, {n, "sm_90"}}
	if h, err := FindNVCC(os.Getenv("KGEN_NVCC_SM90A")); err == nil && h.SupportsTarget(Target{Backend: "cuda", Arch: "sm_90a"}) == nil {
		builds = append(builds, struct {
			nvcc *NVCC
			arch string
		}{h, "sm_90a"})
	} else if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
		t.Errorf("KGEN_REQUIRE_TOOLCHAINS=1 but no nvcc for sm_90a (set KGEN_NVCC_SM90A): %v", err)
	}
	for _, b := range builds {
		t.Run(b.arch, func(t *testing.T) {
			dir := t.TempDir()
			src := writeSource(t, dir, "peak.cu", string(peakSource))
			job := CompileJob{Source: src, Target: Target{Backend: "cuda", Arch: b.arch}, OutDir: dir}
			if b.arch == "sm_90a" {
				job.Defines = []string{"KGEN_PEAK_WGMMA"}
			}
			res, err := b.nvcc.Compile(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			facts := targetFacts[b.arch]
			built := map[string]FuncResources{}
			for _, r := range res.Resources {
				built[r.Name] = r
			}
			for _, p := range peakProbes {
				r, ok := built[p.kernel]
				if ok != (!p.wgmma || b.arch == "sm_90a") {
					t.Errorf("%s: built %v, want %v", p.kernel, ok, !ok)
					continue
				}
				if !ok {
					continue
				}
				if r.SpillStores > 0 || r.SpillLoads > 0 {
					t.Errorf("%s spills: %s", p.kernel, r)
				}
				// Blocks an SM holds: registers are given out 256 a warp.
				warps := p.threads / 32
				regsPerWarp := (r.Registers*32 + 255) / 256 * 256
				occ := min(facts.MaxThreadsPerSM/p.threads, facts.RegistersPerSM/(regsPerWarp*warps), facts.MaxBlocksPerSM)
				if smem := p.smem + int(r.SharedBytes); smem > 0 {
					occ = min(occ, facts.SharedPerSM/(smem+1024))
				}
				if occ == 0 || p.perSM%occ != 0 {
					t.Errorf("%s: %d registers, an SM holds %d blocks, which does not divide perSM %d: the last wave is partial", p.kernel, r.Registers, occ, p.perSM)
				}
			}
		})
	}
}

// TestBuildPeaksCache: the probes are compiled once per source, nvcc and
// architecture; a second build finds the first (the same file, untouched),
// and another architecture is another build.
func TestBuildPeaksCache(t *testing.T) {
	n := requireNVCC(t)
	cache := t.TempDir()
	first, err := buildPeaks(context.Background(), n, "sm_80", false, cache)
	if err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := buildPeaks(context.Background(), n, "sm_80", false, cache)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(again)
	if err != nil || again != first || !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("second build %s (%v), want the first's %s untouched", again, err, first)
	}
	ptx, err := buildPeaks(context.Background(), n, "sm_90", true, cache)
	if err != nil || filepath.Dir(ptx) == filepath.Dir(first) || filepath.Ext(ptx) != ".ptx" {
		t.Errorf("sm_90 PTX at %s (%v): want another folder than %s's", ptx, err, first)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "build-peak-*")); len(left) > 0 {
		t.Errorf("temporary folders left: %v", left)
	}
}
