package runtime

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// Peak is the dense rate of one of the GPU's arithmetic units, as one of
// kgen's probe kernels (peak/peak.cu) measured it with the timing
// protocol: the ceiling that compute-bound kernels are judged against, as
// the device-to-device copy is for memory-bound ones.
type Peak struct {
	// Unit is what the unit multiplies: "bf16", "f16", "tf32" (f32
	// rounded to tf32, on tensor cores) or "f32" (fused multiply-adds).
	Unit   string  `json:"unit"`
	Instr  string  `json:"instr"`  // the instruction the probe issues
	Kernel string  `json:"kernel"` // the probe
	Flops  float64 `json:"flops"`  // floating-point operations a launch
	Time   Timing  `json:"time"`
	TFLOPs float64 `json:"tflops"` // at the median time
}

func (p Peak) String() string {
	// The slower time (p80) is the lower rate.
	return fmt.Sprintf("%s %.0f TFLOP/s (%.0f-%.0f, %s)", p.Unit, p.TFLOPs, p.Flops/p.Time.P80US/1e6, p.Flops/p.Time.P20US/1e6, p.Instr)
}

//go:embed peak/peak.cu
var peakSource []byte

// A peakProbe is one kernel of peak.cu and how it is launched: blocks of
// threads, perSM blocks for each SM (a multiple of every occupancy the
// probe can have, so that the last wave is as full as the others), each
// block doing blockFlops a loop iteration.
type peakProbe struct {
	kernel, unit, instr string
	wgmma               bool // sm_90a only
	threads, perSM      int
	smem                int
	blockFlops          float64
	iters               int // about 2 ms a launch on an H100
}

var peakProbes = []peakProbe{
	// 8 chains of 16 multiply-adds a thread and iteration.
	{kernel: "kg_peak_ffma", unit: "f32", instr: "fma.rn.f32", threads: 256, perSM: 24, blockFlops: 256 * 8 * 16 * 2, iters: 600},
	// 8 warps, each 8 products an iteration of 2 m n k operations.
	{kernel: "kg_peak_mma_bf16", unit: "bf16", instr: "mma.sync.m16n8k16", threads: 256, perSM: 24, blockFlops: 8 * 8 * (2 * 16 * 8 * 16), iters: 1500},
	{kernel: "kg_peak_mma_f16", unit: "f16", instr: "mma.sync.m16n8k16", threads: 256, perSM: 24, blockFlops: 8 * 8 * (2 * 16 * 8 * 16), iters: 1500},
	{kernel: "kg_peak_mma_tf32", unit: "tf32", instr: "mma.sync.m16n8k8", threads: 256, perSM: 24, blockFlops: 8 * 8 * (2 * 16 * 8 * 8), iters: 1500},
	// One warpgroup, 4 products an iteration of 2 m n k operations; the
	// tiles (40 KiB) and the 1 KiB the swizzle's alignment may take.
	{kernel: "kg_peak_wgmma_bf16", unit: "bf16", instr: "wgmma.m64n256k16", wgmma: true, threads: 128, perSM: 12, smem: (64+256)*128 + 1024, blockFlops: 4 * (2 * 64 * 256 * 16), iters: 500},
	{kernel: "kg_peak_wgmma_f16", unit: "f16", instr: "wgmma.m64n256k16", wgmma: true, threads: 128, perSM: 12, smem: (64+256)*128 + 1024, blockFlops: 4 * (2 * 64 * 256 * 16), iters: 500},
	{kernel: "kg_peak_wgmma_tf32", unit: "tf32", instr: "wgmma.m64n256k8", wgmma: true, threads: 128, perSM: 12, smem: (64+256)*128 + 1024, blockFlops: 4 * (2 * 64 * 256 * 8), iters: 500},
}

