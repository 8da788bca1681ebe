package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// hipArchs are the HIP targets: AMD GPUs that hipcc compiles for, and
// "nvidia", HIP sources compiled by nvcc behind kgen's compatibility
// prelude for the NVIDIA GPU the runner drives (HIPNvidiaArch). The AMD
// figures are from AMD's CDNA2 (MI200) and CDNA (MI100) instruction set
// references and the RDNA2 (gfx1030) ISA guide: LDS is 64 KiB per
// workgroup on all three, per compute unit on CDNA and per workgroup
// processor (the default WGP mode) on RDNA2; a SIMD holds 8 (gfx90a), 10
// (gfx908) or 16 (gfx1030) waves, a CU 4 SIMDs (an RDNA2 WGP 4 SIMD32s);
// registers are 512 VGPRs a lane a SIMD (with the AGPRs on CDNA), so a
// thread addresses at most 512 (256 arch VGPRs and 256 AGPRs) on CDNA, 256
// on RDNA2.
var hipArchs = map[string]TargetFacts{
	"gfx90a": {
		Arch: "gfx90a", WarpSize: 64, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 4 * 8 * 64, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 64 << 10, MaxSharedPerBlock: 64 << 10, SharedPerSM: 64 << 10,
		RegistersPerSM: 4 * 512 * 64, MaxRegistersPerThread: 512,
		MFMA: true,
	},
	"gfx908": {
		Arch: "gfx908", WarpSize: 64, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 4 * 10 * 64, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 64 << 10, MaxSharedPerBlock: 64 << 10, SharedPerSM: 64 << 10,
		RegistersPerSM: 4 * 512 * 64, MaxRegistersPerThread: 512,
	},
	"gfx1030": {
		Arch: "gfx1030", WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 4 * 16 * 32, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 64 << 10, MaxSharedPerBlock: 64 << 10, SharedPerSM: 128 << 10,
		RegistersPerSM: 4 * 1024 * 32, MaxRegistersPerThread: 256,
	},
	// The H100's limits (sm_90) with none of CUDA's own instructions, and
	// AMD's 64 KiB of LDS a block, so that plans stay within what HIP's
	// AMD targets allow.
	"nvidia": {
		Arch: "nvidia", CCMajor: 9, CCMinor: 0, MinNVCC: [2]int{11, 8},
		WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 48 << 10, MaxSharedPerBlock: 64 << 10, SharedPerSM: 228 << 10,
		RegistersPerSM: 64 << 10, MaxRegistersPerThread: 255,
	},
}

// HIPNvidiaArch is the CUDA architecture that hip:nvidia's sources are
// compiled for: the H100's.
const HIPNvidiaArch = "sm_90"

func init() { backendArchs["hip"] = hipArchs }

// HIPCC is a hipcc found on this machine, run for AMD GPUs
// (HIP_PLATFORM=amd: Debian's hipcc otherwise picks NVIDIA's platform when
// it sees an nvcc).
type HIPCC struct {
	Path    string // absolute path of the hipcc that is run
	Version string // HIP's version, e.g. "5.2.21153-0"
	Clang   string // the clang it drives, e.g. "Debian clang version 15.0.6"
	// Cache, when set, keeps compiles' outputs for the next compile of
	// the same source (see CompileCache).
	Cache *CompileCache
}

// Fingerprint identifies this hipcc for cache keys: its path, HIP's and
// clang's versions, and the size and modification time of the file that
// is run.
func (h *HIPCC) Fingerprint() string {
	return fmt.Sprintf("hipcc %s (%s) %s", h.Version, h.Clang, fileIdentity(h.Path))
}

// hipccFallbacks are the places hipcc is looked for after the flag and
// PATH: ROCm's default install. Tests replace it.
var hipccFallbacks = []string{"/opt/rocm/bin/hipcc"}

const hipccInstallHint = `install HIP (Debian: apt-get install hipcc rocm-device-libs libamdhip64-dev; others: ROCm, https://rocm.docs.amd.com), or point kgen at a hipcc with --hipcc PATH`

// FindHIPCC finds hipcc and records its version: flagPath (--hipcc: hipcc
// itself or a ROCm directory holding bin/hipcc) when set, else PATH, else
// /opt/rocm/bin/hipcc.
func FindHIPCC(flagPath string) (*HIPCC, error) {
	if flagPath != "" {
		path := flagPath
		if st, err := os.Stat(flagPath); err != nil {
			return nil, fmt.Errorf("--hipcc %s: no such file; %s", flagPath, hipccInstallHint)
		} else if st.IsDir() {
			path = filepath.Join(flagPath, "bin", "hipcc")
		}
		if !isExecutable(path) {
			return nil, fmt.Errorf("--hipcc %s: %s is not an executable hipcc; %s", flagPath, path, hipccInstallHint)
		}
		return probeHIPCC(path)
	}
	if p, err := exec.LookPath("hipcc"); err == nil {
		return probeHIPCC(p)
	}
	for _, c := range hipccFallbacks {
		if isExecutable(c) {
			return probeHIPCC(c)
		}
	}
	return nil, fmt.Errorf("hipcc not found (looked on PATH and in %s); %s", strings.Join(hipccFallbacks, ", "), hipccInstallHint)
}

var (
	hipVersionRE   = regexp.MustCompile(`HIP version: (\S+)`)
	hipClangLineRE = regexp.MustCompile(`(?m)^.*clang version .*$`)
)

// hipEnv is the environment hipcc runs in: for AMD GPUs.
var hipEnv = []string{"HIP_PLATFORM=amd"}

func probeHIPCC(path string) (*HIPCC, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := runToolEnv(ctx, hipEnv, path, "--version")
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	text := out.Stdout + out.Stderr
	m := hipVersionRE.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("%s --version: no \"HIP version\" in %q", path, lastLines(text, 3))
	}
	return &HIPCC{Path: path, Version: m[1], Clang: strings.TrimSpace(hipClangLineRE.FindString(text))}, nil
}

// HIPCompileJob is one HIP source to compile for one AMD target.
type HIPCompileJob struct {
	Source string // path of the .hip file
	Target Target // hip:gfx90a, ...
	OutDir string // where the code object goes; created if missing
	// Scratch: Source lives in a directory that goes away (as
	// CompileJob.Scratch).
	Scratch bool
}

// HIPCompileResult is what a successful compile produced.
type HIPCompileResult struct {
	CodeObject string // OutDir/BASE.ARCH.hsaco: a clang offload bundle of the GPU's code object
	Resources  []HIPResources
	Warnings   []ToolMessage
	Log        string
	Cached     bool // copied from the compile cache: hipcc did not run
}

// HIPCCError is a compile that failed: hipcc's diagnostics and its log.
type HIPCCError struct {
	Source   string
	Target   Target
	Messages []ToolMessage // errors only
	Log      string
	Err      error
}

func (e *HIPCCError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hipcc could not compile %s for %s", e.Source, e.Target)
	for _, m := range e.Messages {
		b.WriteString("\n" + m.String())
	}
	if len(e.Messages) == 0 {
		fmt.Fprintf(&b, ": %v", e.Err)
		if tail := lastLines(e.Log, 10); tail != "" && !strings.Contains(e.Err.Error(), tail) {
			b.WriteString("\n" + tail)
		}
	}
	return b.String()
}

func (e *HIPCCError) Unwrap() error { return e.Err }

// Compile compiles job.Source with -O3 to a code object for job.Target's
// GPU (--genco --offload-arch=ARCH), asking for the kernels' resource
// usage. The code object is written to a temporary file and renamed into
// place only once it exists and is not empty: hipcc is known to exit 0 on
// failed builds in some setups.
func (h *HIPCC) Compile(ctx context.Context, job HIPCompileJob) (*HIPCompileResult, error) {
	if _, ok := hipArchs[job.Target.Arch]; !ok || job.Target.Backend != "hip" || job.Target.Arch == "nvidia" {
		return nil, fmt.Errorf("compile %s: hipcc compiles for the AMD HIP targets, not %s", job.Source, job.Target)
	}
	if _, err := os.Stat(job.Source); err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("compile %s: %w", job.Source, err)
	}
	base := strings.TrimSuffix(filepath.Base(job.Source), filepath.Ext(job.Source)) + "." + job.Target.Arch
	out := filepath.Join(job.OutDir, base+".hsaco")
	flags := []string{"--genco", "--offload-arch=" + job.Target.Arch, "-O3", "-std=c++17", "-Rpass-analysis=kernel-resource-usage"}
	key, src := "", job.Source
	if h.Cache != nil {
		if job.Scratch {
			if staged, err := h.Cache.stage(job.Source); err == nil {
				src = staged
			}
		}
		if k, err := compileKey(h.Fingerprint(), append(slices.Clone(hipEnv), flags...), src); err == nil {
			key = k
			if logs, ok := h.Cache.fetch(key, []string{out}, 1); ok {
				return h.result(out, logs[0], true), nil
			}
		}
	}
	tmp, err := os.CreateTemp(job.OutDir, "."+base+".*.tmp")
	if err != nil {
		return nil, err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // a no-op once renamed
	args := append(slices.Clone(flags), "-o", tmpName, src)
	o, err := runToolEnv(ctx, hipEnv, h.Path, args...)
	log := o.Stderr + o.Stdout
	fail := func(err error) (*HIPCompileResult, error) {
		var errs []ToolMessage
		for _, m := range ParseCompilerOutput(log) {
			if m.Severity == "error" || m.Severity == "fatal" {
				errs = append(errs, m)
			}
		}
		return nil, &HIPCCError{Source: job.Source, Target: job.Target, Messages: errs, Log: log, Err: err}
	}
	if err != nil {
		return fail(err)
	}
	if st, err := os.Stat(tmpName); err != nil || st.Size() == 0 {
		return fail(errors.New("hipcc exited successfully but wrote no code object"))
	}
	if err := os.Rename(tmpName, out); err != nil {
		return nil, err
	}
	if key != "" {
		h.Cache.store(key, []string{out}, []string{log})
	}
	return h.result(out, log, false), nil
}