// MeasurePeaks compiles the probes with nvcc for r's GPU, unless cacheDir
// (DefaultRunnerCacheDir when "") has them from the same source, nvcc and
// architecture, and times each on r: f32 multiply-adds and mma.sync on
// every GPU of compute capability 8.0 or later, wgmma too on a 9.0 one
// when nvcc can build sm_90a (note says so when it cannot: the tensor
// cores' peaks are then mma.sync's, below what they can do). A unit's
// ceiling is its fastest instruction's rate (PeakOf).
func MeasurePeaks(ctx context.Context, nvcc *NVCC, r *Runner, cacheDir string) (peaks []Peak, note string, err error) {
	info, err := r.Info(ctx)
	if err != nil {
		return nil, "", err
	}
	if info.CCMajor < 8 {
		return nil, "", fmt.Errorf("the matrix probes need compute capability 8.0 or later; %s is %d.%d", info.Name, info.CCMajor, info.CCMinor)
	}
	// The newest architecture kgen knows that the GPU runs: its own
	// (sm_90a for wgmma), else sm_80's cubin on 8.x, else the PTX, which
	// the driver compiles for a newer GPU.
	arch, ptx := "sm_80", info.CCMajor > 9
	if info.CCMajor == 9 {
		arch = "sm_90"
		if info.CCMinor == 0 {
			if err := nvcc.SupportsTarget(Target{Backend: "cuda", Arch: "sm_90a"}); err == nil {
				arch = "sm_90a"
			} else {
				note = fmt.Sprintf("wgmma not measured (%v): the tensor cores' peaks are mma.sync's", err)
			}
		}
	}
	bin, err := buildPeaks(ctx, nvcc, arch, ptx, cacheDir)
	if err != nil {
		return nil, "", err
	}
	mod, err := r.Load(ctx, bin)
	if err != nil {
		return nil, "", err
	}
	defer r.Unload(ctx, mod)
	out, err := r.Alloc(ctx, 4)
	if err != nil {
		return nil, "", err
	}
	defer r.Free(ctx, out)
	for _, p := range peakProbes {
		if p.wgmma && arch != "sm_90a" {
			continue
		}
		fn, err := r.Func(ctx, mod, p.kernel)
		if err != nil {
			return nil, "", err
		}
		blocks := p.perSM * info.SMs
		spec := LaunchSpec{Func: fn, Grid: [3]int{blocks, 1, 1}, Block: [3]int{p.threads, 1, 1}, Smem: p.smem,
			Args: []Arg{BufArg(out), I32(int32(p.iters))}}
		tm, err := r.Time(ctx, TimeSpec{Launches: []LaunchSpec{spec}, FlushBytes: -1})
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", p.kernel, err)
		}
		flops := p.blockFlops * float64(blocks) * float64(p.iters)
		peaks = append(peaks, Peak{Unit: p.unit, Instr: p.instr, Kernel: p.kernel, Flops: flops, Time: tm, TFLOPs: tm.TFLOPs(flops)})
	}
	return peaks, note, nil
}

// buildPeaks returns the probes compiled for arch (their PTX when ptx is
// set), from cacheDir when a build of the same source by the same nvcc is
// there, else compiled in a temporary folder renamed into place, as
// BuildRunner does.
func buildPeaks(ctx context.Context, nvcc *NVCC, arch string, ptx bool, cacheDir string) (string, error) {
	cacheDir, err := runnerCache(cacheDir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", peakSource, nvcc.Fingerprint(), arch)
	dir := filepath.Join(cacheDir, "kgen-peak-"+hex.EncodeToString(h.Sum(nil))[:20])
	name := "peak." + arch + ".cubin"
	if ptx {
		name = "peak." + arch + ".ptx"
	}
	bin := filepath.Join(dir, name)
	if fileExistsAt(bin) {
		return bin, nil
	}
	tmp, src, err := stageBuild(cacheDir, "build-peak-", "peak.cu", peakSource)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	job := CompileJob{Source: src, Target: Target{Backend: "cuda", Arch: arch}, OutDir: tmp}
	if arch == "sm_90a" {
		job.Defines = []string{"KGEN_PEAK_WGMMA"}
	}
	if _, err := nvcc.Compile(ctx, job); err != nil {
		return "", err
	}
	// Another process may have put the same build there first: both are
	// the same, and either stays.
	if err := os.Rename(tmp, dir); err != nil && !fileExistsAt(bin) {
		return "", err
	}
	return bin, nil
}

func fileExistsAt(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// PeakOf is unit's ceiling among peaks: its fastest instruction's rate,
// 0 when none was measured.
func PeakOf(peaks []Peak, unit string) float64 {
	best := 0.0
	for _, p := range peaks {
		if p.Unit == unit {
			best = max(best, p.TFLOPs)
		}
	}
	return best
}