// result is a successful compile's result: the code object out and what
// hipcc printed, log.
func (h *HIPCC) result(out, log string, cached bool) *HIPCompileResult {
	res := &HIPCompileResult{CodeObject: out, Resources: ParseHIPResourceUsage(log), Log: log, Cached: cached}
	for _, m := range ParseCompilerOutput(log) {
		if m.Severity == "warning" {
			res.Warnings = append(res.Warnings, m)
		}
	}
	return res
}

// CompileAll compiles jobs concurrently, at most parallel at a time
// (runtime.NumCPU() when parallel <= 0). results[i] and errs[i] belong to
// jobs[i]; exactly one of them is nil.
func (h *HIPCC) CompileAll(ctx context.Context, jobs []HIPCompileJob, parallel int) ([]*HIPCompileResult, []error) {
	return compileAll(ctx, jobs, parallel, h.Compile, func(j HIPCompileJob) string { return j.Source + " for " + j.Target.String() })
}

// HIPResources is one kernel's resource usage as the AMDGPU backend
// reports it (-Rpass-analysis=kernel-resource-usage).
type HIPResources struct {
	Name         string
	SGPRs, VGPRs int
	AGPRs        int // accumulation registers (CDNA's matrix cores)
	ScratchBytes int // private memory a lane: spills and stack
	Occupancy    int // waves a SIMD
	SGPRSpill    int
	VGPRSpill    int
	LDSBytes     int // static LDS a block
}

func (r HIPResources) String() string {
	s := fmt.Sprintf("%d VGPRs, %d AGPRs, %d SGPRs, %d bytes LDS, occupancy %d waves/SIMD", r.VGPRs, r.AGPRs, r.SGPRs, r.LDSBytes, r.Occupancy)
	if r.ScratchBytes > 0 || r.VGPRSpill > 0 || r.SGPRSpill > 0 {
		s += fmt.Sprintf(", %d bytes scratch a lane, %d VGPRs and %d SGPRs spilled", r.ScratchBytes, r.VGPRSpill, r.SGPRSpill)
	}
	return s
}

// Spills reports whether the kernel spills registers.
func (r HIPResources) Spills() bool { return r.VGPRSpill > 0 || r.SGPRSpill > 0 }

var hipRemarkRE = regexp.MustCompile(`remark:\s+(.+?):\s+(\S+)\s+\[-Rpass-analysis=kernel-resource-usage\]`)

// ParseHIPResourceUsage reads the kernel-resource-usage remarks: a
// "Function Name: NAME" remark, then one remark a figure.
func ParseHIPResourceUsage(log string) []HIPResources {
	var out []HIPResources
	for _, line := range strings.Split(log, "\n") {
		m := hipRemarkRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, val := m[1], m[2]
		if key == "Function Name" {
			out = append(out, HIPResources{Name: val})
			continue
		}
		if len(out) == 0 {
			continue
		}
		r := &out[len(out)-1]
		n, err := strconv.Atoi(val)
		if err != nil {
			continue
		}
		switch key {
		case "SGPRs":
			r.SGPRs = n
		case "VGPRs":
			r.VGPRs = n
		case "AGPRs":
			r.AGPRs = n
		case "ScratchSize [bytes/lane]":
			r.ScratchBytes = n
		case "Occupancy [waves/SIMD]":
			r.Occupancy = n
		case "SGPRs Spill":
			r.SGPRSpill = n
		case "VGPRs Spill":
			r.VGPRSpill = n
		case "LDS Size [bytes/block]":
			r.LDSBytes = n
		}
	}
	return out
}
